#include "search/snippet.h"

namespace issuescope::search {
namespace {

// Comments searched for a match when the body has none (bounds the cost of long threads).
constexpr int kMaxCommentsForSnippet = 50;

// No SNIPPET_BACKGROUND_MODEL (it looks up the frequency of every word of the text in every
// shard: most of a ranked query's time at 20 hits) and no SNIPPET_EXHAUSTIVE (stop at the first
// good enough passage): the passage is chosen by the query's terms alone.
constexpr unsigned kSnippetFlags = Xapian::MSet::SNIPPET_CJK_NGRAM;

std::string Highlight(const Xapian::MSet& mset, const std::string& text, size_t length,
                      unsigned extra_flags) {
  return mset.snippet(text, length, Xapian::Stem("english"), kSnippetFlags | extra_flags,
                      "<mark>", "</mark>", "…");
}

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

std::string HtmlEscape(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string LeadingExcerpt(absl::string_view text, size_t length) {
  if (text.size() <= length) return HtmlEscape(text);
  size_t cut = length;
  while (cut > 0 && IsContinuationByte(text[cut])) --cut;
  // Prefer to cut at a space in the last quarter, so words stay whole.
  for (size_t i = cut; i > length * 3 / 4; --i) {
    if (text[i] == ' ' || text[i] == '\n') {
      cut = i;
      break;
    }
  }
  return HtmlEscape(text.substr(0, cut)) + "…";
}

std::string MakeSnippet(const Xapian::MSet& mset, bool has_text,
                        const v1::IssueWithComments& issue, size_t length) {
  const std::string& body = issue.issue().body();
  if (!has_text) return LeadingExcerpt(body, length);
  std::string snippet =
      Highlight(mset, body, length, Xapian::MSet::SNIPPET_EMPTY_WITHOUT_MATCH);
  if (!snippet.empty()) return snippet;
  int checked = 0;
  for (const v1::Comment& comment : issue.comments()) {
    if (comment.system() || ++checked > kMaxCommentsForSnippet) continue;
    snippet = Highlight(mset, comment.body(), length, Xapian::MSet::SNIPPET_EMPTY_WITHOUT_MATCH);
    if (!snippet.empty()) return snippet;
  }
  return LeadingExcerpt(body, length);
}

}  // namespace issuescope::search

#include "search/snippet.h"

#include "absl/strings/ascii.h"

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
  // A stemmer per thread (Xapian::Stem keeps state while stemming; building one per call cost
  // more than some snippets).
  thread_local const Xapian::Stem stemmer("english");
  return mset.snippet(text, length, stemmer, kSnippetFlags | extra_flags, "<mark>", "</mark>",
                      "…");
}

// MayMatch says whether `text` contains one of `roots` (case-insensitively for ASCII); true
// when there are no roots to check.
bool MayMatch(const std::string& text, const std::vector<std::string>& roots) {
  if (roots.empty()) return true;
  const std::string lower = absl::AsciiStrToLower(text);
  for (const std::string& root : roots) {
    if (lower.find(root) != std::string::npos) return true;
  }
  return false;
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

std::vector<std::string> SnippetRoots(const Xapian::Query& query) {
  std::vector<std::string> roots;
  for (Xapian::TermIterator t = query.get_unique_terms_begin();
       t != query.get_unique_terms_end(); ++t) {
    std::string term = *t;
    if (term.empty()) continue;
    if (term[0] == 'Z') {
      term.erase(0, 1);
      if (!term.empty() && term.back() == 'i') term.pop_back();
    } else if (term[0] >= 'A' && term[0] <= 'Z') {
      continue;  // a prefixed term: a qualifier or a title-only word, not body or comment text
    }
    if (term.empty()) return {};  // a root matching everything: no pre-check
    roots.push_back(std::move(term));
  }
  // A wildcard is not among the terms; its pattern is not known here, so check nothing.
  if (query.get_description().find("WILDCARD") != std::string::npos) return {};
  return roots;
}

std::string MakeSnippet(const Xapian::MSet& mset, bool has_text,
                        const v1::IssueWithComments& issue, size_t length,
                        const std::vector<std::string>& roots) {
  const std::string& body = issue.issue().body();
  if (!has_text) return LeadingExcerpt(body, length);
  std::string snippet;
  if (MayMatch(body, roots)) {
    snippet = Highlight(mset, body, length, Xapian::MSet::SNIPPET_EMPTY_WITHOUT_MATCH);
    if (!snippet.empty()) return snippet;
  }
  int checked = 0;
  for (const v1::Comment& comment : issue.comments()) {
    if (comment.system() || ++checked > kMaxCommentsForSnippet) continue;
    if (!MayMatch(comment.body(), roots)) continue;
    snippet = Highlight(mset, comment.body(), length, Xapian::MSet::SNIPPET_EMPTY_WITHOUT_MATCH);
    if (!snippet.empty()) return snippet;
  }
  return LeadingExcerpt(body, length);
}

}  // namespace issuescope::search

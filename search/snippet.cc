#include "search/snippet.h"

#include <algorithm>

#include "absl/strings/ascii.h"

namespace issuescope::search {
namespace {

// Comments searched for a match when the body has none (bounds the cost of long threads).
constexpr int kMaxCommentsForSnippet = 50;

// No SNIPPET_BACKGROUND_MODEL (it looks up the frequency of every word of the text in every
// shard: most of a ranked query's time at 20 hits) and no SNIPPET_EXHAUSTIVE (stop at the first
// good enough passage): the passage is chosen by the query's terms alone.
constexpr unsigned kSnippetFlags = Xapian::MSet::SNIPPET_CJK_NGRAM;

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

std::string Highlight(const Xapian::MSet& mset, const std::string& text, size_t length,
                      unsigned extra_flags) {
  // A stemmer per thread (Xapian::Stem keeps state while stemming; building one per call cost
  // more than some snippets).
  thread_local const Xapian::Stem stemmer("english");
  return mset.snippet(text, length, stemmer, kSnippetFlags | extra_flags, "<mark>", "</mark>",
                      "…");
}

// Windows tried around occurrences of a root before the whole text is highlighted.
constexpr int kWindowAttempts = 3;

// IsWordByte says whether an ASCII byte belongs to a word as Xapian's term generator splits
// text ("nccl_debug" is one word, so "nccl" inside it is no match).
bool IsWordByte(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// RootAt returns the offset of the first occurrence at or after `from` of any of `roots` in
// `lower` (the text lowercased) that starts a word and is not joined to more by '_' (ASCII
// roots; a CJK root may start anywhere), 0 when there are no roots to check, npos when none
// occurs.
size_t RootAt(const std::string& lower, const std::vector<std::string>& roots, size_t from) {
  if (roots.empty()) return 0;
  size_t best = std::string::npos;
  for (const std::string& root : roots) {
    const bool ascii = (static_cast<unsigned char>(root[0]) & 0x80) == 0;
    for (size_t at = lower.find(root, from); at != std::string::npos && at < best;
         at = lower.find(root, at + 1)) {
      const size_t end = at + root.size();
      if (!ascii || ((at == 0 || !IsWordByte(lower[at - 1])) &&
                     (end >= lower.size() || lower[end] != '_'))) {
        best = at;
        break;
      }
    }
  }
  return best;
}

// Around returns the part of `text` from about `before` bytes before `at` to about `after`
// bytes after it, cut at UTF-8 character boundaries, and whether it was cut at each end.
std::string Around(const std::string& text, size_t at, size_t before, size_t after,
                   bool* cut_start, bool* cut_end) {
  size_t begin = at > before ? at - before : 0;
  size_t end = std::min(text.size(), at + after);
  while (begin > 0 && IsContinuationByte(text[begin])) --begin;
  while (end < text.size() && IsContinuationByte(text[end])) ++end;
  *cut_start = begin > 0;
  *cut_end = end < text.size();
  return text.substr(begin, end - begin);
}

// Passage highlights a match in `text` (`lower` is it lowercased), looking first only around
// occurrences of a root (Xapian tokenises every byte it is given; a few hundred around a match
// are enough for a snippet of `length`; an occurrence may still be no match, e.g. a word that
// merely starts with the root), then in the whole text if that finds nothing.
std::string Passage(const Xapian::MSet& mset, const std::string& text, const std::string& lower,
                    size_t length, const std::vector<std::string>& roots) {
  if (!roots.empty() && text.size() > 4 * length) {
    size_t from = 0;
    for (int attempt = 0; attempt < kWindowAttempts; ++attempt) {
      const size_t at = RootAt(lower, roots, from);
      if (at == std::string::npos) break;
      bool cut_start = false, cut_end = false;
      const std::string window = Around(text, at, length, 2 * length, &cut_start, &cut_end);
      std::string snippet =
          Highlight(mset, window, length, Xapian::MSet::SNIPPET_EMPTY_WITHOUT_MATCH);
      if (!snippet.empty()) {
        const std::string ellipsis = "…";
        if (cut_start && snippet.rfind(ellipsis, 0) != 0) snippet = ellipsis + snippet;
        if (cut_end && (snippet.size() < ellipsis.size() ||
                        snippet.compare(snippet.size() - ellipsis.size(), ellipsis.size(),
                                        ellipsis) != 0)) {
          snippet += ellipsis;
        }
        return snippet;
      }
      from = at + 2 * length;  // past this window
    }
  }
  return Highlight(mset, text, length, Xapian::MSet::SNIPPET_EMPTY_WITHOUT_MATCH);
}

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
  const std::string lower_body = roots.empty() ? std::string() : absl::AsciiStrToLower(body);
  if (RootAt(lower_body, roots, 0) != std::string::npos) {
    snippet = Passage(mset, body, lower_body, length, roots);
    if (!snippet.empty()) return snippet;
  }
  int checked = 0;
  for (const v1::Comment& comment : issue.comments()) {
    if (comment.system() || ++checked > kMaxCommentsForSnippet) continue;
    const std::string lower =
        roots.empty() ? std::string() : absl::AsciiStrToLower(comment.body());
    if (RootAt(lower, roots, 0) == std::string::npos) continue;
    snippet = Passage(mset, comment.body(), lower, length, roots);
    if (!snippet.empty()) return snippet;
  }
  return LeadingExcerpt(body, length);
}

}  // namespace issuescope::search

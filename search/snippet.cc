#include "snippet.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "common/issue_sections.h"
#include "common/text_tokens.h"

namespace issuescope::search {
namespace {

// Comments searched for a match (bounds the cost of long threads).
constexpr int kMaxCommentsForSnippet = 50;
// Matched words considered as the start of a window.
constexpr size_t kMaxAnchors = 64;

// A Source is one text a snippet may come from, in order of preference.
struct Source {
  std::string text;  // plain text
  int rank = 0;      // 0 prose, 1 exception/code/log, 2 environment/template
};

// Roots are lower-case strings one of which every text holding a match contains: the query's
// words, its stems without a final 'i' (happy -> happi) and cut before an "iz" (optimiz- and
// optimis- alike), the -our form of -or stems, and its wildcard patterns.
std::vector<std::string> RootsOf(const SnippetTerms& terms) {
  std::vector<std::string> roots(terms.words.begin(), terms.words.end());
  for (std::string stem : terms.stems) {
    if (!stem.empty() && stem.back() == 'i') stem.pop_back();
    // Up to an "iz" (both spellings start so), and the British -our of an -or stem.
    roots.push_back(stem.substr(0, std::min(stem.size(), stem.find("iz"))));
    if (const size_t o = stem.rfind("or"); o != std::string::npos && o + 2 == stem.size()) {
      roots.push_back(stem.substr(0, o) + "our");
    }
  }
  for (const std::string& w : terms.wildcards) roots.push_back(w);
  std::vector<std::string> kept;
  for (std::string& r : roots) {
    if (!r.empty()) kept.push_back(std::move(r));
  }
  return kept;
}

// FirstRoot is the offset of the first occurrence of a root in `lower`, npos when none.
size_t FirstRoot(const std::string& lower, const std::vector<std::string>& roots) {
  size_t best = std::string::npos;
  for (const std::string& r : roots) best = std::min(best, lower.find(r));
  return best;
}

// DensestRoots is the offset in `lower` where the most distinct roots occur within 256 bytes
// (the earliest such place), npos when no root occurs. Substring search only: the section is
// tokenised around that place alone.
size_t DensestRoots(const std::string& lower, const std::vector<std::string>& roots) {
  constexpr size_t kSpan = 256;
  constexpr int kMaxPerRoot = 32;
  std::vector<std::pair<size_t, size_t>> hits;  // offset, root index
  for (size_t r = 0; r < roots.size(); ++r) {
    size_t at = lower.find(roots[r]);
    for (int n = 0; at != std::string::npos && n < kMaxPerRoot; ++n) {
      hits.emplace_back(at, r);
      at = lower.find(roots[r], at + 1);
    }
  }
  if (hits.empty()) return std::string::npos;
  std::sort(hits.begin(), hits.end());
  size_t best_at = hits[0].first, best = 0;
  for (size_t i = 0; i < hits.size(); ++i) {
    absl::flat_hash_set<size_t> distinct;
    for (size_t j = i; j < hits.size() && hits[j].first < hits[i].first + kSpan; ++j) {
      distinct.insert(hits[j].second);
    }
    if (distinct.size() > best) {
      best = distinct.size();
      best_at = hits[i].first;
    }
  }
  return best_at;
}

// kMaxSourceBytes bounds the text a snippet is looked for in, per section: a longer one is cut
// to a window around the first root.
constexpr size_t kMaxSourceBytes = 1024;

// AddSources appends the sections of `markdown` as plain text. With `roots`, only sections that
// contain one, each cut to a window of kMaxSourceBytes around its first root.
void AddSources(absl::string_view markdown, const std::vector<std::string>& roots,
                std::vector<Source>* out) {
  for (const Section& s : SplitSections(markdown)) {
    absl::string_view part = markdown.substr(s.begin, s.end - s.begin);
    if (!roots.empty()) {
      const size_t at = DensestRoots(absl::AsciiStrToLower(part), roots);
      if (at == std::string::npos) continue;
      if (part.size() > kMaxSourceBytes) {
        const size_t begin = Utf8Boundary(part, at > 256 ? at - 256 : 0);
        size_t end = std::min(part.size(), begin + kMaxSourceBytes);
        while (end < part.size() && IsUtf8Continuation(part[end])) ++end;
        part = part.substr(begin, end - begin);
      }
    }
    int rank = 0;
    switch (s.kind) {
      case SectionKind::kProse: rank = 0; break;
      case SectionKind::kException:
      case SectionKind::kCode:
      case SectionKind::kLog: rank = 1; break;
      case SectionKind::kEnvironment:
      case SectionKind::kTemplate: rank = 2; break;
    }
    std::string plain = PlainText(part);
    if (!plain.empty()) out->push_back({std::move(plain), rank});
  }
}

// Match is a matched word of a text: its bytes and the query term it matched.
struct Match {
  size_t begin, end;
  std::string key;
};

std::vector<Match> FindMatches(const std::string& text, const SnippetTerms& terms) {
  std::vector<Match> out;
  // A word can have one of the stems only if it starts with the stem's first two letters:
  // stemming (the costly part) is skipped for the others.
  absl::flat_hash_set<std::string> heads;
  for (const std::string& stem : terms.stems) heads.insert(stem.substr(0, 2));
  auto key_of = [&](const std::string& w) -> std::string {
    if (terms.words.contains(w)) return w;
    if (IsStemmable(w) && heads.contains(absl::string_view(w).substr(0, 2))) {
      std::string stem = EnglishStem(w);
      if (terms.stems.contains(stem)) return "Z" + stem;
    }
    for (const std::string& p : terms.wildcards) {
      if (absl::StartsWith(w, p)) return "*" + p;
    }
    return "";
  };
  ForEachToken(text, [&](const TextToken& t) {
    std::string key;
    if (t.kind == TextToken::Kind::kCjk) {
      for (size_t i = 0; i < t.parts.size() && key.empty(); ++i) {
        if (i + 1 < t.parts.size() && terms.words.contains(t.parts[i] + t.parts[i + 1])) {
          key = t.parts[i] + t.parts[i + 1];
        } else if (t.parts.size() == 1 && terms.words.contains(t.parts[i])) {
          key = t.parts[i];
        }
      }
    } else {
      if (!t.text.empty()) key = key_of(t.text);
      for (size_t i = 0; i < t.parts.size() && key.empty(); ++i) key = key_of(t.parts[i]);
      for (size_t i = 0; i < t.joined.size() && key.empty(); ++i) key = key_of(t.joined[i].second);
    }
    if (!key.empty()) out.push_back({t.begin, t.end, std::move(key)});
  });
  return out;
}

// CutStart / CutEnd move a byte offset to a character (and, near it, a word) boundary.
size_t CutStart(const std::string& text, size_t at) {
  if (at == 0) return 0;
  for (size_t i = at; i > 0 && at - i < 24; --i) {
    if (text[i - 1] == ' ') return i;
  }
  return Utf8Boundary(text, at);
}

size_t CutEnd(const std::string& text, size_t at) {
  if (at >= text.size()) return text.size();
  for (size_t i = at; i > 0 && at - i < 24; --i) {
    if (text[i] == ' ') return i;
  }
  while (at < text.size() && IsUtf8Continuation(text[at])) ++at;
  return at;
}

// Render returns text[begin, end) HTML-escaped with the matches inside marked.
std::string Render(const std::string& text, size_t begin, size_t end,
                   const std::vector<Match>& matches) {
  std::string out;
  if (begin > 0) out += "…";
  size_t at = begin;
  for (const Match& m : matches) {
    if (m.begin < at || m.end > end) continue;
    out += HtmlEscape(absl::string_view(text).substr(at, m.begin - at));
    out += "<mark>";
    out += HtmlEscape(absl::string_view(text).substr(m.begin, m.end - m.begin));
    out += "</mark>";
    at = m.end;
  }
  out += HtmlEscape(absl::string_view(text).substr(at, end - at));
  if (end < text.size()) out += "…";
  return out;
}

struct Window {
  size_t distinct = 0;
  int rank = 3;
  size_t source = 0, begin = 0, end = 0;
};

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
  size_t cut = Utf8Boundary(text, length);
  // Prefer to cut at a space in the last quarter, so words stay whole.
  for (size_t i = cut; i > length * 3 / 4; --i) {
    if (text[i] == ' ' || text[i] == '\n') {
      cut = i;
      break;
    }
  }
  return HtmlEscape(text.substr(0, cut)) + "…";
}

SnippetTerms SnippetTermsOf(const Xapian::Query& query) {
  SnippetTerms terms;
  for (Xapian::TermIterator t = query.get_unique_terms_begin(); t != query.get_unique_terms_end();
       ++t) {
    const std::string term = *t;
    if (term.empty()) continue;
    if (term[0] == 'Z') {
      if (term.size() > 1 && !(term[1] >= 'A' && term[1] <= 'Z')) terms.stems.insert(term.substr(1));
    } else if (!(term[0] >= 'A' && term[0] <= 'Z')) {
      terms.words.insert(term);
    }
  }
  // Wildcards are not among the terms; their patterns are in the description:
  // "WILDCARD SYNONYM tokeni".
  const std::string d = query.get_description();
  for (size_t at = d.find("WILDCARD "); at != std::string::npos; at = d.find("WILDCARD ", at + 1)) {
    const size_t op_end = d.find(' ', at + 9);
    if (op_end == std::string::npos) break;
    size_t end = op_end + 1;
    while (end < d.size() && d[end] != ')' && d[end] != ' ') ++end;
    std::string pattern = d.substr(op_end + 1, end - op_end - 1);
    if (!pattern.empty() && !(pattern[0] >= 'A' && pattern[0] <= 'Z')) {
      terms.wildcards.push_back(std::move(pattern));
    }
  }
  return terms;
}

namespace {

// BestWindow finds the best window among `sources` (see the file comment) into *best.
void BestWindow(const std::vector<Source>& sources, const SnippetTerms& terms, size_t length,
                Window* best, std::vector<Match>* best_matches) {
  for (size_t s = 0; s < sources.size(); ++s) {
    const Source& src = sources[s];
    if (best->distinct > 0 && src.rank > best->rank) continue;
    if (best->distinct > 0 && src.rank == best->rank &&
        best->distinct >= terms.words.size() + terms.stems.size() + terms.wildcards.size()) {
      continue;  // every word already in a window of a kind at least as good
    }
    if (src.text.empty()) continue;
    std::vector<Match> matches = FindMatches(src.text, terms);
    for (size_t a = 0; a < matches.size() && a < kMaxAnchors; ++a) {
      const size_t from = matches[a].begin > length / 4 ? matches[a].begin - length / 4 : 0;
      const size_t begin = CutStart(src.text, from);
      const size_t end = CutEnd(src.text, begin + length);
      absl::flat_hash_set<std::string> keys;
      for (const Match& m : matches) {
        if (m.begin >= begin && m.end <= end) keys.insert(m.key);
      }
      if (src.rank < best->rank || (src.rank == best->rank && keys.size() > best->distinct)) {
        *best = {keys.size(), src.rank, s, begin, end};
        *best_matches = matches;
      }
    }
  }
}

// MayHold says whether `text` contains one of `roots` (case-insensitively), or roots is empty.
bool MayHold(const std::string& text, const std::vector<std::string>& roots) {
  if (roots.empty()) return true;
  thread_local std::string lower;
  lower.assign(text);
  for (char& c : lower) c = absl::ascii_tolower(static_cast<unsigned char>(c));
  return FirstRoot(lower, roots) != std::string::npos;
}

}  // namespace

std::string MakeSnippet(const SnippetTerms& terms, bool has_text,
                        const v1::IssueWithComments& issue, size_t length) {
  const std::string& body = issue.issue().body();
  std::vector<Source> sources;
  if (has_text && !terms.empty()) {
    // Only texts that contain a root are split into sections (the costly part); the body
    // first, and the comments only when the body's prose has no match.
    const std::vector<std::string> roots = RootsOf(terms);
    Window best;
    std::vector<Match> best_matches;
    if (MayHold(body, roots)) {
      AddSources(body, roots, &sources);
      BestWindow(sources, terms, length, &best, &best_matches);
    }
    if (best.distinct == 0 || best.rank > 0) {
      int checked = 0;
      for (const v1::Comment& comment : issue.comments()) {
        if (comment.system() || ++checked > kMaxCommentsForSnippet) continue;
        if (!MayHold(comment.body(), roots)) continue;
        std::vector<Source> more;
        AddSources(comment.body(), roots, &more);
        Window found;
        std::vector<Match> found_matches;
        BestWindow(more, terms, length, &found, &found_matches);
        if (found.distinct > 0 &&
            (found.rank < best.rank || (found.rank == best.rank && found.distinct > best.distinct))) {
          found.source += sources.size();
          for (Source& src : more) sources.push_back(std::move(src));
          best = found;
          best_matches = std::move(found_matches);
          if (best.rank == 0) break;  // prose of the first matching comment
        }
      }
    }
    if (best.distinct > 0) {
      return Render(sources[best.source].text, best.begin, best.end, best_matches);
    }
  }
  // No match found (or a listing): the body's first prose.
  sources.clear();
  AddSources(body, {}, &sources);
  for (const Source& src : sources) {
    if (src.rank == 0) return LeadingExcerpt(src.text, length);
  }
  return sources.empty() ? std::string() : LeadingExcerpt(sources[0].text, length);
}

}  // namespace issuescope::search

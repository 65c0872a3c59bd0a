#include "search/snippet.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "common/issue_sections.h"
#include "common/text_tokens.h"

namespace issuescope::search {
namespace {

// Comments searched for a match (bounds the cost of long threads).
constexpr int kMaxCommentsForSnippet = 50;
// Matched words considered as the start of a window.
constexpr size_t kMaxAnchors = 64;

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

std::string StemOf(const std::string& word) {
  thread_local const Xapian::Stem stemmer("english");
  return stemmer(word);
}

// A Source is one text a snippet may come from, in order of preference.
struct Source {
  std::string text;  // plain text
  int rank = 0;      // 0 prose, 1 exception/code/log, 2 environment/template
};

void AddSources(absl::string_view markdown, std::vector<Source>* out) {
  for (const Section& s : SplitSections(markdown)) {
    absl::string_view part = markdown.substr(s.begin, s.end - s.begin);
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
  auto key_of = [&](const std::string& w) -> std::string {
    if (terms.words.contains(w)) return w;
    if (IsStemmable(w)) {
      std::string stem = StemOf(w);
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
  while (at > 0 && IsContinuationByte(text[at])) --at;
  return at;
}

size_t CutEnd(const std::string& text, size_t at) {
  if (at >= text.size()) return text.size();
  for (size_t i = at; i > 0 && at - i < 24; --i) {
    if (text[i] == ' ') return i;
  }
  while (at < text.size() && IsContinuationByte(text[at])) ++at;
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

std::string MakeSnippet(const SnippetTerms& terms, bool has_text,
                        const v1::IssueWithComments& issue, size_t length) {
  std::vector<Source> sources;
  AddSources(issue.issue().body(), &sources);
  const size_t body_sources = sources.size();
  if (has_text && !terms.empty()) {
    int checked = 0;
    for (const v1::Comment& comment : issue.comments()) {
      if (comment.system() || ++checked > kMaxCommentsForSnippet) continue;
      AddSources(comment.body(), &sources);
    }
    Window best;
    std::vector<Match> best_matches;
    // Better kinds of text first (prose over code and logs over dumps), then the window with
    // the most distinct query words, then the earliest (the body before the comments).
    for (size_t s = 0; s < sources.size(); ++s) {
      const Source& src = sources[s];
      if (best.distinct > 0 && src.rank >= best.rank && best.distinct >= terms.words.size() +
                                                                         terms.stems.size()) {
        continue;  // every word already in a window of a kind at least as good
      }
      if (best.distinct > 0 && src.rank > best.rank) continue;
      std::vector<Match> matches = FindMatches(src.text, terms);
      for (size_t a = 0; a < matches.size() && a < kMaxAnchors; ++a) {
        const size_t from = matches[a].begin > length / 4 ? matches[a].begin - length / 4 : 0;
        const size_t begin = CutStart(src.text, from);
        const size_t end = CutEnd(src.text, begin + length);
        absl::flat_hash_set<std::string> keys;
        for (const Match& m : matches) {
          if (m.begin >= begin && m.end <= end) keys.insert(m.key);
        }
        if (src.rank < best.rank || (src.rank == best.rank && keys.size() > best.distinct)) {
          best = {keys.size(), src.rank, s, begin, end};
          best_matches = matches;
        }
      }
    }
    if (best.distinct > 0) {
      return Render(sources[best.source].text, best.begin, best.end, best_matches);
    }
  }
  for (size_t s = 0; s < body_sources; ++s) {
    if (sources[s].rank == 0) return LeadingExcerpt(sources[s].text, length);
  }
  return body_sources > 0 ? LeadingExcerpt(sources[0].text, length) : std::string();
}

}  // namespace issuescope::search

#include "indexer/taxonomy_matcher.h"

#include "absl/strings/ascii.h"

namespace issuescope::taxonomy {
namespace {

bool IsWordByte(unsigned char c) { return absl::ascii_isalnum(c) || c == '_'; }

// FindTerm is true when `term` occurs in `text` (both already in the same case) with word
// boundaries around ASCII-alphanumeric ends; a plural "s"/"es" may follow.
bool FindTerm(absl::string_view text, absl::string_view term) {
  if (term.empty()) return false;
  const bool check_start = IsWordByte(static_cast<unsigned char>(term.front()));
  const bool check_end = IsWordByte(static_cast<unsigned char>(term.back()));
  size_t pos = 0;
  while ((pos = text.find(term, pos)) != absl::string_view::npos) {
    size_t end = pos + term.size();
    bool ok = !check_start || pos == 0 || !IsWordByte(static_cast<unsigned char>(text[pos - 1]));
    if (ok && check_end && end < text.size()) {
      size_t after = end;
      if (text[after] == 's' || text[after] == 'S') {
        ++after;
      } else if (text.substr(after, 2) == "es" || text.substr(after, 2) == "ES") {
        after += 2;
      }
      ok = after >= text.size() || !IsWordByte(static_cast<unsigned char>(text[after]));
    }
    if (ok) return true;
    ++pos;
  }
  return false;
}

}  // namespace

TaxonomyMatcher::TaxonomyMatcher(const Taxonomy* taxonomy) : taxonomy_(taxonomy) {
  for (const Kind& kind : taxonomy->kinds) {
    Add(kind.id, kind.cues);
    for (const Theme& theme : kind.themes) {
      Add(theme.id, theme.cues);
      for (const SubTheme& sub : theme.subthemes) Add(sub.id, sub.cues);
    }
  }
  Add("llm", taxonomy->llm);
}

void TaxonomyMatcher::Add(const std::string& node, const CueSet& cues) {
  if (cues.empty()) return;
  Compiled c;
  c.node = node;
  for (const std::string& t : cues.terms) c.terms.push_back(absl::AsciiStrToLower(t));
  c.case_terms = cues.case_terms;
  for (const std::string& p : cues.patterns) {
    RE2::Options options;
    options.set_case_sensitive(false);
    options.set_log_errors(false);
    auto re = std::make_unique<RE2>(p, options);
    if (re->ok()) c.patterns.push_back(std::move(re));
  }
  compiled_.push_back(std::move(c));
}

std::vector<CueMatch> TaxonomyMatcher::Match(absl::string_view text) const {
  text = text.substr(0, kMaxScanBytes);
  const std::string lower = absl::AsciiStrToLower(text);
  std::vector<CueMatch> out;
  for (const Compiled& c : compiled_) {
    for (const std::string& t : c.terms) {
      if (FindTerm(lower, t)) out.push_back({c.node, t});
    }
    for (const std::string& t : c.case_terms) {
      if (FindTerm(text, t)) out.push_back({c.node, t});
    }
    for (const auto& re : c.patterns) {
      absl::string_view input(text.data(), text.size());
      re2::StringPiece piece(input.data(), input.size());
      re2::StringPiece match;
      if (re->Match(piece, 0, piece.size(), RE2::UNANCHORED, &match, 1)) {
        out.push_back({c.node, std::string(match.data(), std::min<size_t>(match.size(), 80))});
      }
    }
  }
  return out;
}

std::vector<LabelMatch> TaxonomyMatcher::MapLabels(const std::vector<std::string>& labels,
                                                   absl::string_view repo) const {
  std::vector<LabelMatch> out;
  const std::string repo_lower = absl::AsciiStrToLower(repo);
  for (const std::string& label : labels) {
    const std::string norm = NormalizeLabel(label);
    for (const LabelMapping& m : taxonomy_->labels) {
      if (m.label != norm) continue;
      if (!m.repo.empty() && m.repo != repo_lower) continue;
      for (const std::string& target : m.targets) {
        out.push_back({label, target, !m.repo.empty()});
      }
    }
  }
  return out;
}

}  // namespace issuescope::taxonomy

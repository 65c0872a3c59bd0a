#include "indexer/taxonomy_matcher.h"

#include "absl/strings/ascii.h"
#include "common/text_tokens.h"

namespace issuescope::taxonomy {
namespace {

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
  lower_ = std::make_unique<TermAutomaton>(lower_terms_);
  case_ = std::make_unique<TermAutomaton>(case_terms_);
}

size_t TaxonomyMatcher::Intern(const std::string& term, std::vector<std::string>* terms,
                               absl::flat_hash_map<std::string, size_t>* index) {
  auto [it, added] = index->try_emplace(term, terms->size());
  if (added) terms->push_back(term);
  return it->second;
}

void TaxonomyMatcher::Add(const std::string& node, const CueSet& cues) {
  if (cues.empty()) return;
  Compiled c;
  c.node = node;
  for (const std::string& t : cues.terms) {
    c.terms.push_back(absl::AsciiStrToLower(t));
    c.term_ids.push_back(Intern(c.terms.back(), &lower_terms_, &lower_index_));
  }
  c.case_terms = cues.case_terms;
  for (const std::string& t : c.case_terms) {
    c.case_term_ids.push_back(Intern(t, &case_terms_, &case_index_));
  }
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
  text = Utf8Prefix(text, kMaxScanBytes);  // a cut inside a character would end in bad UTF-8
  const std::string lower = absl::AsciiStrToLower(text);
  const std::vector<char> lower_found = lower_->Find(lower);
  const std::vector<char> case_found = case_->Find(text);
  std::vector<CueMatch> out;
  for (const Compiled& c : compiled_) {
    for (size_t i = 0; i < c.terms.size(); ++i) {
      if (lower_found[c.term_ids[i]]) out.push_back({c.node, c.terms[i]});
    }
    for (size_t i = 0; i < c.case_terms.size(); ++i) {
      if (case_found[c.case_term_ids[i]]) out.push_back({c.node, c.case_terms[i]});
    }
    for (const auto& re : c.patterns) {
      absl::string_view input(text.data(), text.size());
      re2::StringPiece piece(input.data(), input.size());
      re2::StringPiece match;
      if (re->Match(piece, 0, piece.size(), RE2::UNANCHORED, &match, 1)) {
        out.push_back(
            {c.node, std::string(Utf8Prefix(absl::string_view(match.data(), match.size()), 80))});
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

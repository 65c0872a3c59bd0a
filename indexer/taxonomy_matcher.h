// TaxonomyMatcher finds a taxonomy's cues (terms, case-sensitive terms, RE2 patterns) in an
// issue's text and maps its native labels through the taxonomy's label mappings.
//
// Term matching: ASCII terms match case-insensitively at word boundaries, optionally followed by
// a plural "s"/"es" ("hang" matches "hangs"); terms with non-ASCII characters (Chinese) match
// anywhere. Every cue counts once per text however often it occurs. Only the first
// `kMaxScanBytes` bytes of the text are scanned, so huge logs cost bounded time.
//
// The matcher borrows the Taxonomy (which must outlive it), is immutable after construction and
// safe to use from many threads.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "indexer/taxonomy.h"
#include "indexer/term_automaton.h"
#include "re2/re2.h"

namespace issuescope::taxonomy {

// CueMatch is one cue found in a text.
struct CueMatch {
  std::string node;  // node id, or "llm"
  std::string cue;   // the term, or the text a pattern matched (at most 80 bytes, whole chars)
};

// LabelMatch is one native label that maps to a node.
struct LabelMatch {
  std::string label;   // the label as the issue carries it
  std::string target;  // node id, or "llm"
  bool repo_specific = false;
};

class TaxonomyMatcher {
 public:
  // kMaxScanBytes bounds the text scanned for cues.
  static constexpr size_t kMaxScanBytes = 64 * 1024;

  // TaxonomyMatcher compiles the cues of `taxonomy` (validated by the loader).
  explicit TaxonomyMatcher(const Taxonomy* taxonomy);

  // Match returns every cue of every node (and of the llm set) found in `text`, in taxonomy
  // order.
  std::vector<CueMatch> Match(absl::string_view text) const;

  // MapLabels returns the mappings of `labels` for an issue of `repo` ("owner/name", any case):
  // repository-specific mappings and global ones.
  std::vector<LabelMatch> MapLabels(const std::vector<std::string>& labels,
                                    absl::string_view repo) const;

  // taxonomy returns the borrowed taxonomy.
  const Taxonomy& taxonomy() const { return *taxonomy_; }

 private:
  // Compiled is the compiled cue set of one node.
  struct Compiled {
    std::string node;
    std::vector<std::string> terms;  // lower-cased
    std::vector<std::string> case_terms;
    std::vector<std::unique_ptr<RE2>> patterns;
    // Index of each of `terms` in lower_terms_, of each of `case_terms` in case_terms_.
    std::vector<size_t> term_ids, case_term_ids;
  };
  void Add(const std::string& node, const CueSet& cues);
  // Intern returns the index of `term` in `terms`, appending it when new (`index` maps terms
  // to their indexes).
  static size_t Intern(const std::string& term, std::vector<std::string>* terms,
                       absl::flat_hash_map<std::string, size_t>* index);

  const Taxonomy* taxonomy_;
  std::vector<Compiled> compiled_;
  // Every distinct term, and one automaton over each list (built after compiled_).
  std::vector<std::string> lower_terms_, case_terms_;
  absl::flat_hash_map<std::string, size_t> lower_index_, case_index_;
  std::unique_ptr<TermAutomaton> lower_, case_;
};

}  // namespace issuescope::taxonomy

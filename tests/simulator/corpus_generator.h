// Corpus generation: builds a deterministic, realistic corpus of DL-framework issues from
// SimulatorOptions (repositories, issues, pull requests, comments, labels, timestamps with
// ties, optional planted phrase). Pure functions; thread-compatible.
#pragma once

#include "absl/status/statusor.h"
#include "tests/simulator/corpus.h"
#include "tests/simulator/simulator_options.h"

namespace issuescope::sim {

// GenerateCorpus builds the corpus described by `options` (its generation and plant fields).
// Same options → byte-identical corpus. INVALID_ARGUMENT when the options are out of range or
// when plant_phrase uses words of the generator's vocabulary.
absl::StatusOr<Corpus> GenerateCorpus(const SimulatorOptions& options);

// PlantPhrase plants `phrase` verbatim in exactly `count` issues chosen with `seed` and, when
// the phrase has several words, its words (reversed, separated by other sentences) in a few
// other issues. Marks planted issues. INVALID_ARGUMENT when there are not enough issues or the
// phrase then occurs in a number of issues other than `count`.
absl::Status PlantPhrase(Corpus& corpus, absl::string_view phrase, int count, uint64_t seed);

// CountIssuesContaining counts issues whose title, body or a comment contains `phrase`
// (ASCII case-insensitive).
int64_t CountIssuesContaining(const Corpus& corpus, absl::string_view phrase);

}  // namespace issuescope::sim

// Text generation for the simulated corpus: a portable seeded random source (Rng) and templates
// that produce realistic deep-learning-framework issue titles, bodies (markdown, code blocks,
// stack traces, environment info; ~2 KB on average), comments and labels in each project's style,
// in English and, for a fraction of issues, Chinese.
//
// Everything is a pure function of the Rng state, so the same seed yields byte-identical text on
// every platform (no std::*_distribution, whose output is implementation-defined). The
// vocabulary is fixed; words a test plants (see SimulatorOptions::plant_phrase) must not be part
// of it (WordsInVocabulary checks). Thread-safety: Rng is not thread-safe; the rest is stateless.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "tests/simulator/corpus.h"

namespace issuescope::sim {

// Rng is splitmix64: tiny, fast, portable, deterministic.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  // Next returns 64 random bits.
  uint64_t Next();
  // Uniform returns an integer in [0, n) (n > 0).
  uint64_t Uniform(uint64_t n) { return Next() % n; }
  // Range returns an integer in [lo, hi].
  int64_t Range(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Uniform(static_cast<uint64_t>(hi - lo + 1)));
  }
  // Real returns a double in [0, 1).
  double Real() { return static_cast<double>(Next() >> 11) * (1.0 / 9007199254740992.0); }
  // Chance returns true with probability p.
  bool Chance(double p) { return Real() < p; }
  // Poisson draws a Poisson-distributed count with the given mean (Knuth; chunks of 30 for
  // large means).
  int Poisson(double mean);
  // Pick returns a uniformly chosen element of a non-empty vector.
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[Uniform(v.size())];
  }

 private:
  uint64_t state_;
};

// ProjectStyle describes how one upstream project names its labels and versions.
struct ProjectStyle {
  std::string owner;
  std::string name;
  std::vector<Label> labels;          // the label catalog
  std::vector<std::string> kind_bug;  // labels a bug report gets (one is picked)
  std::vector<std::string> kind_feature;
  std::vector<std::string> modules;    // component labels ("module: cuda", "comp:dist-strat")
  std::vector<std::string> extra;      // triage labels ("triaged", "stale", ...)
  std::string version_prefix;          // e.g. "torch==2.", used in environment sections
};

// ProjectStyles returns the styles of the known projects in the order the generator uses:
// pytorch/pytorch, vllm-project/vllm, microsoft/DeepSpeed, NVIDIA/Megatron-LM,
// tensorflow/tensorflow, mindspore-ai/mindspore, hpcaitech/ColossalAI, huggingface/transformers.
const std::vector<ProjectStyle>& ProjectStyles();

// Logins returns the pool of ~200 author logins.
const std::vector<std::string>& Logins();

// IssueText is a generated title and body.
struct IssueText {
  std::string title;
  std::string body;
};

// MakeIssueText generates the title and body of an issue (or pull request when `pr`), in
// Chinese when `cjk`.
IssueText MakeIssueText(Rng& rng, const ProjectStyle& style, bool pr, bool cjk);

// MakeCommentBody generates a comment body.
std::string MakeCommentBody(Rng& rng, bool cjk);

// MakeEditNote generates the paragraph an edit appends to a body, and MakeEditedTitle the new
// title of an edited issue.
std::string MakeEditNote(Rng& rng);
std::string MakeEditedTitle(Rng& rng, absl::string_view old_title);

// FillerSentence returns a neutral sentence, used to keep decoy words apart.
std::string FillerSentence(Rng& rng);

// WordsInVocabulary returns the words of `phrase` (lower-cased) that the generator's templates
// can produce on their own.
std::vector<std::string> WordsInVocabulary(absl::string_view phrase);

}  // namespace issuescope::sim

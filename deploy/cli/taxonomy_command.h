// `issuescope taxonomy train|eval|classify`: train the issue classifier's linear model on
// labelled issues, evaluate the classifier (taxonomy rules + labels + model) against gold tags,
// and tag issues from a file. Input files are JSON Lines or CSV (indexer/classifier_data.h).
// The taxonomy is the shipped `llm-dl/1` unless --taxonomy names another file.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace issuescope::cli {

// TaxonomyTrainOptions are the flags of `taxonomy train`.
struct TaxonomyTrainOptions {
  std::string data;      // labelled JSONL/CSV file
  std::string out;       // model file to write
  std::string taxonomy;  // taxonomy file; "" = the default
  int epochs = 25;
  int hash_bits = 20;
  int max_body_tokens = 600;
  double learning_rate = 0.1;
  double l2 = 1e-6;  // L2 penalty per update
  uint32_t seed = 1;
  // "logreg", "naive-bayes", or "both" (an ensemble of the two per head).
  std::string algorithm = "logreg";
  int title_char_ngrams = 0;
  double title_weight = 1.0;  // weight of the title block against the body block
  int ensemble = 1;  // logreg heads per field, trained with seeds seed, seed+1, ...  // character n-grams of title words (0 = none)
  double nb_alpha = 0.1;  // naive Bayes smoothing
};

// TaxonomyEvalOptions are the flags of `taxonomy eval`.
struct TaxonomyEvalOptions {
  std::string data;      // labelled JSONL/CSV file
  std::string model;     // model file; "" = rules and labels only
  std::string taxonomy;  // taxonomy file; "" = the default
  bool json = false;     // print one JSON object per evaluated field instead of tables
  // When set (e.g. "bug" or "bug.performance"), the field it belongs to is scored as a binary
  // detector: every other value becomes "non-<positive>". A theme (sub-theme) detector fires
  // when the positive is the primary or a secondary theme (any sub-theme found).
  std::string positive;
  // Weight of a matched kind cue next to the model's probability (ClassifierOptions).
  double kind_cue_weight = 0.1;
  // Weight of the theme/sub-theme heads' probabilities (ClassifierOptions).
  double theme_model_weight = 1.0;
};

// TaxonomyClassifyOptions are the flags of `taxonomy classify`.
struct TaxonomyClassifyOptions {
  std::string input;     // JSONL/CSV file of issues
  std::string model;     // model file; "" = rules and labels only
  std::string taxonomy;  // taxonomy file; "" = the default
};

// RunTaxonomyTrain trains a head per gold field present (kind, theme, subtheme, llm) and writes
// the model; prints a summary.
absl::Status RunTaxonomyTrain(const TaxonomyTrainOptions& options);

// RunTaxonomyEval classifies every record and prints per-class precision/recall/F1, macro-F1
// and the confusion matrix for each gold field present.
absl::Status RunTaxonomyEval(const TaxonomyEvalOptions& options);

// RunTaxonomyClassify prints one JSON line per input record: id, kind, theme,
// secondary_themes, subtheme, subthemes, llm, taxonomy, evidence.
absl::Status RunTaxonomyClassify(const TaxonomyClassifyOptions& options);

}  // namespace issuescope::cli

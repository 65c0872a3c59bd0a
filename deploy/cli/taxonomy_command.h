// `issuescope taxonomy train|eval|classify`: train the issue classifier's linear model on
// labelled issues, evaluate the classifier (taxonomy rules + labels + model) against gold tags,
// and tag issues from a file. Input files are JSON Lines or CSV (indexer/classifier_data.h).
// The taxonomy is the shipped `llm-dl/1` unless --taxonomy names another file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace issuescope::cli {

// TaxonomyTrainOptions are the flags of `taxonomy train`.
struct TaxonomyTrainOptions {
  std::string data;      // labelled JSONL/CSV file
  // More labelled files used for training only: `train` adds them to its training records,
  // `cv` to every fold's training set (never scored; with folds by repository, records of the
  // held-out repositories are left out). E.g. NLBSE'24 for the kind head.
  std::vector<std::string> also_train;
  std::string out;       // model file to write
  std::string taxonomy;  // taxonomy file; "" = the default
  std::string name;      // the model's name, recorded with every tag it makes ("" = none)
  bool compact = false;  // write the compact format (LinearModel::SaveCompact)
  int epochs = 25;
  int hash_bits = 20;
  int max_body_tokens = 600;
  double learning_rate = 0.1;
  double l2 = 1e-6;  // L2 penalty per update
  uint32_t seed = 1;
  // "logreg", "naive-bayes", or "both" (an ensemble of the two per head).
  std::string algorithm = "logreg";
  int title_char_ngrams = 0;
  double title_weight = 0.5;  // weight of the title block against the body block
  bool signal_text_features = false;  // model features over the body's signal text only
  int ensemble = 1;  // logreg heads per field, trained with seeds seed, seed+1, ...
  double nb_alpha = 0.1;  // naive Bayes smoothing
  // When > 0 (and < 1), this fraction of the records (per gold kind/theme, chosen by `seed`) is
  // held out: the model is trained on the rest, and the classifier (rules + labels + model) is
  // evaluated on the held-out part, so defaults can be chosen without looking at a test split.
  double validation_fraction = 0;
};

// TaxonomyEvalOptions are the flags of `taxonomy eval`.
struct TaxonomyEvalOptions {
  std::string data;      // labelled JSONL/CSV file
  std::string model = "default";  // "default" (embedded), "none" (rules and labels) or a file
  std::string taxonomy;  // taxonomy file; "" = the default
  bool json = false;     // print one JSON object per evaluated field instead of tables
  // When set (e.g. "bug" or "bug.performance"), the field it belongs to is scored as a binary
  // detector: every other value becomes "non-<positive>". A theme (sub-theme) detector fires
  // when the positive is the primary or a secondary theme (any sub-theme found).
  std::string positive;
  // Weight of a matched kind cue next to the model's probability (ClassifierOptions).
  bool raw_body = false;  // cues over the whole body (not only its signal text)
  double kind_cue_weight = 0.1;
  // Weight of the theme/sub-theme heads' probabilities (ClassifierOptions).
  double theme_model_weight = 2.5;
  // Kind score of a strong bug symptom (ClassifierOptions::strong_theme_kind_weight).
  double strong_symptom_weight = 0.25;
  // Resamples of the 95% bootstrap intervals of accuracy and macro-F1 (0: none).
  int bootstrap = 1000;
};

// TaxonomyCvOptions are the flags of `taxonomy cv`: k-fold cross-validation within one data set.
// Each fold trains a model with `train` (its data, out and validation_fraction unused) on the
// other folds and classifies its records with the `eval` weights (data and model unused).
struct TaxonomyCvOptions {
  std::string data;  // labelled JSONL/CSV file
  int folds = 5;     // >= 2; by repository when records carry one (see classifier::AssignFolds)
  bool ignore_repo = false;  // stratified folds even when records carry a repository
  TaxonomyTrainOptions train;
  TaxonomyEvalOptions eval;
};

// TaxonomyClassifyOptions are the flags of `taxonomy classify`.
struct TaxonomyClassifyOptions {
  std::string input;     // JSONL/CSV file of issues
  std::string model = "default";  // "default" (embedded), "none" (rules and labels) or a file
  std::string taxonomy;  // taxonomy file; "" = the default
};

// RunTaxonomyTrain trains a head per gold field present (kind, theme, subtheme, llm) and writes
// the model; prints a summary.
absl::Status RunTaxonomyTrain(const TaxonomyTrainOptions& options);

// RunTaxonomyEval classifies every record and prints per-class precision/recall/F1, macro-F1
// and the confusion matrix for each gold field present.
absl::Status RunTaxonomyEval(const TaxonomyEvalOptions& options);

// RunTaxonomyCv prints a line per fold and the pooled report of every gold field over all folds
// (each record predicted by the model that did not see it).
absl::Status RunTaxonomyCv(const TaxonomyCvOptions& options);

// RunTaxonomyClassify prints one JSON line per input record: id, kind, theme,
// secondary_themes, subtheme, subthemes, llm, taxonomy, evidence.
absl::Status RunTaxonomyClassify(const TaxonomyClassifyOptions& options);

}  // namespace issuescope::cli

// LinearModel: the trainable part of the issue classifier — one or more multinomial logistic
// regression "heads" (kind, theme, subtheme, llm) over hashed word unigram + bigram features
// (classifier_features.h), trained with AdaGrad SGD in a seeded, platform-independent order so
// the same data and options always give the same model.
//
// The model file is JSON (documented in docs/TAXONOMY.md): format/version, the feature options,
// the taxonomy tag it was trained against, and per head its classes, biases and the non-zero
// weight rows as [bucket, w_class0, w_class1, ...] sorted by bucket, rounded to 6 significant
// digits.
//
// A loaded LinearModel is immutable and safe to share between threads for Predict.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "indexer/classifier_features.h"

namespace issuescope::classifier {

// TrainOptions tunes TrainHead.
struct TrainOptions {
  // Passes over the data. Default: 25.
  int epochs = 25;
  // AdaGrad base learning rate. Default: 0.1.
  double learning_rate = 0.1;
  // L2 penalty per update on the touched weights. Default: 1e-6.
  double l2 = 1e-6;
  // Seed of the example order. Default: 1.
  uint32_t seed = 1;
};

// Head is one softmax classifier: score(c) = bias[c] + sum_f x_f * w[f][c]
// + length_weight[c] * sum_f x_f, probabilities = softmax(score).
struct Head {
  std::string name;                  // "kind", "theme", "subtheme" or "llm"
  // "logreg" (TrainHead) or "naive-bayes" (TrainNaiveBayesHead). Heads sharing a name form an
  // ensemble whose probabilities are averaged.
  std::string type = "logreg";
  std::vector<std::string> classes;  // sorted class names
  std::vector<float> bias;           // one per class
  // weights[bucket * classes.size() + class], dense over 2^hash_bits buckets.
  std::vector<float> weights;
  // Per-class weight of the feature mass (naive Bayes' unseen-feature term); empty for logreg.
  std::vector<float> length_weight;
};

// LinearModel is a set of heads sharing one feature space.
class LinearModel {
 public:
  LinearModel() = default;
  explicit LinearModel(FeatureOptions features) : features_(features) {}

  // features returns the feature options of the model.
  const FeatureOptions& features() const { return features_; }
  // taxonomy_tag is the taxonomy ("name/version") the model's classes come from.
  const std::string& taxonomy_tag() const { return taxonomy_tag_; }
  void set_taxonomy_tag(std::string tag) { taxonomy_tag_ = std::move(tag); }
  // heads returns every head.
  const std::vector<Head>& heads() const { return heads_; }
  // FindHead returns the head named `name`, or nullptr.
  const Head* FindHead(absl::string_view name) const;
  // Probabilities averages the class probabilities of every head named `name` (an ensemble);
  // empty when there is none. Heads of one name must share their classes.
  std::vector<std::pair<std::string, double>> Probabilities(absl::string_view name,
                                                            const FeatureVector& x) const;
  // AddHead appends a head; heads of the same name form an ensemble.
  void AddHead(Head head);

  // Predict returns class probabilities of `head` for features `x` (same order as classes).
  std::vector<double> Predict(const Head& head, const FeatureVector& x) const;

  // Save writes the model file. INTERNAL naming the path when it cannot be written.
  absl::Status Save(const std::string& path) const;
  // SaveCompact writes the compact model file: the magic "ISCM1\n", a little-endian uint32
  // length and a JSON header (as Save's, with per head "scale" and "rows" instead of
  // "weights"), then per head `rows` records of a little-endian uint32 bucket and one int8 per
  // class: weight = q × scale / 127 (scale: the head's largest |weight|). About a tenth of the
  // JSON's size; predictions differ by the rounding (docs/TAXONOMY.md measures it).
  absl::Status SaveCompact(const std::string& path) const;
  // name is the model's name as trained (`taxonomy train --name`), "" when none.
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  // Load reads a model file. NOT_FOUND when unreadable; INVALID_ARGUMENT naming the path and
  // the problem for anything malformed.
  static absl::StatusOr<LinearModel> Load(const std::string& path);
  // Parse reads a model from the file's bytes, JSON or compact; `source` names it in errors.
  static absl::StatusOr<LinearModel> Parse(absl::string_view text, absl::string_view source);

 private:
  // ParseCompact reads a SaveCompact file.
  static absl::StatusOr<LinearModel> ParseCompact(absl::string_view bytes,
                                                  absl::string_view source);

  FeatureOptions features_;
  std::string taxonomy_tag_;
  std::string name_;
  std::vector<Head> heads_;
};

// TrainNaiveBayesHead trains a multinomial naive Bayes head (feature values as counts, additive
// smoothing `alpha`) with the same inputs and errors as TrainHead.
absl::StatusOr<Head> TrainNaiveBayesHead(absl::string_view name,
                                         const std::vector<FeatureVector>& x,
                                         const std::vector<std::string>& y,
                                         const FeatureOptions& features, double alpha);

// TrainHead trains a logistic regression head named `name` on features `x` with gold classes `y` (same length, at
// least two distinct classes). INVALID_ARGUMENT otherwise.
absl::StatusOr<Head> TrainHead(absl::string_view name, const std::vector<FeatureVector>& x,
                               const std::vector<std::string>& y, const FeatureOptions& features,
                               const TrainOptions& options);

}  // namespace issuescope::classifier

// TaxonomyTagger: the Tagger of the indexer. It runs the issue classifier (classifier::
// Classifier, rules + native labels + an optional model) over an issue and fills v1::Tags:
// taxonomy "name/version", kind, primary theme, secondary themes, sub-themes (primary first),
// the llm flag, the evidence as readable strings ("label:module: cuda -> bug.hardware.cuda-gpu",
// "cue:out of memory -> bug.memory.oom", "model:p=0.930 -> bug", "repo:o/r -> llm") and the
// matched llm keywords (lower case, distinct, in taxonomy order).
//
// It uses the taxonomy embedded in the binary (embedded_taxonomy.h) unless given a file, and the
// model its caller names: none (rules and labels only), the embedded default model
// (embedded_model.h, trained on the labelled development set devset-1 and NLBSE'24), or a file.
// Tags record the model as Tags.model ("<name>@<hash>"). Fingerprint() is "<name>/<version> taxonomy=<hash>
// model=<hash|none>", hashes being FNV-1a 64 of the files' bytes, so editing either file
// triggers a re-tag.
//
// The tagger owns its taxonomy, model and classifier; it is immutable after Create and safe to
// use from many threads at once.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "indexer/classifier.h"
#include "indexer/classifier_model.h"
#include "indexer/tagger.h"
#include "indexer/taxonomy.h"

namespace issuescope::indexer {

// The model arguments every program accepts (`--model`): kModelNone ("none") or "" for rules and
// labels only, kModelDefault ("default") for the embedded model, anything else a file path.
inline constexpr absl::string_view kModelNone = "none";
inline constexpr absl::string_view kModelDefault = "default";

// ModelArgument is what a `--model` argument resolves to.
struct ModelArgument {
  std::optional<classifier::LinearModel> model;  // nullopt: rules and labels only
  std::string bytes;                             // the model file's bytes (fingerprints)
  std::string source;                            // its path, or EmbeddedModelName()
};

// ResolveModelArgument resolves `arg` for a taxonomy tagged `taxonomy_tag` ("llm-dl/1"):
// "" or "none" → no model; "default" → the embedded model when it was trained for that
// taxonomy, else no model (a custom taxonomy has no default model); anything else → the model
// file at that path (NOT_FOUND / INVALID_ARGUMENT naming it, as LinearModel::Load).
absl::StatusOr<ModelArgument> ResolveModelArgument(absl::string_view arg,
                                                   absl::string_view taxonomy_tag);

// ModelLabel is what tags record of a model: "<name>@<first 8 hex digits of FNV-1a 64 of its
// bytes>", the name being "unnamed" when the model has none.
std::string ModelLabel(const classifier::LinearModel& model, absl::string_view bytes);

class TaxonomyTagger : public Tagger {
 public:
  // Create loads the taxonomy at `taxonomy_path` ("" = the embedded default) and the model
  // `model`, a `--model` argument: "" or "none" = none, "default" = the embedded model (none
  // for a taxonomy it was not trained for), else a file path (ResolveModelArgument).
  // NOT_FOUND / INVALID_ARGUMENT naming the file when one cannot be read or is malformed;
  // INVALID_ARGUMENT when a model file was trained for another taxonomy.
  static absl::StatusOr<std::unique_ptr<TaxonomyTagger>> Create(const std::string& taxonomy_path,
                                                                const std::string& model);
  // FromText builds a tagger from taxonomy TOML `text` (named `source` in errors) and an
  // optional model with the bytes it was read from (for the fingerprint).
  static absl::StatusOr<std::unique_ptr<TaxonomyTagger>> FromText(
      absl::string_view text, absl::string_view source,
      std::optional<classifier::LinearModel> model = std::nullopt,
      absl::string_view model_bytes = "");

  TaxonomyTagger(const TaxonomyTagger&) = delete;
  TaxonomyTagger& operator=(const TaxonomyTagger&) = delete;

  // Tag replaces the issue's tags with the classifier's verdict.
  void Tag(v1::IssueWithComments* issue) override;
  // Fingerprint: see the class comment.
  std::string Fingerprint() const override { return fingerprint_; }
  // taxonomy returns the loaded taxonomy.
  const taxonomy::Taxonomy& taxonomy() const { return *taxonomy_; }
  // has_model is true when a model takes part.
  bool has_model() const { return model_ != nullptr; }
  // model_label is what the tags record of the model ("" without one).
  const std::string& model_label() const { return model_label_; }

 private:
  // Build makes the tagger of a parsed taxonomy (its file's `text` goes into the fingerprint).
  static absl::StatusOr<std::unique_ptr<TaxonomyTagger>> Build(
      taxonomy::Taxonomy parsed, absl::string_view text, absl::string_view source,
      std::optional<classifier::LinearModel> model, absl::string_view model_bytes);

  TaxonomyTagger(std::unique_ptr<taxonomy::Taxonomy> taxonomy,
                 std::unique_ptr<classifier::LinearModel> model, std::string fingerprint,
                 std::string model_label);

  std::unique_ptr<taxonomy::Taxonomy> taxonomy_;
  std::unique_ptr<classifier::LinearModel> model_;
  std::unique_ptr<classifier::Classifier> classifier_;
  std::string fingerprint_;
  std::string model_label_;
};

// FingerprintHash returns the FNV-1a 64 hash of `bytes` as 16 lower-case hex digits.
std::string FingerprintHash(absl::string_view bytes);

}  // namespace issuescope::indexer

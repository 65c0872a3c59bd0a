// The default classifier model (indexer/taxonomies/llm-dl-1.model, compact format) compiled
// into the binaries, so the indexer, `crawl`, `reindex` and `taxonomy classify` tag with it
// without any file installed (docs/TAXONOMY.md, "The shipped model": what it was trained on and
// what it scores). Thread-safe (constants).
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "indexer/classifier_model.h"

namespace issuescope::indexer {

// EmbeddedModelBytes returns the bytes of the default model file.
absl::string_view EmbeddedModelBytes();

// EmbeddedModelName names it in errors ("<embedded>/llm-dl-1.model").
absl::string_view EmbeddedModelName();

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

}  // namespace issuescope::indexer

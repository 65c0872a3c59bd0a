// The default classifier model (indexer/taxonomies/llm-dl-1.model, compact format) compiled
// into the binaries, so the indexer, `crawl`, `reindex` and `taxonomy classify` tag with it
// without any file installed (docs/TAXONOMY.md, "The shipped model": what it was trained on and
// what it scores). Thread-safe (constants).
#pragma once

#include "absl/strings/string_view.h"

namespace issuescope::indexer {

// EmbeddedModelBytes returns the bytes of the default model file.
absl::string_view EmbeddedModelBytes();

// EmbeddedModelName names it in errors ("<embedded>/llm-dl-1.model").
absl::string_view EmbeddedModelName();

}  // namespace issuescope::indexer

// The default taxonomy (indexer/taxonomies/llm-dl-1.toml) compiled into the binaries: the build
// generates embedded_taxonomy.cc from the file (cmake/EmbedTaxonomy.cmake), so
// `issuescope-indexer` tags with llm-dl/1 without any file installed. Thread-safe (constants).
#pragma once

#include "absl/strings/string_view.h"

namespace issuescope::indexer {

// EmbeddedTaxonomyText returns the bytes of the default taxonomy file.
absl::string_view EmbeddedTaxonomyText();

// EmbeddedTaxonomyName names it in errors and fingerprints ("<embedded>/llm-dl-1.toml").
absl::string_view EmbeddedTaxonomyName();

}  // namespace issuescope::indexer

// The web page's static files (search/web/static/), embedded in the binary at build time: CMake
// runs embed_static.cmake, which turns each file into a byte array of a generated
// static_assets_data.cc. Nothing is read from disk at run time.
//
// The table is immutable; lookups are thread-safe.
#pragma once

#include <cstddef>

#include "absl/strings/string_view.h"

namespace issuescope::search::web {

// StaticAsset is one embedded file.
struct StaticAsset {
  // URL path it is served at, e.g. "/app.js".
  const char* path;
  // Content-Type header value, e.g. "text/javascript; charset=utf-8".
  const char* content_type;
  // The file's bytes (not NUL-terminated as far as `size` is concerned).
  const char* data;
  // Number of bytes.
  size_t size;
};

// FindStaticAsset returns the asset served at `path` ("/" is "/index.html"), or nullptr.
const StaticAsset* FindStaticAsset(absl::string_view path);

// The generated table (static_assets_data.cc).
extern const StaticAsset kStaticAssets[];
// kStaticAssetCount is the number of entries of kStaticAssets.
extern const size_t kStaticAssetCount;

}  // namespace issuescope::search::web

#include "static_assets.h"

namespace issuescope::search::web {

const StaticAsset* FindStaticAsset(absl::string_view path) {
  if (path == "/") path = "/index.html";
  for (size_t i = 0; i < kStaticAssetCount; ++i) {
    if (path == kStaticAssets[i].path) return &kStaticAssets[i];
  }
  return nullptr;
}

}  // namespace issuescope::search::web

// Fuzz target: the coordinator's TOML catalog config (coordinator/catalog_config.h): the whole
// file, and the input as one duration string. A file it accepts applies to CoordinatorOptions,
// and its repositories are RepositorySpecs that survive the wire (UTF-8 strings).
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "coordinator/catalog_config.h"

namespace co = issuescope::coordinator;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto d = co::ParseConfigDuration(text); d.ok() && *d <= absl::ZeroDuration()) {
    __builtin_trap();  // durations are positive
  }
  auto config = co::ParseCatalogConfig(text, "fuzz.toml");
  if (!config.ok()) return 0;
  co::CoordinatorOptions options;
  config->ApplyTo(&options);
  for (const auto& spec : config->repositories) {
    std::string wire;
    issuescope::v1::RepositorySpec back;
    if (!spec.SerializeToString(&wire) || !back.ParseFromString(wire)) __builtin_trap();
  }
  return 0;
}

// Catalog config: the coordinator's TOML file (see docs/CONFIG.md). Example:
//
//   [coordinator]
//   lease_ttl = "15s"            # durations are strings: "500ms", "2s", "1h", "1h30m"
//   heartbeat_interval = "2s"
//   worker_timeout = "10s"
//   home_grace = "30s"           # default 3 × worker_timeout; "0s": none
//   retry_failed_after = "30s"
//   drain_feed_timeout = "10m"   # how long a drained worker waits for the indexers
//   account_reserve = 100        # requests of an account's budget kept per running crawl
//
//   [[repository]]
//   repo = "github:pytorch/pytorch"     # required, TRACKER:OWNER/NAME
//   api_url = "http://127.0.0.1:8080"   # optional, default: the tracker's public API
//   recrawl_interval = "1h"             # optional, default: only when triggered
//   full_recrawl_interval = "168h"      # optional, default: only when triggered
//   include_pull_requests = true        # optional, default true
//
// Every key is optional except `repo`; unknown keys and tables are errors (they are usually
// typos). Errors are INVALID_ARGUMENT "FILE:LINE:COLUMN: FIELD: what is wrong"; a missing or
// unreadable file is NOT_FOUND / UNAVAILABLE naming the file.
//
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "coordinator/coordinator_core.h"
#include "issuescope/v1/coordinator.pb.h"

namespace issuescope::coordinator {

// CatalogConfig is a parsed config file.
struct CatalogConfig {
  // [coordinator] durations; unset when the file does not set them.
  std::optional<absl::Duration> lease_ttl;
  std::optional<absl::Duration> heartbeat_interval;
  std::optional<absl::Duration> worker_timeout;
  std::optional<absl::Duration> retry_failed_after;
  // [coordinator] drain_feed_timeout; unset when the file does not set it.
  std::optional<absl::Duration> drain_feed_timeout;
  // [coordinator] home_grace (zero allowed: no grace); unset when the file does not set it.
  std::optional<absl::Duration> home_grace;
  // [coordinator] account_reserve; unset when the file does not set it.
  std::optional<int64_t> account_reserve;
  // [[repository]] entries, in file order (no two with the same slug).
  std::vector<v1::RepositorySpec> repositories;

  // ApplyTo overwrites the fields of `options` that the file sets.
  void ApplyTo(CoordinatorOptions* options) const;
};

// LoadCatalogConfig reads and parses the file at `path`.
absl::StatusOr<CatalogConfig> LoadCatalogConfig(const std::string& path);

// ParseCatalogConfig parses TOML `text`; `source_name` (e.g. the path) prefixes errors.
absl::StatusOr<CatalogConfig> ParseCatalogConfig(absl::string_view text,
                                                 absl::string_view source_name);

// ParseConfigDuration parses a positive duration such as "500ms", "2s", "1h30m".
absl::StatusOr<absl::Duration> ParseConfigDuration(absl::string_view text);

}  // namespace issuescope::coordinator

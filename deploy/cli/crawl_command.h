// `issuescope crawl`: the one-machine mode. A local coordinator core, one crawler (several
// repositories in parallel) and the indexer run in this process over a data directory:
//
//   DIR/coordinator  catalog, cursors, progress (RocksDB)
//   DIR/store        issues, comments, change log (RocksDB)
//   DIR/index        Xapian index
//
// Re-running it crawls incrementally from the stored cursors (conditional requests).
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace issuescope::cli {

struct CrawlCommandOptions {
  // Repositories as "github:OWNER/NAME".
  std::vector<std::string> repos;
  // Data directory (created if missing).
  std::string data_dir;
  // API base URL; empty means the tracker's public default.
  std::string api_url;
  // Name of the environment variable holding the token; empty means anonymous.
  std::string token_env;
  // Ignore cursors and crawl everything again.
  bool full = false;
  // Repositories crawled at once.
  int parallel = 4;
  // Keep pull requests (they come through the issues API).
  bool include_pull_requests = true;
  // Print JSON summary instead of text.
  bool quiet = false;
};

// RunCrawl runs the crawl and prints progress to stderr and a summary to stdout. Returns a
// non-OK status naming what went wrong (bad repository, unreachable API, unset token variable,
// unwritable data directory, a repository that failed).
absl::Status RunCrawl(const CrawlCommandOptions& options);

// ReadToken returns the token in environment variable `var` ("" for none), or
// INVALID_ARGUMENT when the variable is unset or empty. The error never contains the value.
absl::StatusOr<std::string> ReadToken(const std::string& var);

// EnsureDirectory creates `dir` (and parents) and checks it is writable.
absl::Status EnsureDirectory(const std::string& dir);

}  // namespace issuescope::cli

// `issuescope reparse`: re-derives the issues and comments of a `crawl` data directory from the
// raw pages its store kept (crawler/reparse.h), with this binary's parsers, and brings the index
// up to date. Only records whose re-parsed version differs from the stored one change, so after
// a parser fix exactly the affected issues are re-indexed; nothing is fetched.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace issuescope::cli {

// ReparseCommandOptions are the flags of `issuescope reparse`.
struct ReparseCommandOptions {
  // Data directory of `issuescope crawl` (DIR/store, DIR/index).
  std::string data_dir;
  // One repository ("github:owner/name", "gitlab:group/name", "gitee:owner/name"); empty: all.
  std::string repo;
};

// RunReparse reparses and prints a one-line summary to stdout. Errors: NOT_FOUND when DIR/store
// does not exist, INVALID_ARGUMENT for a bad --repo, the store's or index's errors.
absl::Status RunReparse(const ReparseCommandOptions& options);

}  // namespace issuescope::cli

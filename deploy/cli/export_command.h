// `issuescope export QUERY --format jsonl|csv [--out FILE]`: streams every hit of a query from
// a local data directory's index (--data) or a search service (--server, rpc Export) to a file
// or stdout, for analysis in pandas or R. Memory stays bounded: hits are written as they come.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "query_commands.h"
#include "issuescope/v1/search.pb.h"

namespace issuescope::cli {

// ExportCommandOptions are the flags of `issuescope export`.
struct ExportCommandOptions {
  QueryTarget target;
  // Query in the query language; empty exports every issue.
  std::string query;
  // "jsonl" or "csv", in the one export format of search/export_format.h.
  std::string format = "jsonl";
  // File to write (replaced); stdout when empty.
  std::string out;
  // At most this many hits; 0 means all.
  int64_t limit = 0;
  // Include highlighted snippets.
  bool snippets = false;
};

// RunExport writes every hit of the query. INVALID_ARGUMENT for a bad format or query.
absl::Status RunExport(const ExportCommandOptions& options);

}  // namespace issuescope::cli

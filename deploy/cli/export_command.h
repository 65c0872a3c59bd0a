// `issuescope export QUERY --format jsonl|csv [--out FILE]`: streams every hit of a query from
// a local data directory's index (--data) or a search service (--server, rpc Export) to a file
// or stdout, for analysis in pandas or R. Memory stays bounded: hits are written as they come.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "deploy/cli/query_commands.h"
#include "issuescope/v1/search.pb.h"

namespace issuescope::cli {

// ExportCommandOptions are the flags of `issuescope export`.
struct ExportCommandOptions {
  QueryTarget target;
  // Query in the query language; empty exports every issue.
  std::string query;
  // "jsonl" (HitToJson per line) or "csv" (CsvHeader, then CsvRow per hit).
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

// CsvHeader is the header line of CSV exports (with "\n").
std::string CsvHeader();

// CsvRow renders one hit as a CSV line (RFC 4180 quoting, "\n"-terminated); list columns
// (labels, themes, …) are joined with ';'.
std::string CsvRow(const v1::SearchHit& hit);

// CsvField quotes a field when it holds a comma, quote or line break.
std::string CsvField(const std::string& field);

}  // namespace issuescope::cli

// `issuescope table [--query Q] --by kind,theme,repo [--format markdown|csv]`: the study's
// aggregate tables. Counts the issues matching a query (all issues by default) by one to three
// dimensions (rpc Aggregate, exact) and prints a pivot table: one row per combination of all
// dimensions but the last, one column per value of the last, plus totals; with one dimension,
// one row per value. Local data directory (--data) or search service (--server).
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "query_commands.h"
#include "issuescope/v1/search.pb.h"

namespace issuescope::cli {

// TableCommandOptions are the flags of `issuescope table`.
struct TableCommandOptions {
  QueryTarget target;
  // Query in the query language; empty counts every issue.
  std::string query;
  // One to three dimensions: kind, theme, subtheme, repo, tracker, year, llm, state, type,
  // label, author.
  std::vector<std::string> by;
  // "markdown" or "csv".
  std::string format = "markdown";
};

// RunTable prints the table. INVALID_ARGUMENT for a bad format, query or dimension.
absl::Status RunTable(const TableCommandOptions& options);

// RenderTable renders an aggregation as a pivot table in `format` ("markdown" or "csv").
// Totals are sums of the cells: an issue with several values of a dimension (labels, themes,
// sub-themes) counts once under each, so they can exceed the number of issues, which the
// Markdown form states below the table.
absl::StatusOr<std::string> RenderTable(const v1::AggregateResponse& response,
                                        const std::string& format);

}  // namespace issuescope::cli

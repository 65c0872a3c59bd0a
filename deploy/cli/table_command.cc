#include "table_command.h"

#include <chrono>
#include <map>
#include <set>

#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/csv.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"
#include "export_command.h"
#include "search/export_format.h"
#include "search/searcher.h"

namespace issuescope::cli {
namespace {

// Cell renders one value for `markdown` or CSV.
std::string Cell(const std::string& value, bool markdown) {
  if (!markdown) return CsvQuote(value);
  if (value.empty()) return "(none)";
  return absl::StrReplaceAll(value, {{"|", "\\|"}, {"\n", " "}});
}

std::string Line(const std::vector<std::string>& cells, bool markdown) {
  if (!markdown) return absl::StrCat(absl::StrJoin(cells, ","), "\n");
  return absl::StrCat("| ", absl::StrJoin(cells, " | "), " |\n");
}

absl::StatusOr<v1::AggregateResponse> AggregateVia(const QueryTarget& target,
                                                   const v1::AggregateRequest& request) {
  if (!target.data_dir.empty()) {
    return search::Searcher::ForPath(LocalIndexPath(target))->Aggregate(request);
  }
  v1::AggregateResponse out;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(10));
  ASSIGN_OR_RETURN(std::unique_ptr<v1::Search::Stub> stub, ConnectSearch(target));
  RETURN_IF_ERROR(FromGrpcStatus(stub->Aggregate(&ctx, request, &out)));
  return out;
}

}  // namespace

absl::StatusOr<std::string> RenderTable(const v1::AggregateResponse& response,
                                        const std::string& format) {
  if (format != "markdown" && format != "csv") {
    return absl::InvalidArgumentError(
        absl::StrCat("--format '", format, "' is not markdown or csv"));
  }
  const bool markdown = format == "markdown";
  const int dims = response.dimensions_size();
  if (dims == 0) return absl::InvalidArgumentError("the aggregation has no dimensions");
  // Row keys = all values but the last; columns = values of the last dimension.
  std::map<std::vector<std::string>, std::map<std::string, int64_t>> cells;
  std::set<std::string> columns;
  for (const v1::AggregateRow& row : response.rows()) {
    if (row.values_size() != dims) {
      return absl::DataLossError("an aggregate row does not have one value per dimension");
    }
    std::vector<std::string> key(row.values().begin(), row.values().end() - 1);
    const std::string& column = row.values(dims - 1);
    cells[key][column] += row.count();
    columns.insert(column);
  }
  std::string out;
  std::vector<std::string> header(response.dimensions().begin(), response.dimensions().end() - 1);
  if (dims == 1) {
    header = {response.dimensions(0), "count"};
    out += Line(header, markdown);
    if (markdown) out += Line(std::vector<std::string>(2, "---"), true);
    int64_t sum = 0;
    for (const std::string& column : columns) {
      const int64_t count = cells[{}][column];
      sum += count;
      out += Line({Cell(column, markdown), absl::StrCat(count)}, markdown);
    }
    out += Line({"total", absl::StrCat(sum)}, markdown);
  } else {
    // A column header is never empty: "(none)" heads the issues without a value in both forms.
    for (const std::string& column : columns) {
      header.push_back(column.empty() ? "(none)" : Cell(column, markdown));
    }
    header.push_back("total");
    out += Line(header, markdown);
    if (markdown) out += Line(std::vector<std::string>(header.size(), "---"), true);
    std::map<std::string, int64_t> column_sums;
    int64_t grand = 0;
    for (const auto& [key, row] : cells) {
      std::vector<std::string> line;
      for (const std::string& v : key) line.push_back(Cell(v, markdown));
      int64_t sum = 0;
      for (const std::string& column : columns) {
        auto it = row.find(column);
        const int64_t count = it == row.end() ? 0 : it->second;
        line.push_back(absl::StrCat(count));
        sum += count;
        column_sums[column] += count;
      }
      line.push_back(absl::StrCat(sum));
      grand += sum;
      out += Line(line, markdown);
    }
    std::vector<std::string> totals = {"total"};
    for (int i = 1; i < dims - 1; ++i) totals.push_back("");
    for (const std::string& column : columns) totals.push_back(absl::StrCat(column_sums[column]));
    totals.push_back(absl::StrCat(grand));
    out += Line(totals, markdown);
  }
  if (markdown) {
    absl::StrAppend(&out, "\n", response.total(),
                    " issues matched; an issue with several values of a dimension (labels, "
                    "themes, sub-themes) counts once under each.\n");
  }
  return out;
}

absl::Status RunTable(const TableCommandOptions& options) {
  RETURN_IF_ERROR(CheckQueryTarget(options.target));
  if (options.format != "markdown" && options.format != "csv") {
    return absl::InvalidArgumentError(
        absl::StrCat("--format '", options.format, "' is not markdown or csv"));
  }
  v1::AggregateRequest request;
  request.set_query(options.query);
  for (const std::string& d : options.by) request.add_dimensions(d);
  ASSIGN_OR_RETURN(v1::AggregateResponse response, AggregateVia(options.target, request));
  ASSIGN_OR_RETURN(std::string table, RenderTable(response, options.format));
  absl::PrintF("%s", table);
  return absl::OkStatus();
}

}  // namespace issuescope::cli

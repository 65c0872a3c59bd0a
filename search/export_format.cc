#include "search/export_format.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/csv.h"
#include "common/repo_slug.h"
#include "common/time_util.h"
#include "nlohmann/json.hpp"

namespace issuescope::search {
namespace {

using Strings = google::protobuf::RepeatedPtrField<std::string>;

std::string Date(const google::protobuf::Timestamp& ts) {
  if (ts.seconds() == 0 && ts.nanos() == 0) return "";
  return FormatRfc3339(FromProto(ts));
}

// Cells holds the hit's columns, in kExportColumns order: strings, numbers, lists, and `llm` as
// true, false or null (untagged).
nlohmann::ordered_json Cells(const v1::SearchHit& hit) {
  const v1::Tags& tags = hit.tags();
  auto list = [](const Strings& values) { return std::vector<std::string>(values.begin(), values.end()); };
  nlohmann::ordered_json j;
  j["repo_slug"] = hit.repo_slug();
  j["repo"] = hit.repo();
  j["number"] = hit.number();
  j["title"] = hit.title();
  j["state"] = IssueStateName(hit.state());
  j["is_pull_request"] = hit.is_pull_request();
  j["author"] = hit.author();
  j["labels"] = list(hit.labels());
  j["created_at"] = Date(hit.created_at());
  j["updated_at"] = Date(hit.updated_at());
  j["comment_count"] = hit.comment_count();
  j["url"] = hit.url();
  j["kind"] = tags.kind();
  j["theme"] = tags.theme();
  j["secondary_themes"] = list(tags.secondary_themes());
  j["subthemes"] = list(tags.subthemes());
  j["llm"] = tags.taxonomy().empty() ? nlohmann::ordered_json(nullptr)
                                     : nlohmann::ordered_json(tags.llm());
  j["keywords"] = list(tags.keywords());
  j["score"] = hit.score();
  j["snippet"] = hit.snippet();
  j["deleted"] = hit.deleted();
  j["transferred_to"] = hit.transferred_to();
  return j;
}

std::string CsvText(const nlohmann::ordered_json& cell) {
  if (cell.is_string()) return cell.get<std::string>();
  if (cell.is_null()) return "";
  if (cell.is_boolean()) return cell.get<bool>() ? "true" : "false";
  if (cell.is_array()) {
    std::vector<std::string> parts;
    for (const auto& v : cell) parts.push_back(v.get<std::string>());
    return absl::StrJoin(parts, ";");
  }
  if (cell.is_number_float()) return absl::StrCat(cell.get<double>());
  return cell.dump();
}

}  // namespace

const char* const kExportColumns[] = {
    "repo_slug",  "repo",       "number",        "title", "state", "is_pull_request",
    "author",     "labels",     "created_at",    "updated_at", "comment_count",
    "url",        "kind",       "theme",         "secondary_themes", "subthemes", "llm",
    "keywords",   "score",      "snippet",       "deleted", "transferred_to"};
const size_t kExportColumnCount = sizeof(kExportColumns) / sizeof(kExportColumns[0]);

std::string ExportCsvHeader() {
  std::vector<std::string> names(kExportColumns, kExportColumns + kExportColumnCount);
  return absl::StrCat(absl::StrJoin(names, ","), "\r\n");
}

std::string ExportCsvRow(const v1::SearchHit& hit) {
  const nlohmann::ordered_json cells = Cells(hit);
  std::string row;
  for (size_t i = 0; i < kExportColumnCount; ++i) {
    if (i > 0) row.push_back(',');
    row += CsvQuote(CsvText(cells.at(kExportColumns[i])));
  }
  row += "\r\n";
  return row;
}

std::string ExportJson(const v1::SearchHit& hit) {
  return Cells(hit).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace issuescope::search

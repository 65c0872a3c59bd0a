#include "search/web/json_api.h"

#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/time_util.h>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "nlohmann/json.hpp"

namespace issuescope::search::web {
namespace {

// Timestamp renders an RFC 3339 time, or "" when unset.
std::string Timestamp(const google::protobuf::Timestamp& t) {
  if (t.seconds() == 0 && t.nanos() == 0) return "";
  return google::protobuf::util::TimeUtil::ToString(t);
}

// CsvField quotes `value` when RFC 4180 requires it.
std::string CsvField(absl::string_view value) {
  if (value.find_first_of(",\"\r\n") == absl::string_view::npos) return std::string(value);
  std::string out = "\"";
  for (char c : value) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

template <typename Status>
std::string MessageOf(const Status& s) {
  return std::string(s.message().data(), s.message().size());
}

}  // namespace

int HttpStatusFor(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return 200;
    case grpc::StatusCode::INVALID_ARGUMENT: return 400;
    case grpc::StatusCode::NOT_FOUND: return 404;
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return 429;
    case grpc::StatusCode::UNIMPLEMENTED: return 501;
    case grpc::StatusCode::UNAVAILABLE: return 503;
    case grpc::StatusCode::DEADLINE_EXCEEDED: return 504;
    default: return 500;
  }
}

std::string StatusCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::UNKNOWN: return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED: return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS: return "DATA_LOSS";
    default: return "UNKNOWN";
  }
}

std::string ErrorJson(grpc::StatusCode code, absl::string_view message) {
  nlohmann::json body = {{"code", StatusCodeName(code)}, {"message", std::string(message)}};
  // Replace invalid UTF-8 rather than throw: messages may quote bytes of a bad request.
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string MessageToJson(const google::protobuf::Message& message, bool pretty) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = pretty;
  options.always_print_primitive_fields = true;
  std::string out;
  auto status = google::protobuf::util::MessageToJsonString(message, &out, options);
  if (!status.ok()) {
    // Only invalid UTF-8 in a string field gets here; report it rather than send half a body.
    return ErrorJson(grpc::StatusCode::INTERNAL,
                     absl::StrCat("cannot render ", message.GetTypeName(), " as JSON: ",
                                  MessageOf(status)));
  }
  return out;
}

absl::Status JsonToMessage(absl::string_view json, google::protobuf::Message* message) {
  google::protobuf::util::JsonParseOptions options;
  auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), message, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("request body is not a valid ",
                                                   message->GetTypeName(), " in JSON: ",
                                                   MessageOf(status)));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ParseIntParam(absl::string_view name, absl::string_view value,
                                      int64_t min, int64_t max) {
  int64_t n = 0;
  if (!absl::SimpleAtoi(value, &n) || n < min || n > max) {
    return absl::InvalidArgumentError(absl::StrCat("bad value '", value, "' for parameter '",
                                                   name, "': expected an integer from ", min,
                                                   " to ", max));
  }
  return n;
}

absl::StatusOr<bool> ParseBoolParam(absl::string_view name, absl::string_view value) {
  const std::string v = absl::AsciiStrToLower(value);
  if (v == "true" || v == "1") return true;
  if (v == "false" || v == "0" || v.empty()) return false;
  return absl::InvalidArgumentError(absl::StrCat("bad value '", value, "' for parameter '", name,
                                                 "': expected true or false"));
}

std::vector<std::string> SplitList(absl::string_view value) {
  std::vector<std::string> out;
  for (absl::string_view item : absl::StrSplit(value, ',')) {
    item = absl::StripAsciiWhitespace(item);
    if (!item.empty()) out.emplace_back(item);
  }
  return out;
}

const char* const kCsvColumns[] = {
    "repo_slug", "repo",    "number",           "title",     "state",  "labels",
    "author",    "created_at", "updated_at",    "comment_count", "is_pull_request", "url",
    "score",     "kind",    "theme",            "secondary_themes", "subthemes", "llm",
    "snippet"};
const size_t kCsvColumnCount = sizeof(kCsvColumns) / sizeof(kCsvColumns[0]);

std::string CsvHeader() {
  std::vector<absl::string_view> names(kCsvColumns, kCsvColumns + kCsvColumnCount);
  return absl::StrCat(absl::StrJoin(names, ","), "\r\n");
}

std::string StateName(v1::IssueState state) {
  const std::string name = v1::IssueState_Name(state);
  absl::string_view view = name;
  absl::ConsumePrefix(&view, "ISSUE_STATE_");
  return absl::AsciiStrToLower(view);
}

std::string HitToCsvRow(const v1::SearchHit& hit) {
  const v1::Tags& tags = hit.tags();
  std::vector<std::string> fields = {
      hit.repo_slug(),
      hit.repo(),
      absl::StrCat(hit.number()),
      hit.title(),
      StateName(hit.state()),
      absl::StrJoin(hit.labels(), ";"),
      hit.author(),
      Timestamp(hit.created_at()),
      Timestamp(hit.updated_at()),
      absl::StrCat(hit.comment_count()),
      hit.is_pull_request() ? "true" : "false",
      hit.url(),
      absl::StrCat(hit.score()),
      tags.kind(),
      tags.theme(),
      absl::StrJoin(tags.secondary_themes(), ";"),
      absl::StrJoin(tags.subthemes(), ";"),
      tags.llm() ? "true" : "false",
      hit.snippet(),
  };
  std::string row;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) row += ',';
    row += CsvField(fields[i]);
  }
  row += "\r\n";
  return row;
}

}  // namespace issuescope::search::web

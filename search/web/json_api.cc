#include "json_api.h"

#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/time_util.h>

#include "absl/strings/ascii.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "nlohmann/json.hpp"

namespace issuescope::search::web {
namespace {

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
  // gRPC's codes and absl's are the same numbers (both follow google.rpc.Code).
  std::string name = absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
  return name.empty() ? "UNKNOWN" : name;
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

absl::Status CheckUtf8(absl::string_view what, absl::string_view value) {
  const auto* p = reinterpret_cast<const unsigned char*>(value.data());
  const size_t n = value.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    size_t len = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07;
    }
    bool ok = len != 0 && i + len <= n;
    for (size_t k = 1; ok && k < len; ++k) {
      ok = (p[i + k] & 0xC0) == 0x80;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    ok = ok && cp >= kMin[len] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " is not valid UTF-8 (bad byte 0x", absl::Hex(c, absl::kZeroPad2), " at offset ",
          i, "); percent-encode text as UTF-8"));
    }
    i += len;
  }
  return absl::OkStatus();
}

std::vector<std::string> SplitList(absl::string_view value) {
  std::vector<std::string> out;
  for (absl::string_view item : absl::StrSplit(value, ',')) {
    item = absl::StripAsciiWhitespace(item);
    if (!item.empty()) out.emplace_back(item);
  }
  return out;
}

std::string StateName(v1::IssueState state) {
  const std::string name = v1::IssueState_Name(state);
  absl::string_view view = name;
  absl::ConsumePrefix(&view, "ISSUE_STATE_");
  return absl::AsciiStrToLower(view);
}

}  // namespace issuescope::search::web

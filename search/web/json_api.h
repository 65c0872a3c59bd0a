// The pieces of the HTTP/JSON gateway that do not need a socket: the mapping of gRPC status
// codes to HTTP statuses and JSON error bodies, protobuf's JSON mapping of the API messages
// (lowerCamelCase field names, default values printed, int64 as strings, enums by name), the
// parsing of query-string parameters. (Exported hits: search/export_format.h.)
//
// All functions are pure and thread-safe.
#pragma once

#include <grpcpp/support/status.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"
#include "issuescope/v1/search.pb.h"

namespace issuescope::search::web {

// HttpStatusFor maps a gRPC status code to the HTTP status the gateway answers with:
// OK 200, INVALID_ARGUMENT 400, NOT_FOUND 404, UNAVAILABLE 503, DEADLINE_EXCEEDED 504,
// UNIMPLEMENTED 501, RESOURCE_EXHAUSTED 429, anything else 500.
int HttpStatusFor(grpc::StatusCode code);

// StatusCodeName is the canonical upper-case name of `code` ("INVALID_ARGUMENT").
std::string StatusCodeName(grpc::StatusCode code);

// ErrorJson is the body of every error response: {"code":"NAME","message":"..."}.
std::string ErrorJson(grpc::StatusCode code, absl::string_view message);

// MessageToJson renders `message` with protobuf's JSON mapping: lowerCamelCase names, fields
// with default values printed (so scripts see `"total":"0"`), one line unless `pretty`.
std::string MessageToJson(const google::protobuf::Message& message, bool pretty = false);

// JsonToMessage parses `json` (protobuf's JSON mapping; proto field names are accepted too)
// into `message`. INVALID_ARGUMENT naming the problem for malformed JSON or unknown fields.
absl::Status JsonToMessage(absl::string_view json, google::protobuf::Message* message);

// ParseIntParam parses the decimal query parameter `name`=`value` within [min, max].
// INVALID_ARGUMENT naming the parameter otherwise.
absl::StatusOr<int64_t> ParseIntParam(absl::string_view name, absl::string_view value,
                                      int64_t min, int64_t max);

// ParseBoolParam accepts true/false/1/0 (any case) for parameter `name`.
absl::StatusOr<bool> ParseBoolParam(absl::string_view name, absl::string_view value);

// CheckUtf8 is INVALID_ARGUMENT, naming `what` (e.g. "parameter 'q'") and the offset of the first
// bad byte, when `value` is not valid UTF-8 (overlong forms, surrogates and code points past
// U+10FFFF included); the message never repeats the bad bytes.
absl::Status CheckUtf8(absl::string_view what, absl::string_view value);

// SplitList splits a comma-separated parameter ("repo,label"), trimming blanks and dropping
// empty items.
std::vector<std::string> SplitList(absl::string_view value);

// StateName is the lower-case state of an issue without the enum prefix ("open", "closed").
std::string StateName(v1::IssueState state);

}  // namespace issuescope::search::web

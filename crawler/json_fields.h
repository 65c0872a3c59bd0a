// JSON field readers shared by the forge parsers (GitHub, GitLab, Gitee): each converts one
// member of a parsed nlohmann::json object and returns INVALID_ARGUMENT naming the field when
// it has the wrong type or is missing though required. Nulls count as missing. ParseJson turns
// a body into JSON (INVALID_ARGUMENT "invalid JSON: ..." otherwise); ParseArrayPage parses a
// JSON array page item by item, prefixing errors with "item <i>: ".
// No exception escapes these functions except from the caller's `parse_one`, which callers
// wrap. Thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "google/protobuf/timestamp.pb.h"
#include "nlohmann/json.hpp"

namespace issuescope::crawler::json_fields {

using nlohmann::json;

// FieldError is INVALID_ARGUMENT "field '<field>' <problem>".
absl::Status FieldError(absl::string_view field, absl::string_view problem);

// Member returns obj[name], or nullptr when missing or null (or when obj is not an object).
const json* Member(const json& obj, const char* name);

// RequiredInt reads an integer member that must be present.
absl::StatusOr<int64_t> RequiredInt(const json& obj, const char* name);

// OptionalInt reads an integer member; 0 when missing.
absl::StatusOr<int64_t> OptionalInt(const json& obj, const char* name);

// OptionalBool reads a boolean member; false when missing.
absl::StatusOr<bool> OptionalBool(const json& obj, const char* name);

// OptionalString reads a string member; "" when missing.
absl::StatusOr<std::string> OptionalString(const json& obj, const char* name);

// SetTime parses an RFC 3339 member into `out` (left unset when missing and not required).
absl::Status SetTime(const json& obj, const char* name, bool required,
                     google::protobuf::Timestamp* out);

// UserName returns obj[name][login_key] ("" when obj[name] is missing).
absl::StatusOr<std::string> UserName(const json& obj, const char* name, const char* login_key);

// ParseJson parses a response body.
absl::StatusOr<json> ParseJson(absl::string_view body);

// ParseArrayPage parses a JSON array body with `parse_one(item, &out)`, which appends zero or
// more results and returns a status.
template <typename T, typename Fn>
absl::StatusOr<std::vector<T>> ParseArrayPage(absl::string_view body, Fn parse_one) {
  ASSIGN_OR_RETURN(json page, ParseJson(body));
  if (!page.is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a JSON array of items, got a ", page.type_name()));
  }
  std::vector<T> out;
  out.reserve(page.size());
  for (size_t i = 0; i < page.size(); ++i) {
    absl::Status s;
    try {
      s = parse_one(page[i], &out);
    } catch (const json::exception& e) {
      s = absl::InvalidArgumentError(absl::StrCat("malformed item: ", e.what()));
    }
    if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat("item ", i, ": ", s.message()));
  }
  return out;
}

}  // namespace issuescope::crawler::json_fields

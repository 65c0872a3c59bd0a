// JSON field readers shared by the forge parsers (GitHub, GitLab, Gitee): each converts one
// member of a parsed nlohmann::json object and returns INVALID_ARGUMENT naming the field when
// it has the wrong type or is missing though required. Nulls count as missing for optional
// fields; a required field that is null is an error ("is null"): a null never becomes an empty
// or "unknown" value. ParseJson turns a body into JSON (INVALID_ARGUMENT "invalid JSON: ..."
// otherwise); ParseArrayPage parses a JSON array page item by item, prefixing errors with
// "item <i>: ", and either fails on the first bad item or sets it aside as a BadItem.
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
#include "crawler/github_client.h"
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

// RequiredMember returns obj[name]; "is missing" / "is null" otherwise.
absl::StatusOr<const json*> RequiredMember(const json& obj, const char* name);

// RequiredString reads a string member that must be present and not null (it may be "").
absl::StatusOr<std::string> RequiredString(const json& obj, const char* name);

// OptionalInt reads an integer member; 0 when missing.
absl::StatusOr<int64_t> OptionalInt(const json& obj, const char* name);

// OptionalBool reads a boolean member; false when missing.
absl::StatusOr<bool> OptionalBool(const json& obj, const char* name);

// OptionalString reads a string member; "" when missing.
absl::StatusOr<std::string> OptionalString(const json& obj, const char* name);

// SetTime parses an RFC 3339 member into `out` (left unset when missing or null and not
// required; "is missing" / "is null" when required).
absl::Status SetTime(const json& obj, const char* name, bool required,
                     google::protobuf::Timestamp* out);

// UserName returns obj[name][login_key] ("" when obj[name] is missing).
absl::StatusOr<std::string> UserName(const json& obj, const char* name, const char* login_key);

// ParseJson parses a response body.
absl::StatusOr<json> ParseJson(absl::string_view body);

// ItemKey describes an item by its `key_field` ("number 12", "iid 3", "number I4AB"), "" when
// the item has no readable one.
std::string ItemKey(const json& item, const char* key_field);

// ParseArrayPage parses a JSON array body with `parse_one(item, &out)`, which appends zero or
// more results and returns a status. A body that is not JSON or not an array fails the page.
// An item whose parse_one fails (or throws) fails the page ("item <i>: ...") when `bad` is
// null; otherwise it is left out and described in `bad` (its key read from `key_field`), and
// whatever parse_one appended for it is dropped.
template <typename T, typename Fn>
absl::StatusOr<std::vector<T>> ParseArrayPage(absl::string_view body, const char* key_field,
                                              std::vector<BadItem>* bad, Fn parse_one) {
  ASSIGN_OR_RETURN(json page, ParseJson(body));
  if (!page.is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a JSON array of items, got a ", page.type_name()));
  }
  std::vector<T> out;
  out.reserve(page.size());
  for (size_t i = 0; i < page.size(); ++i) {
    const size_t before = out.size();
    absl::Status s;
    try {
      s = parse_one(page[i], &out);
    } catch (const json::exception& e) {
      s = absl::InvalidArgumentError(absl::StrCat("malformed item: ", e.what()));
    }
    if (s.ok()) continue;
    if (bad == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("item ", i, ": ", s.message()));
    }
    out.resize(before);
    BadItem item;
    item.index = static_cast<int64_t>(i);
    item.key = ItemKey(page[i], key_field);
    item.error = std::string(s.message());
    item.raw = page[i].dump(-1, ' ', false, json::error_handler_t::replace);
    bad->push_back(std::move(item));
  }
  return out;
}

}  // namespace issuescope::crawler::json_fields

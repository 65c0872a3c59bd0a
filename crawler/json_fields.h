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
#include "crawler/github_parse.h"
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

// ReadIssueBasics reads what every GitHub-style issue object (GitHub, Gitee) has: updated_at and
// created_at (required and not null: a null makes the item bad rather than an issue without a
// date), title (required), body (optional, "" when null) into `issue`, and returns its state,
// lower-cased (required), for the tracker to map. Errors name the field.
absl::StatusOr<std::string> ReadIssueBasics(const json& obj, v1::Issue* issue);

// ParseJson parses a response body.
absl::StatusOr<json> ParseJson(absl::string_view body);

// ItemKey describes an item by its `key_field` ("number 12", "iid 3", "number I4AB"), "" when
// the item has no readable one.
std::string ItemKey(const json& item, const char* key_field);

// ParseArrayPage parses a JSON array body with `parse_one(item, &out)`, which appends zero or
// more results and returns a status. A body that is not JSON or not an array fails the page.
// An item whose parse_one fails (or throws) fails the page ("item <i>: ...") when `bad` is
// null; otherwise it is left out and described in `bad` (its key read from `key_field`), and
// whatever parse_one appended for it is dropped. The page is parsed as a stream: each item is
// handed to parse_one as soon as it is complete and then dropped, so only one item's JSON tree
// is in memory at a time, not the whole page's (docs/BENCHMARKS.md, "Parsing a large page").
template <typename T, typename Fn>
absl::StatusOr<std::vector<T>> ParseArrayPage(absl::string_view body, const char* key_field,
                                              std::vector<BadItem>* bad, Fn parse_one) {
  std::vector<T> out;
  absl::Status failed;   // the first failing item, when `bad` is null
  bool top_is_array = false;
  bool top_seen = false;
  size_t index = 0;
  auto item_done = [&](json& item) {
    const size_t i = index++;
    if (!failed.ok()) return;
    const size_t before = out.size();
    absl::Status s;
    try {
      s = parse_one(static_cast<const json&>(item), &out);
    } catch (const json::exception& e) {
      s = absl::InvalidArgumentError(absl::StrCat("malformed item: ", e.what()));
    }
    if (s.ok()) return;
    out.resize(before);
    if (bad == nullptr) {
      failed = absl::InvalidArgumentError(absl::StrCat("item ", i, ": ", s.message()));
      return;
    }
    BadItem bad_item;
    bad_item.index = static_cast<int64_t>(i);
    bad_item.key = ItemKey(item, key_field);
    bad_item.error = std::string(s.message());
    bad_item.raw = item.dump(-1, ' ', false, json::error_handler_t::replace);
    bad->push_back(std::move(bad_item));
  };
  // The callback sees every value as it completes; an item of the top-level array is one that
  // completes at depth 1. Returning false drops it from the tree being built.
  json::parser_callback_t callback = [&](int depth, json::parse_event_t event, json& parsed) {
    if (!top_seen) {
      top_seen = true;
      top_is_array = event == json::parse_event_t::array_start;
    }
    if (!top_is_array || depth != 1) return true;
    if (event == json::parse_event_t::object_end || event == json::parse_event_t::array_end ||
        event == json::parse_event_t::value) {
      item_done(parsed);
      return false;
    }
    return true;
  };
  json page;
  try {
    page = json::parse(body.begin(), body.end(), callback);
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("invalid JSON: ", e.what()));
  }
  if (!page.is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a JSON array of items, got a ", page.type_name()));
  }
  if (!failed.ok()) return failed;
  return out;
}

}  // namespace issuescope::crawler::json_fields

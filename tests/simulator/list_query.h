// List queries: the raw query string of a request, GitHub's list parameters parsed from it
// (state, since, sort, direction, per_page, page, labels) with GitHub's defaults, and the
// pagination `Link` header built from it. Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace issuescope::sim {

// QueryParam is one `key=value` of a query string: raw (as sent) and percent-decoded.
struct QueryParam {
  std::string raw;    // "since=2024-01-01T00%3A00%3A00Z"
  std::string key;    // decoded key
  std::string value;  // decoded value
};

// ParseQueryString splits the query part of a request target ("/p?a=1&b=2" or "a=1&b=2").
std::vector<QueryParam> ParseQueryString(absl::string_view target);

// ListQuery is a parsed list request.
struct ListQuery {
  // kProgressing and kRejected are Gitee's extra states; there kOpen and kClosed mean exactly
  // "open" and "closed" (see Repository::StateName).
  enum class State { kOpen, kClosed, kAll, kProgressing, kRejected };
  enum class Sort { kCreated, kUpdated, kComments };
  State state = State::kOpen;
  std::optional<int64_t> since;  // Unix seconds; only records with updated_at >= since
  Sort sort = Sort::kCreated;
  bool ascending = false;
  int per_page = 30;     // 1..100 (larger values are clamped to 100)
  int64_t page = 1;      // >= 1
  std::vector<std::string> labels;  // all must be present
};

// ListKind says which endpoint's defaults and parameters apply.
enum class ListKind {
  kIssues,         // state/labels/sort(created|updated|comments), direction default desc
  kRepoComments,   // sort(created|updated), direction default asc
  kIssueComments,  // since, per_page, page only
};

// ValidationError names the query field whose value is bad.
struct ValidationError {
  std::string field;
  std::string value;
};

// ParseListQuery parses `params` for `kind`; on a bad value returns the field that was wrong.
std::optional<ValidationError> ParseListQuery(const std::vector<QueryParam>& params,
                                              ListKind kind, ListQuery* out);

// BuildLinkHeader returns GitHub's Link header for `page` of a list with `total` records, or ""
// when there is nothing to link (everything fits on page 1). `url` is the absolute URL without
// query; `params` are the request's parameters (page is replaced, or appended, in each link).
// Order as GitHub: prev, next, last, first. rel="last" is omitted when the request has a
// `since` parameter (GitHub leaves it out of incremental listings), and on the last page.
std::string BuildLinkHeader(const std::string& url, const std::vector<QueryParam>& params,
                            int64_t page, int per_page, int64_t total);

}  // namespace issuescope::sim

// GitHub REST v3 response parsing: issues, comments, the repository object, `Link` pagination
// headers and rate-limit headers. Pure functions without I/O; the crawl loop (RepoCrawler) does
// the requests. Bodies are taken as text, so callers need no JSON library; ParseIssue and
// ParseComment take an already parsed object (nlohmann::json, forward-declared here).
//
// Errors: a body that is not JSON, a page that is not an array, a missing required field
// (number, id, updated_at) or a field of the wrong type → INVALID_ARGUMENT naming the field and,
// for pages, the item index. Nulls and missing optional fields are tolerated.
// Thread-safety: all functions are thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "crawler/http_transport.h"
#include "issuescope/v1/model.pb.h"
#include "nlohmann/json_fwd.hpp"

namespace issuescope::crawler {

// ParseIssue converts one GitHub issue object. `repo` becomes Issue.repo; key is the decimal
// number; fetched_at is left unset.
absl::StatusOr<v1::Issue> ParseIssue(const nlohmann::json& object, const v1::RepositoryRef& repo);

// ParseIssuesPage parses a JSON array of issues (one listing page).
absl::StatusOr<std::vector<v1::Issue>> ParseIssuesPage(absl::string_view body,
                                                       const v1::RepositoryRef& repo);

// ParseComment converts one GitHub issue comment object; the issue number is the last path
// segment of `issue_url`.
absl::StatusOr<v1::Comment> ParseComment(const nlohmann::json& object,
                                         const v1::RepositoryRef& repo);

// ParseCommentsPage parses a JSON array of issue comments.
absl::StatusOr<std::vector<v1::Comment>> ParseCommentsPage(absl::string_view body,
                                                           const v1::RepositoryRef& repo);

// IsPullRequestComment reports whether a comment belongs to a pull request (its html_url names
// a /pull/ page).
bool IsPullRequestComment(const v1::Comment& comment);

// RepositoryInfo is what the crawler needs from `GET /repos/{owner}/{repo}`.
struct RepositoryInfo {
  // "owner/name" with the tracker's casing.
  std::string full_name;
  // Open issues and pull requests, as GitHub counts them; -1 when absent.
  int64_t open_issues_count = -1;
};

// ParseRepository parses a repository object.
absl::StatusOr<RepositoryInfo> ParseRepository(absl::string_view body);

// ParseLinkHeader parses an RFC 8288 `Link` header as GitHub writes it
// (`<url>; rel="next", <url>; rel="last"`) into rel → url. A link with several rels
// (rel="next last") is entered under each. Malformed parts are skipped.
std::map<std::string, std::string> ParseLinkHeader(absl::string_view header);

// RateLimit is the rate-limit state a response reports.
struct RateLimit {
  // X-RateLimit-Limit; -1 when absent.
  int64_t limit = -1;
  // X-RateLimit-Remaining; -1 when absent.
  int64_t remaining = -1;
  // X-RateLimit-Used; -1 when absent.
  int64_t used = -1;
  // X-RateLimit-Reset as a time; absl::InfinitePast() when absent.
  absl::Time reset = absl::InfinitePast();
  // X-RateLimit-Resource ("core", "search", ...); empty when absent.
  std::string resource;
};

// ParseRateLimit reads the X-RateLimit-* headers; unparsable values count as absent.
RateLimit ParseRateLimit(const HttpHeaders& headers);

// ParseRetryAfter reads `Retry-After` (delta seconds or an HTTP-date, relative to `now`);
// nullopt when absent or unparsable. Never negative.
std::optional<absl::Duration> ParseRetryAfter(const HttpHeaders& headers, absl::Time now);

// ParseHttpDate parses an IMF-fixdate ("Thu, 22 Aug 2013 02:13:10 GMT").
std::optional<absl::Time> ParseHttpDate(absl::string_view text);

}  // namespace issuescope::crawler

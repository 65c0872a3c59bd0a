// GitHub REST v3 response parsing: issues, comments, the repository object, `Link` pagination
// headers and rate-limit headers. Pure functions without I/O; the crawl loop (RepoCrawler) does
// the requests. Bodies are taken as text, so callers need no JSON library; ParseIssue and
// ParseComment take an already parsed object (nlohmann::json, forward-declared here).
//
// Errors: a body that is not JSON, a page that is not an array, a missing or null required
// field (issues: number, id, updated_at, created_at, title, state; comments: id, updated_at,
// issue_url) or a field of the wrong type → INVALID_ARGUMENT naming the field and, for pages,
// the item index. Nulls and missing optional fields are tolerated. The page parsers can set bad
// items aside (BadItem) instead of failing the page, so one bad item does not block the rest.
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

// BadItem is one item of a listing page that cannot be used: a field of the wrong type, a
// required field missing or null, an unknown state, a comment of another repository — or,
// judged by the crawl loop, an updated_at beyond the tracker's clock. Such an error is
// deterministic (the same page gives it again), so the item is quarantined
// (IssueStore::PutQuarantined), not retried, and the rest of the page is used.
struct BadItem {
  // Position on the page (0-based).
  int64_t index = 0;
  // The item's key as the tracker sent it ("number 12", "iid 3", "id 77"); "" when unreadable.
  std::string key;
  // What is wrong, naming the field.
  std::string error;
  // The item's JSON (as received, re-serialised).
  std::string raw;
};

// ParseIssue converts one GitHub issue object. `repo` becomes Issue.repo; key is the decimal
// number; fetched_at is left unset.
absl::StatusOr<v1::Issue> ParseIssue(const nlohmann::json& object, const v1::RepositoryRef& repo);

// ParseIssuesPage parses a JSON array of issues (one listing page). With `bad`, items that do
// not parse are left out and described there; without, the first one fails the page.
absl::StatusOr<std::vector<v1::Issue>> ParseIssuesPage(absl::string_view body,
                                                       const v1::RepositoryRef& repo,
                                                       std::vector<BadItem>* bad = nullptr);

// ParseComment converts one GitHub issue comment object; the issue number is the last path
// segment of `issue_url`. When `issues_prefix` is not empty (the crawled repository's
// "<api>/repos/OWNER/NAME/issues/"), issue_url must be that prefix and a number (compared
// without case): a comment naming another host or repository is INVALID_ARGUMENT.
absl::StatusOr<v1::Comment> ParseComment(const nlohmann::json& object,
                                         const v1::RepositoryRef& repo,
                                         absl::string_view issues_prefix = "");

// ParseCommentsPage parses a JSON array of issue comments (`issues_prefix` and `bad` as for
// ParseComment and ParseIssuesPage).
absl::StatusOr<std::vector<v1::Comment>> ParseCommentsPage(absl::string_view body,
                                                           const v1::RepositoryRef& repo,
                                                           absl::string_view issues_prefix = "",
                                                           std::vector<BadItem>* bad = nullptr);

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

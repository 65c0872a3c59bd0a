// Tracker: what differs between forges (GitHub REST v3, GitLab v4, Gitee/GitCode v5) for the
// crawl loop. A Tracker builds the URLs of the repository object and of the issue and comment
// listings, adds its credentials to a request, parses pages into v1::Issue / v1::Comment, finds
// the next page and reads rate-limit and total-count headers. Everything else — cursors, ETags,
// shift repair, retries, rate-limit waits, page budgets, storage — lives once in RepoCrawler
// (crawler/repo_crawler.h), which drives any Tracker.
//
// GithubTracker and GiteeTracker share GithubStyleTracker (crawler/github_tracker.h): Gitee v5
// copied GitHub's REST URLs, repository object, Link paging and X-RateLimit-* headers, so it
// implements only its credentials, parsers, issue keys and total_page paging.
//
// Comments come in one of two shapes: a repository-wide listing sorted by updated_at with a
// `since` parameter (GitHub, Gitee), or one listing per issue, fetched only for issues that
// changed (GitLab notes).
//
// URLs a Tracker returns never contain the token; Authorize adds it to the request about to be
// sent (a header, or Gitee's access_token query parameter), so errors and logs built from the
// crawl's URLs cannot leak it. Implementations are stateless and thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "crawler/github_parse.h"
#include "crawler/http_transport.h"
#include "issuescope/v1/model.pb.h"

namespace issuescope::crawler {

// TrackerRepo is where a repository lives on its tracker, as the crawl currently knows it
// (the owner and name change when the tracker reports the repository moved).
struct TrackerRepo {
  // API base URL without a trailing '/', e.g. "https://gitlab.com/api/v4".
  std::string base;
  // Owner (user, organisation or GitLab namespace path, which may contain '/').
  std::string owner;
  // Repository (project) name.
  std::string name;
};

// CommentListing is how a tracker lists comments.
enum class CommentListing {
  // One repository-wide listing sorted by updated_at, resumable with `since` (GitHub, Gitee).
  kRepositoryWide,
  // One listing per issue, complete each time (GitLab notes).
  kPerIssue,
};

// Tracker: see the file comment.
class Tracker {
 public:
  virtual ~Tracker() = default;

  // kind names the forge.
  virtual v1::Tracker kind() const = 0;
  // comment_listing says how comments are listed.
  virtual CommentListing comment_listing() const = 0;

  // Authorize adds the forge's Accept header and, when `token` is not empty, the credentials.
  virtual void Authorize(absl::string_view token, HttpRequest* request) const = 0;

  // RepositoryUrl is the URL of the repository object.
  virtual std::string RepositoryUrl(const TrackerRepo& repo) const = 0;
  // ParseRepository reads the repository object (full name with the tracker's casing, open
  // issue count). INVALID_ARGUMENT for a body that is not a repository object.
  virtual absl::StatusOr<RepositoryInfo> ParseRepository(absl::string_view body) const = 0;

  // IssuesUrl is the first page of the issue listing, oldest update first, from `since`
  // (inclusive) when set.
  virtual std::string IssuesUrl(const TrackerRepo& repo, const std::optional<absl::Time>& since,
                                int per_page) const = 0;
  // ParseIssues parses one page of the issue listing. A body that is not a JSON array is
  // INVALID_ARGUMENT. An item that does not parse (wrong type, required field missing or null,
  // unknown state) is left out and described in `bad` (a BadItem naming the index, key and
  // field); with `bad` null it fails the page instead (INVALID_ARGUMENT "item i: ...").
  virtual absl::StatusOr<std::vector<v1::Issue>> ParseIssues(
      absl::string_view body, const v1::RepositoryRef& repo, std::vector<BadItem>* bad) const = 0;

  // CommentsUrl is the first page of the repository-wide comment listing (kRepositoryWide).
  virtual std::string CommentsUrl(const TrackerRepo& repo, const std::optional<absl::Time>& since,
                                  int per_page) const = 0;
  // IssueCommentsUrl is the first page of the comments of one issue (kPerIssue).
  virtual std::string IssueCommentsUrl(const TrackerRepo& repo, const v1::Issue& issue,
                                       int per_page) const = 0;
  // ParseComments parses one page of comments; `issue` is the issue of a per-issue listing
  // (nullptr for a repository-wide one). Comments that belong to no issue of the listing (e.g.
  // pull-request comments Gitee mixes in) are left out. `where` is the repository listed: a
  // comment that names another host or repository (GitHub's issue_url) is a bad item, never
  // filed under a number of this one. Bad items as for ParseIssues.
  virtual absl::StatusOr<std::vector<v1::Comment>> ParseComments(
      absl::string_view body, const v1::RepositoryRef& repo, const v1::Issue* issue,
      const TrackerRepo& where, std::vector<BadItem>* bad) const = 0;
  // IsPullRequestComment reports whether a repository-wide comment belongs to a pull request.
  virtual bool IsPullRequestComment(const v1::Comment& comment) const { return false; }

  // NextPageUrl returns the URL of the page after the one fetched from `url`, or nullopt on
  // the last page.
  virtual std::optional<std::string> NextPageUrl(absl::string_view url,
                                                 const HttpResponse& response) const = 0;
  // EstimatedTotal estimates the items of a listing from its first page's headers; 0 when
  // the headers do not tell.
  virtual int64_t EstimatedTotal(const HttpResponse& first_page, int per_page) const = 0;
  // ParseRateLimit reads the rate-limit headers of a response (fields -1 / InfinitePast when
  // absent).
  virtual RateLimit ParseRateLimit(const HttpHeaders& headers) const = 0;
};

// MakeTracker returns the Tracker of a forge; INVALID_ARGUMENT for TRACKER_UNSPECIFIED or an
// unknown value.
absl::StatusOr<std::unique_ptr<Tracker>> MakeTracker(v1::Tracker kind);

// SetQueryParam returns `url` with query parameter `name` set to `value` (replacing the first
// occurrence, or appended). `value` is inserted as given (callers encode it).
std::string SetQueryParam(absl::string_view url, absl::string_view name, absl::string_view value);

// QueryParam returns the value of query parameter `name` in `url` ("" when absent).
std::string QueryParam(absl::string_view url, absl::string_view name);

// UrlEncodeTime formats `t` as RFC 3339 UTC for a query string ("2024-01-31T12%3A00%3A00Z").
std::string UrlEncodeTime(absl::Time t);

// PercentEncode encodes every byte outside [A-Za-z0-9._~-] (so '/' becomes %2F).
std::string PercentEncode(absl::string_view text);

// HeaderInt reads an integer header; -1 when absent, empty or not an integer.
int64_t HeaderInt(const HttpHeaders& headers, absl::string_view name);

// ItemsInPages returns pages × per_page for an estimate from a page count a tracker sent,
// saturating at INT64_MAX instead of overflowing (a hostile or broken header can name any page);
// 0 when either is not positive.
int64_t ItemsInPages(int64_t pages, int per_page);

// NextFromLink returns the `Link rel="next"` URL of a response, if any.
std::optional<std::string> NextFromLink(const HttpResponse& response);

}  // namespace issuescope::crawler

// GiteeTracker: the Tracker of Gitee / GitCode REST v5 (base URL "https://gitee.com/api/v5"),
// and its parsers.
//
// Requests:
//   GET {base}/repos/{owner}/{repo}
//   GET {base}/repos/{owner}/{repo}/issues?state=all&sort=updated&direction=asc&per_page=N
//       [&since=T]
//   GET {base}/repos/{owner}/{repo}/issues/comments?sort=updated&direction=asc&per_page=N
//       [&since=T]
// Auth: the `access_token` query parameter, added by Authorize to the request being sent only
// (the crawl's URLs, errors and logs never hold it; Redact() blanks it anyway). Pages:
// `Link rel="next"` when sent, else page+1 while page < the `total_page` header. Estimate:
// `total_count`. Rate limits: X-RateLimit-* when sent.
// Issue keys are strings ("I1DACG"): Issue.key keeps it and Issue.number is the base-36 value
// of the characters after the leading "I" (GiteeIssueNumber). States: open → OPEN,
// progressing → PROGRESSING, closed → CLOSED, rejected → REJECTED with state_reason
// "rejected"; finished_at → closed_at. Comments name their issue by key (target.issue.number);
// pull-request comments (no target.issue) are left out.
// Stateless; thread-safe.
#pragma once

#include <vector>

#include "crawler/tracker.h"

namespace issuescope::crawler {

// GiteeIssueNumber decodes a Gitee issue key: "I" followed by [0-9A-Z]+ read as base 36.
// INVALID_ARGUMENT naming the key for anything else (or a value that overflows or is 0).
absl::StatusOr<int64_t> GiteeIssueNumber(absl::string_view key);

// ParseGiteeIssuesPage parses a page (JSON array) of Gitee issues.
absl::StatusOr<std::vector<v1::Issue>> ParseGiteeIssuesPage(absl::string_view body,
                                                            const v1::RepositoryRef& repo);

// ParseGiteeCommentsPage parses a page of Gitee issue comments (repository-wide listing, or
// the comments of one issue when `issue` is given, which then supplies a missing target).
absl::StatusOr<std::vector<v1::Comment>> ParseGiteeCommentsPage(absl::string_view body,
                                                                const v1::RepositoryRef& repo,
                                                                const v1::Issue* issue);

// GiteeTracker: see the file comment.
class GiteeTracker : public Tracker {
 public:
  v1::Tracker kind() const override { return v1::TRACKER_GITEE; }
  CommentListing comment_listing() const override { return CommentListing::kRepositoryWide; }
  void Authorize(absl::string_view token, HttpRequest* request) const override;
  std::string RepositoryUrl(const TrackerRepo& repo) const override;
  absl::StatusOr<RepositoryInfo> ParseRepository(absl::string_view body) const override;
  std::string IssuesUrl(const TrackerRepo& repo, const std::optional<absl::Time>& since,
                        int per_page) const override;
  absl::StatusOr<std::vector<v1::Issue>> ParseIssues(
      absl::string_view body, const v1::RepositoryRef& repo) const override;
  std::string CommentsUrl(const TrackerRepo& repo, const std::optional<absl::Time>& since,
                          int per_page) const override;
  // IssueCommentsUrl is /issues/{key}/comments (unused by the crawl loop for Gitee).
  std::string IssueCommentsUrl(const TrackerRepo& repo, const v1::Issue& issue,
                               int per_page) const override;
  absl::StatusOr<std::vector<v1::Comment>> ParseComments(
      absl::string_view body, const v1::RepositoryRef& repo,
      const v1::Issue* issue) const override;
  std::optional<std::string> NextPageUrl(absl::string_view url,
                                         const HttpResponse& response) const override;
  int64_t EstimatedTotal(const HttpResponse& first_page, int per_page) const override;
  RateLimit ParseRateLimit(const HttpHeaders& headers) const override;
};

}  // namespace issuescope::crawler

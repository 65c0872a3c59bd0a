// GiteeTracker: the Tracker of Gitee / GitCode REST v5 (base URL "https://gitee.com/api/v5"),
// and its parsers. Gitee copied GitHub's REST shape, so GiteeTracker is a GithubStyleTracker
// (crawler/github_tracker.h) that differs in credentials, parsers, issue keys and paging headers.
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

#include "github_tracker.h"

namespace issuescope::crawler {

// GiteeIssueNumber decodes a Gitee issue key: "I" followed by [0-9A-Z]+ read as base 36.
// INVALID_ARGUMENT naming the key for anything else (or a value that overflows or is 0).
absl::StatusOr<int64_t> GiteeIssueNumber(absl::string_view key);

// ParseGiteeIssuesPage parses a page (JSON array) of Gitee issues.
// With `bad`, items that do not parse are left out and described there (see Tracker).
absl::StatusOr<std::vector<v1::Issue>> ParseGiteeIssuesPage(absl::string_view body,
                                                            const v1::RepositoryRef& repo,
                                                            std::vector<BadItem>* bad = nullptr);

// ParseGiteeCommentsPage parses a page of Gitee issue comments (repository-wide listing, or
// the comments of one issue when `issue` is given, which then supplies a missing target).
absl::StatusOr<std::vector<v1::Comment>> ParseGiteeCommentsPage(
    absl::string_view body, const v1::RepositoryRef& repo, const v1::Issue* issue,
    std::vector<BadItem>* bad = nullptr);

// GiteeTracker: see the file comment.
class GiteeTracker : public GithubStyleTracker {
 public:
  v1::Tracker kind() const override { return v1::TRACKER_GITEE; }
  void Authorize(absl::string_view token, HttpRequest* request) const override;
  absl::StatusOr<std::vector<v1::Issue>> ParseIssues(
      absl::string_view body, const v1::RepositoryRef& repo,
      std::vector<BadItem>* bad) const override;
  // ParseComments: Gitee names a comment's issue by key (target.issue), not by URL.
  absl::StatusOr<std::vector<v1::Comment>> ParseComments(
      absl::string_view body, const v1::RepositoryRef& repo, const v1::Issue* issue,
      const TrackerRepo& where, std::vector<BadItem>* bad) const override;
  // NextPageUrl: `Link rel="next"` when sent, else page+1 while page < `total_page`.
  std::optional<std::string> NextPageUrl(absl::string_view url,
                                         const HttpResponse& response) const override;
  int64_t EstimatedTotal(const HttpResponse& first_page, int per_page) const override;

 protected:
  // IssuePathKey: the issue's string key ("I1DACG").
  std::string IssuePathKey(const v1::Issue& issue) const override { return issue.key(); }
};

}  // namespace issuescope::crawler

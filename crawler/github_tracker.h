// GithubTracker: the Tracker of GitHub REST v3 (api.github.com, GitHub Enterprise, or the
// simulator's GitHub dialect), on the parsers of crawler/github_client.h.
//
// Requests: GET {base}/repos/{owner}/{name}; the issue listing
// /issues?state=all&sort=updated&direction=asc&per_page=N[&since=T] and the repository-wide
// comment listing /issues/comments?sort=updated&direction=asc&per_page=N[&since=T]; pages
// follow `Link rel="next"`. Auth: "Authorization: Bearer <token>". Rate limits: X-RateLimit-*.
// Estimate: Link rel="last" page × per_page. Stateless; thread-safe.
#pragma once

#include "crawler/tracker.h"

namespace issuescope::crawler {

// GithubTracker: see the file comment.
class GithubTracker : public Tracker {
 public:
  v1::Tracker kind() const override { return v1::TRACKER_GITHUB; }
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
  // IssueCommentsUrl is /issues/{number}/comments (unused by the crawl loop for GitHub).
  std::string IssueCommentsUrl(const TrackerRepo& repo, const v1::Issue& issue,
                               int per_page) const override;
  absl::StatusOr<std::vector<v1::Comment>> ParseComments(
      absl::string_view body, const v1::RepositoryRef& repo,
      const v1::Issue* issue) const override;
  // IsPullRequestComment: the comment's html_url names a /pull/ page.
  bool IsPullRequestComment(const v1::Comment& comment) const override;
  std::optional<std::string> NextPageUrl(absl::string_view url,
                                         const HttpResponse& response) const override;
  int64_t EstimatedTotal(const HttpResponse& first_page, int per_page) const override;
  RateLimit ParseRateLimit(const HttpHeaders& headers) const override;
};

}  // namespace issuescope::crawler

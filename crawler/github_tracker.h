// GithubTracker: the Tracker of GitHub REST v3 (api.github.com, GitHub Enterprise, or the
// simulator's GitHub dialect), on the parsers of crawler/github_parse.h; and GithubStyleTracker,
// what GitHub shares with the forges that copied its API (Gitee/GitCode v5).
//
// Requests: GET {base}/repos/{owner}/{name}; the issue listing
// /issues?state=all&sort=updated&direction=asc&per_page=N[&since=T] and the repository-wide
// comment listing /issues/comments?sort=updated&direction=asc&per_page=N[&since=T]; pages
// follow `Link rel="next"`. Auth: "Authorization: Bearer <token>". Rate limits: X-RateLimit-*.
// Estimate: Link rel="last" page × per_page. Stateless; thread-safe.
#pragma once

#include <string>

#include "tracker.h"

namespace issuescope::crawler {

// GithubStyleTracker is the part of a Tracker that follows GitHub REST v3's shape: the URLs
// above (an issue's comments at /issues/{IssuePathKey}/comments?per_page=N), the repository
// object (full_name, open_issues_count), `Link rel="next"` paging and X-RateLimit-* headers, and
// a repository-wide comment listing. A forge deriving from it implements its credentials,
// parsers and estimate, and overrides only what it does differently. Stateless; thread-safe.
class GithubStyleTracker : public Tracker {
 public:
  CommentListing comment_listing() const override { return CommentListing::kRepositoryWide; }
  std::string RepositoryUrl(const TrackerRepo& repo) const override;
  absl::StatusOr<RepositoryInfo> ParseRepository(absl::string_view body) const override;
  std::string IssuesUrl(const TrackerRepo& repo, const std::optional<absl::Time>& since,
                        int per_page) const override;
  std::string CommentsUrl(const TrackerRepo& repo, const std::optional<absl::Time>& since,
                          int per_page) const override;
  // IssueCommentsUrl is /issues/{IssuePathKey}/comments (unused by the crawl loop for a
  // repository-wide comment listing).
  std::string IssueCommentsUrl(const TrackerRepo& repo, const v1::Issue& issue,
                               int per_page) const override;
  std::optional<std::string> NextPageUrl(absl::string_view url,
                                         const HttpResponse& response) const override;
  RateLimit ParseRateLimit(const HttpHeaders& headers) const override;

 protected:
  // IssuePathKey names an issue in a URL path. Default: its number.
  virtual std::string IssuePathKey(const v1::Issue& issue) const;
};

// GithubTracker: see the file comment.
class GithubTracker : public GithubStyleTracker {
 public:
  v1::Tracker kind() const override { return v1::TRACKER_GITHUB; }
  void Authorize(absl::string_view token, HttpRequest* request) const override;
  absl::StatusOr<std::vector<v1::Issue>> ParseIssues(
      absl::string_view body, const v1::RepositoryRef& repo,
      std::vector<BadItem>* bad) const override;
  // ParseComments: a comment's issue_url must be {base}/repos/{owner}/{name}/issues/{number}.
  absl::StatusOr<std::vector<v1::Comment>> ParseComments(
      absl::string_view body, const v1::RepositoryRef& repo, const v1::Issue* issue,
      const TrackerRepo& where, std::vector<BadItem>* bad) const override;
  // IsPullRequestComment: the comment's html_url names a /pull/ page.
  bool IsPullRequestComment(const v1::Comment& comment) const override;
  int64_t EstimatedTotal(const HttpResponse& first_page, int per_page) const override;
};

}  // namespace issuescope::crawler

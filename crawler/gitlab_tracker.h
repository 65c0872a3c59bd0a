// GitlabTracker: the Tracker of GitLab REST v4 (gitlab.com or self-hosted; base URL
// "https://gitlab.com/api/v4"), and its parsers.
//
// Requests (the project is addressed by its URL-encoded path, "group%2Fsub%2Fproject"):
//   GET {base}/projects/{path}
//   GET {base}/projects/{path}/issues?scope=all&state=all&order_by=updated_at&sort=asc
//       &per_page=N[&updated_after=T]
//   GET {base}/projects/{path}/issues/{iid}/notes?sort=asc&order_by=created_at&per_page=N
// Notes have no repository-wide listing: the crawl loop fetches the notes of an issue only when
// it is new or its updated_at or user_notes_count changed. System notes ("changed the label")
// are kept with Comment.system = true.
// Pages: `Link rel="next"`, else the X-Next-Page header (GitLab omits X-Total/X-Total-Pages above
// 10,000 results, but X-Next-Page stays). Auth: "PRIVATE-TOKEN: <token>". Rate limits:
// RateLimit-Limit/-Remaining/-Reset/-Observed (X-RateLimit-* as a fallback). Estimate: X-Total,
// else X-Total-Pages × per_page.
// Issues: iid → number and key (decimal); description → body; state opened/closed (locked →
// open); labels (names or objects); author.username; assignees[].username; user_notes_count →
// comment_count; upvotes + downvotes → reactions; web_url → url.
// Stateless; thread-safe.
#pragma once

#include <vector>

#include "tracker.h"

namespace issuescope::crawler {

// ParseGitlabIssuesPage parses a page (JSON array) of GitLab issues. INVALID_ARGUMENT names
// the item index and field.
// With `bad`, items that do not parse are left out and described there (see Tracker).
absl::StatusOr<std::vector<v1::Issue>> ParseGitlabIssuesPage(absl::string_view body,
                                                             const v1::RepositoryRef& repo,
                                                             std::vector<BadItem>* bad = nullptr);

// ParseGitlabNotesPage parses a page of the notes of `issue` (issue_number and the note URL
// "<issue url>#note_<id>" come from it).
absl::StatusOr<std::vector<v1::Comment>> ParseGitlabNotesPage(absl::string_view body,
                                                              const v1::RepositoryRef& repo,
                                                              const v1::Issue& issue,
                                                              std::vector<BadItem>* bad = nullptr);

// ParseGitlabProject parses a project object: full_name = path_with_namespace,
// open_issues_count when present.
absl::StatusOr<RepositoryInfo> ParseGitlabProject(absl::string_view body);

// ParseGitlabRateLimit reads RateLimit-* (falling back to X-RateLimit-*).
RateLimit ParseGitlabRateLimit(const HttpHeaders& headers);

// GitlabTracker: see the file comment.
class GitlabTracker : public Tracker {
 public:
  v1::Tracker kind() const override { return v1::TRACKER_GITLAB; }
  CommentListing comment_listing() const override { return CommentListing::kPerIssue; }
  void Authorize(absl::string_view token, HttpRequest* request) const override;
  std::string RepositoryUrl(const TrackerRepo& repo) const override;
  absl::StatusOr<RepositoryInfo> ParseRepository(absl::string_view body) const override;
  std::string IssuesUrl(const TrackerRepo& repo, const std::optional<absl::Time>& since,
                        int per_page) const override;
  absl::StatusOr<std::vector<v1::Issue>> ParseIssues(
      absl::string_view body, const v1::RepositoryRef& repo,
      std::vector<BadItem>* bad) const override;
  // CommentsUrl: GitLab has no repository-wide note listing; returns "".
  std::string CommentsUrl(const TrackerRepo& repo, const std::optional<absl::Time>& since,
                          int per_page) const override;
  std::string IssueCommentsUrl(const TrackerRepo& repo, const v1::Issue& issue,
                               int per_page) const override;
  // ParseComments: INVALID_ARGUMENT when `issue` is null (notes are listed per issue).
  absl::StatusOr<std::vector<v1::Comment>> ParseComments(
      absl::string_view body, const v1::RepositoryRef& repo, const v1::Issue* issue,
      const TrackerRepo& where, std::vector<BadItem>* bad) const override;
  std::optional<std::string> NextPageUrl(absl::string_view url,
                                         const HttpResponse& response) const override;
  int64_t EstimatedTotal(const HttpResponse& first_page, int per_page) const override;
  RateLimit ParseRateLimit(const HttpHeaders& headers) const override;
};

}  // namespace issuescope::crawler

#include "github_tracker.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "re2/re2.h"

namespace issuescope::crawler {
namespace {

std::string RepoPath(const TrackerRepo& repo) {
  return absl::StrCat(repo.base, "/repos/", repo.owner, "/", repo.name);
}

// SortedListing is `path` of the repository sorted by updated_at, oldest first, from `since`.
std::string SortedListing(const TrackerRepo& repo, absl::string_view path,
                          const std::optional<absl::Time>& since, int per_page) {
  std::string url =
      absl::StrCat(RepoPath(repo), path, "sort=updated&direction=asc&per_page=", per_page);
  if (since) absl::StrAppend(&url, "&since=", UrlEncodeTime(*since));
  return url;
}

}  // namespace

std::string GithubStyleTracker::RepositoryUrl(const TrackerRepo& repo) const {
  return RepoPath(repo);
}

absl::StatusOr<RepositoryInfo> GithubStyleTracker::ParseRepository(absl::string_view body) const {
  return crawler::ParseRepository(body);
}

std::string GithubStyleTracker::IssuesUrl(const TrackerRepo& repo,
                                          const std::optional<absl::Time>& since,
                                          int per_page) const {
  return SortedListing(repo, "/issues?state=all&", since, per_page);
}

std::string GithubStyleTracker::CommentsUrl(const TrackerRepo& repo,
                                            const std::optional<absl::Time>& since,
                                            int per_page) const {
  return SortedListing(repo, "/issues/comments?", since, per_page);
}

std::string GithubStyleTracker::IssueCommentsUrl(const TrackerRepo& repo, const v1::Issue& issue,
                                                 int per_page) const {
  return absl::StrCat(RepoPath(repo), "/issues/", IssuePathKey(issue),
                      "/comments?per_page=", per_page);
}

std::string GithubStyleTracker::IssuePathKey(const v1::Issue& issue) const {
  return absl::StrCat(issue.number());
}

std::optional<std::string> GithubStyleTracker::NextPageUrl(absl::string_view /*url*/,
                                                           const HttpResponse& response) const {
  return NextFromLink(response);
}

RateLimit GithubStyleTracker::ParseRateLimit(const HttpHeaders& headers) const {
  return crawler::ParseRateLimit(headers);
}

void GithubTracker::Authorize(absl::string_view token, HttpRequest* request) const {
  request->headers.Add("Accept", "application/vnd.github+json");
  if (!token.empty()) request->headers.Add("Authorization", absl::StrCat("Bearer ", token));
}

absl::StatusOr<std::vector<v1::Issue>> GithubTracker::ParseIssues(
    absl::string_view body, const v1::RepositoryRef& repo, std::vector<BadItem>* bad) const {
  return ParseIssuesPage(body, repo, bad);
}

absl::StatusOr<std::vector<v1::Comment>> GithubTracker::ParseComments(
    absl::string_view body, const v1::RepositoryRef& repo, const v1::Issue* /*issue*/,
    const TrackerRepo& where, std::vector<BadItem>* bad) const {
  return ParseCommentsPage(body, repo, absl::StrCat(RepoPath(where), "/issues/"), bad);
}

bool GithubTracker::IsPullRequestComment(const v1::Comment& comment) const {
  return crawler::IsPullRequestComment(comment);
}

int64_t GithubTracker::EstimatedTotal(const HttpResponse& first_page, int per_page) const {
  // GitHub sends rel="last" only sometimes; at most last_page × per_page items.
  const auto links = ParseLinkHeader(first_page.headers.Get("Link"));
  auto last = links.find("last");
  if (last == links.end()) return 0;
  static const re2::RE2 kPage(R"([?&]page=(\d+))");
  std::string digits;
  int64_t page = 0;
  if (re2::RE2::PartialMatch(last->second, kPage, &digits) && absl::SimpleAtoi(digits, &page)) {
    return ItemsInPages(page, per_page);
  }
  return 0;
}

}  // namespace issuescope::crawler

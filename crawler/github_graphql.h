// The GitHub GraphQL side of a crawl: the two queries the crawler sends and the parsers of their
// answers into the same v1::Issue / v1::Comment records the REST parsers make
// (crawler/github_parse.h), so everything downstream is unchanged.
//
//  - IssuesPageBody: one page of a repository's issues ordered by UPDATED_AT ascending from a
//    `since` (inclusive) and a keyset cursor, each with its labels, assignees, reaction count and
//    first 100 comments nested. GitHub charges a query one request per connection instance
//    (issues, then labels, assignees, reactions and comments once per issue): 1 + 4n requests
//    for n issues, divided by 100 and rounded, so up to kIssuesPerPointPage (37) issues cost one
//    point (docs/BENCHMARKS.md, "GraphQL crawl").
//  - CommentPagesBody: the next page of comments of up to kThreadsPerQuery long threads at once
//    (one aliased `issue(number:)` each; one comments connection per thread: at most 1 point).
//
// GraphQL answers 200 with an `errors` array for most failures; ParseGraphqlErrors maps them to
// statuses: RATE_LIMITED -> RESOURCE_EXHAUSTED, MAX_NODE_LIMIT_EXCEEDED -> OUT_OF_RANGE (ask for
// fewer), NOT_FOUND of the repository -> NOT_FOUND, anything else -> INVALID_ARGUMENT with
// GitHub's message. Thread-safe (pure functions).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "crawler/github_parse.h"
#include "issuescope/v1/model.pb.h"

namespace issuescope::crawler {

// kIssuesPerPointPage is the most issues a page may ask for and still cost 1 point.
inline constexpr int kIssuesPerPointPage = 37;
// kCommentsPerIssue is how many comments an issue page nests per issue (GitHub's maximum).
inline constexpr int kCommentsPerIssue = 100;
// kThreadsPerQuery is how many long threads one follow-up query continues.
inline constexpr int kThreadsPerQuery = 50;
// kLabelsPerIssue / kAssigneesPerIssue bound the nested lists; an issue with more is fetched
// again over REST (GraphqlIssuesPage::refetch).
inline constexpr int kLabelsPerIssue = 100;
inline constexpr int kAssigneesPerIssue = 20;

// GraphqlRate is a response's rateLimit object.
struct GraphqlRate {
  int64_t cost = -1;
  int64_t remaining = -1;
  absl::Time reset = absl::InfinitePast();
};

// ThreadCursor is where a long thread's comments continue.
struct ThreadCursor {
  int64_t number = 0;
  std::string after;  // the endCursor of the comments fetched so far
};

// GraphqlIssuesPage is one parsed issue page.
struct GraphqlIssuesPage {
  std::vector<v1::Issue> issues;
  std::vector<v1::Comment> comments;  // the nested comments of every issue, in issue order
  std::vector<ThreadCursor> more_comments;  // threads with comments beyond the nested page
  std::vector<int64_t> refetch;  // issues with more labels or assignees than the page nests
  bool has_next = false;
  std::string end_cursor;
  GraphqlRate rate;
  std::vector<BadItem> bad;  // issues and comments that did not parse
};

// GraphqlCommentPages is one parsed follow-up answer.
struct GraphqlCommentPages {
  std::vector<v1::Comment> comments;
  std::vector<ThreadCursor> more_comments;  // threads still not complete
  std::vector<int64_t> missing;  // threads whose issue no longer resolves (deleted, moved)
  GraphqlRate rate;
  std::vector<BadItem> bad;
};

// GraphqlNumbersPage is one page of the numbers-only listing (the presence sweep).
struct GraphqlNumbersPage {
  std::vector<int64_t> numbers;
  bool has_next = false;
  std::string end_cursor;
  GraphqlRate rate;
};

// IssueNumbersBody is the JSON body of one page of a repository's issue numbers (100, oldest
// created first, after `after`): no nested connection, so 1 point per 100 issues.
std::string IssueNumbersBody(absl::string_view owner, absl::string_view name,
                             const std::string& after);

// ParseGraphqlNumbersPage parses the answer to IssueNumbersBody; a node without a positive
// number fails the page (a sweep must not take an unreadable issue for a vanished one).
absl::StatusOr<GraphqlNumbersPage> ParseGraphqlNumbersPage(absl::string_view body);

// IssuesPageBody is the JSON body of one issue page query of owner/name: `first` issues
// (1..kIssuesPerPointPage ... 100) after `after` (empty: from the start) updated at or after
// `since` (none: all).
std::string IssuesPageBody(absl::string_view owner, absl::string_view name, int first,
                           const std::string& after, const std::optional<absl::Time>& since);

// CommentPagesBody is the JSON body continuing `threads` (at most kThreadsPerQuery).
std::string CommentPagesBody(absl::string_view owner, absl::string_view name,
                             const std::vector<ThreadCursor>& threads);

// ParseGraphqlIssuesPage parses the answer to IssuesPageBody for repository `repo`.
absl::StatusOr<GraphqlIssuesPage> ParseGraphqlIssuesPage(absl::string_view body,
                                                         const v1::RepositoryRef& repo);

// ParseGraphqlCommentPages parses the answer to CommentPagesBody (each thread answers under
// the alias "i" + its number, so the answer alone says which issue a comment belongs to).
absl::StatusOr<GraphqlCommentPages> ParseGraphqlCommentPages(absl::string_view body,
                                                             const v1::RepositoryRef& repo);

// IsGraphqlTimeout says whether a response is GitHub cutting a query off (502/504, or its
// "Something went wrong while executing your query" error): ask for fewer nodes.
bool IsGraphqlTimeout(int http_status, absl::string_view body);

}  // namespace issuescope::crawler

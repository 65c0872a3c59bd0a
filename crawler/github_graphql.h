// The GitHub GraphQL side of a crawl: the queries the crawler sends and the parsers of their
// answers into the same v1::Comment records the REST parsers make (crawler/github_parse.h), so
// everything downstream is unchanged.
//
// Why comments, and only comments: GitHub charges a query one request per connection instance,
// divided by 100 and rounded to the nearest point. Every connection nested under an issue page
// (labels, assignees, reactions, comments) thus costs 1/100 point per issue: exactly what REST
// charges per issue for the whole issue object (100 per request). Issues therefore stay on
// REST; comments are where GraphQL wins: one `comments(first: k)` connection costs 1/100 point
// for up to k ≤ 100 comments, against REST's 1/100 request per comment.
//
//  - CommentPagesBody: comment pages of up to kThreadsPerQuery issues at once, one aliased
//    `issue(number:)` each with its own `first` and `after` (one comments connection per issue:
//    100 issues cost 1 point). The REST listing says how many comments each issue has, so a
//    query asks for no more comments than there are (GitHub cuts off queries by the work they
//    ask for: 100 issues × `first: 100` fails where the same issues with their real counts do
//    not) and none for an issue without comments.
//  - ParseGraphqlThreadsPage reads the raw pages of an earlier release, which nested the comments
//    under a page of issues ordered by UPDATED_AT (`issuescope reparse`).
//  - IssueNumbersBody: the numbers of every issue, 100 per point (the presence sweep).
//
// GraphQL answers 200 with an `errors` array for most failures; the parsers map them to
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

// kCommentsPerIssue is the most comments one query asks for per issue (GitHub's maximum `first`).
inline constexpr int kCommentsPerIssue = 100;
// kThreadsPerQuery is the most issues one comment query asks about: 100 comments connections,
// 1 point.
inline constexpr int kThreadsPerQuery = 100;

// GraphqlRate is a response's rateLimit object.
struct GraphqlRate {
  int64_t cost = -1;
  int64_t remaining = -1;
  absl::Time reset = absl::InfinitePast();
};

// ThreadCursor is where an issue's comments (its thread) continue.
struct ThreadCursor {
  int64_t number = 0;
  std::string after;  // the endCursor of the comments fetched so far (empty: from the first)
  int first = kCommentsPerIssue;  // comments asked for, 1..kCommentsPerIssue
};

// GraphqlThreadsPage is one parsed threads page.
struct GraphqlThreadsPage {
  std::vector<int64_t> numbers;       // the issues listed, in order
  std::vector<absl::Time> updated;    // their updatedAt, in the same order
  std::vector<v1::Comment> comments;  // their nested comments, in issue order
  std::vector<ThreadCursor> more_comments;  // threads with comments beyond the nested page
  bool has_next = false;
  std::string end_cursor;
  GraphqlRate rate;
  std::vector<BadItem> bad;  // comments that did not parse
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

// RateLimitBody asks only for the rateLimit object: GitHub charges it nothing, so a crawl that
// does not know its token's GraphQL budget learns it without risking a refused query.
std::string RateLimitBody();

// ParseGraphqlRate reads the rateLimit object of any answer (INVALID_ARGUMENT without one).
absl::StatusOr<GraphqlRate> ParseGraphqlRate(absl::string_view body);

// IssueNumbersBody is the JSON body of one page of a repository's issue numbers (100, oldest
// created first, after `after`): no nested connection, so 1 point per 100 issues.
std::string IssueNumbersBody(absl::string_view owner, absl::string_view name,
                             const std::string& after);

// ParseGraphqlNumbersPage parses the answer to IssueNumbersBody; a node without a positive
// number fails the page (a sweep must not take an unreadable issue for a vanished one).
absl::StatusOr<GraphqlNumbersPage> ParseGraphqlNumbersPage(absl::string_view body);

// CommentPagesBody is the JSON body asking for the next comments of each of `threads` (at most
// kThreadsPerQuery): `first` of them after `after`.
std::string CommentPagesBody(absl::string_view owner, absl::string_view name,
                             const std::vector<ThreadCursor>& threads);

// ParseGraphqlThreadsPage parses a threads page of an earlier release (a page of issues, each
// with its first comments nested) for repository `repo`. An issue
// node without a number or updatedAt fails the page (its comments could not be filed).
absl::StatusOr<GraphqlThreadsPage> ParseGraphqlThreadsPage(absl::string_view body,
                                                           const v1::RepositoryRef& repo);

// ParseGraphqlCommentPages parses the answer to CommentPagesBody(`asked`) (each thread answers
// under the alias "i" + its number, so the answer alone says which issue a comment belongs to).
// A thread that is null with a NOT_FOUND error naming it is `missing` (the issue is gone); one
// left out of the answer (every thread of `asked` must be there; reparse passes none) or null
// for another reason fails the answer, so a thread is never taken as complete when it is not.
absl::StatusOr<GraphqlCommentPages> ParseGraphqlCommentPages(
    absl::string_view body, const v1::RepositoryRef& repo,
    const std::vector<ThreadCursor>& asked = {});

// IsGraphqlTimeout says whether a response is GitHub cutting a query off (502/504, or its
// "Something went wrong while executing your query" error): ask for fewer nodes.
bool IsGraphqlTimeout(int http_status, absl::string_view body);

}  // namespace issuescope::crawler

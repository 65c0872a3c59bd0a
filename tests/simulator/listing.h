// Listing: selects one page of a repository's issues or comments for a ListQuery, using the
// repository's sorted indexes — `since` is a binary search when sorting by updated_at, and an
// unfiltered listing costs O(page + log n) — so big corpora list fast. Ties in the sort key are
// broken by issue number (comment id) ascending in both directions, so paging is deterministic.
// Pure functions over a Repository the caller keeps locked for reading.
#pragma once

#include <cstdint>
#include <vector>

#include "tests/simulator/corpus.h"
#include "tests/simulator/list_query.h"

namespace issuescope::sim {

// ListPage is one page: positions into Repository::issues (or ::comments) and the number of
// records matching the query on all pages.
struct ListPage {
  std::vector<uint32_t> positions;
  int64_t total = 0;
};

// SelectIssues pages GET /repos/{o}/{r}/issues.
ListPage SelectIssues(const Repository& repo, const ListQuery& query);

// SelectRepoComments pages GET /repos/{o}/{r}/issues/comments.
ListPage SelectRepoComments(const Repository& repo, const ListQuery& query);

// SelectIssueComments pages GET /repos/{o}/{r}/issues/{n}/comments (oldest first).
ListPage SelectIssueComments(const Repository& repo, const Issue& issue, const ListQuery& query);

// SelectIssueCommentsOrdered pages one issue's comments (GitLab notes, Gitee comments) ordered by
// (created_at or updated_at per query.sort, id), ascending or descending per query.ascending.
ListPage SelectIssueCommentsOrdered(const Repository& repo, const Issue& issue,
                                    const ListQuery& query);

}  // namespace issuescope::sim

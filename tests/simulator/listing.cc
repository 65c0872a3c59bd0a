#include "tests/simulator/listing.h"

#include <algorithm>

namespace issuescope::sim {
namespace {

// SliceInOrder returns the records at order positions [offset, offset+count) of `sorted[lo,hi)`,
// which is sorted by (key, tiebreak) ascending. Descending order reverses the key but keeps
// ties in ascending tiebreak order, so only whole tie groups at the page's edges are examined.
template <typename KeyFn>
std::vector<uint32_t> SliceInOrder(const std::vector<uint32_t>& sorted, size_t lo, size_t hi,
                                   bool ascending, int64_t offset, int count, KeyFn key) {
  std::vector<uint32_t> out;
  const int64_t n = static_cast<int64_t>(hi - lo);
  if (offset >= n || count <= 0) return out;
  const int64_t take = std::min<int64_t>(count, n - offset);
  if (ascending) {
    for (int64_t k = 0; k < take; ++k) out.push_back(sorted[lo + offset + k]);
    return out;
  }
  // Descending: the window [a, b] (ascending positions) covering the page, widened to whole
  // tie groups.
  int64_t a = static_cast<int64_t>(hi) - 1 - offset - (take - 1);
  int64_t b = static_cast<int64_t>(hi) - 1 - offset;
  while (a > static_cast<int64_t>(lo) && key(sorted[a - 1]) == key(sorted[a])) --a;
  while (b + 1 < static_cast<int64_t>(hi) && key(sorted[b + 1]) == key(sorted[b])) ++b;
  // Walk tie groups from the top of the window down; within a group keep ascending order.
  int64_t group_end = b;
  while (group_end >= a) {
    int64_t group_start = group_end;
    while (group_start > a && key(sorted[group_start - 1]) == key(sorted[group_end])) {
      --group_start;
    }
    // Descending order position of ascending position p in this group:
    //   (hi - 1 - group_end) + (p - group_start).
    for (int64_t p = group_start; p <= group_end; ++p) {
      const int64_t order = (static_cast<int64_t>(hi) - 1 - group_end) + (p - group_start);
      if (order >= offset && order < offset + take) out.push_back(sorted[p]);
    }
    group_end = group_start - 1;
  }
  return out;
}

int64_t Offset(const ListQuery& q) { return (q.page - 1) * static_cast<int64_t>(q.per_page); }

bool IssueMatches(const Issue& issue, const ListQuery& q) {
  // Only Gitee issues carry "progressing"/"rejected" in state_reason.
  const bool progressing = issue.open && issue.state_reason == "progressing";
  const bool rejected = !issue.open && issue.state_reason == "rejected";
  if (q.state == ListQuery::State::kOpen && (!issue.open || progressing)) return false;
  if (q.state == ListQuery::State::kClosed && (issue.open || rejected)) return false;
  if (q.state == ListQuery::State::kProgressing && !progressing) return false;
  if (q.state == ListQuery::State::kRejected && !rejected) return false;
  if (q.since && issue.updated_at < *q.since) return false;
  for (const std::string& l : q.labels) {
    if (std::find(issue.labels.begin(), issue.labels.end(), l) == issue.labels.end()) {
      return false;
    }
  }
  return true;
}

}  // namespace

ListPage SelectIssues(const Repository& repo, const ListQuery& q) {
  const auto& issues = repo.issues;
  auto created = [&](uint32_t p) { return issues[p].created_at; };
  auto updated = [&](uint32_t p) { return issues[p].updated_at; };
  auto comments = [&](uint32_t p) { return static_cast<int64_t>(issues[p].comments.size()); };
  ListPage page;
  const bool by_updated = q.sort == ListQuery::Sort::kUpdated;
  const std::vector<uint32_t>& index = by_updated ? repo.issues_by_updated : repo.issues_by_created;
  const bool unfiltered = q.state == ListQuery::State::kAll && q.labels.empty();
  if (q.sort != ListQuery::Sort::kComments && unfiltered && (!q.since || by_updated)) {
    size_t lo = 0;
    if (q.since) {
      lo = static_cast<size_t>(
          std::lower_bound(index.begin(), index.end(), *q.since,
                           [&](uint32_t p, int64_t t) { return issues[p].updated_at < t; }) -
          index.begin());
    }
    page.total = static_cast<int64_t>(index.size() - lo);
    page.positions = by_updated
        ? SliceInOrder(index, lo, index.size(), q.ascending, Offset(q), q.per_page, updated)
        : SliceInOrder(index, lo, index.size(), q.ascending, Offset(q), q.per_page, created);
    return page;
  }
  std::vector<uint32_t> matched;
  for (uint32_t p : index) {
    if (IssueMatches(issues[p], q)) matched.push_back(p);
  }
  page.total = static_cast<int64_t>(matched.size());
  if (q.sort == ListQuery::Sort::kComments) {
    std::stable_sort(matched.begin(), matched.end(), [&](uint32_t a, uint32_t b) {
      if (comments(a) != comments(b)) return comments(a) < comments(b);
      return issues[a].number < issues[b].number;
    });
    page.positions = SliceInOrder(matched, 0, matched.size(), q.ascending, Offset(q), q.per_page,
                                  comments);
  } else if (by_updated) {
    page.positions = SliceInOrder(matched, 0, matched.size(), q.ascending, Offset(q), q.per_page,
                                  updated);
  } else {
    page.positions = SliceInOrder(matched, 0, matched.size(), q.ascending, Offset(q), q.per_page,
                                  created);
  }
  return page;
}

ListPage SelectRepoComments(const Repository& repo, const ListQuery& q) {
  const auto& comments = repo.comments;
  auto created = [&](uint32_t p) { return comments[p].created_at; };
  auto updated = [&](uint32_t p) { return comments[p].updated_at; };
  const bool by_updated = q.sort == ListQuery::Sort::kUpdated;
  const std::vector<uint32_t>& index =
      by_updated ? repo.comments_by_updated : repo.comments_by_created;
  ListPage page;
  if (!q.since || by_updated) {
    size_t lo = 0;
    if (q.since) {
      lo = static_cast<size_t>(
          std::lower_bound(index.begin(), index.end(), *q.since,
                           [&](uint32_t p, int64_t t) { return comments[p].updated_at < t; }) -
          index.begin());
    }
    page.total = static_cast<int64_t>(index.size() - lo);
    page.positions = by_updated
        ? SliceInOrder(index, lo, index.size(), q.ascending, Offset(q), q.per_page, updated)
        : SliceInOrder(index, lo, index.size(), q.ascending, Offset(q), q.per_page, created);
    return page;
  }
  std::vector<uint32_t> matched;
  for (uint32_t p : index) {
    if (comments[p].updated_at >= *q.since) matched.push_back(p);
  }
  page.total = static_cast<int64_t>(matched.size());
  page.positions =
      SliceInOrder(matched, 0, matched.size(), q.ascending, Offset(q), q.per_page, created);
  return page;
}

ListPage SelectIssueComments(const Repository& repo, const Issue& issue, const ListQuery& q) {
  std::vector<uint32_t> matched;
  for (uint32_t p : issue.comments) {
    if (!q.since || repo.comments[p].updated_at >= *q.since) matched.push_back(p);
  }
  ListPage page;
  page.total = static_cast<int64_t>(matched.size());
  page.positions = SliceInOrder(matched, 0, matched.size(), /*ascending=*/true, Offset(q),
                                q.per_page, [](uint32_t) { return 0; });
  return page;
}

ListPage SelectIssueCommentsOrdered(const Repository& repo, const Issue& issue,
                                    const ListQuery& q) {
  const bool by_updated = q.sort == ListQuery::Sort::kUpdated;
  auto key = [&](uint32_t p) {
    const Comment& c = repo.comments[p];
    return std::make_pair(by_updated ? c.updated_at : c.created_at, c.id);
  };
  std::vector<uint32_t> matched;
  for (uint32_t p : issue.comments) {
    if (!q.since || repo.comments[p].updated_at >= *q.since) matched.push_back(p);
  }
  std::sort(matched.begin(), matched.end(), [&](uint32_t a, uint32_t b) {
    return q.ascending ? key(a) < key(b) : key(b) < key(a);
  });
  ListPage page;
  page.total = static_cast<int64_t>(matched.size());
  const int64_t offset = Offset(q);
  for (int64_t k = offset; k < page.total && k < offset + q.per_page; ++k) {
    page.positions.push_back(matched[static_cast<size_t>(k)]);
  }
  return page;
}

}  // namespace issuescope::sim

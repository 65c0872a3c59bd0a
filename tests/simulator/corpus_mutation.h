// Corpus mutation: changes applied to a live corpus at the current simulator time, as a tracker
// changes under a crawler — new issues, edited issues (title and body change, updated_at bumps),
// new comments (bumping their issue's updated_at and comment count, as GitHub does) and closed
// issues. Deterministic for a given seed and corpus. Thread-compatible: the caller holds the
// corpus's write lock.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/simulator/corpus.h"

namespace issuescope::sim {

// MutationSpec says how many changes of each kind to make.
struct MutationSpec {
  uint64_t seed = 1;       // chooses issues and text
  int new_issues = 0;      // issues (or pull requests) created now
  int edited_issues = 0;   // existing issues whose title and body change
  int new_comments = 0;    // comments added to existing issues
  int closed_issues = 0;   // open issues closed (fewer when not enough are open)
  int deleted_issues = 0;  // issues (not pull requests) deleted: GET answers 410
  // Issues (not pull requests) transferred to another repository of the same tracker in the
  // corpus (none when there is no other): GET answers 301 to the new place.
  int transferred_issues = 0;
  std::string repo;        // "[tracker:]owner/name" to confine changes to; "" spreads them over all
};

// IssueRef names one issue.
struct IssueRef {
  std::string repo;  // "owner/name"
  int64_t number = 0;  // GitHub number, GitLab iid, Gitee decoded key
  std::string tracker = "github";
  bool operator==(const IssueRef& o) const {
    return repo == o.repo && number == o.number && tracker == o.tracker;
  }
};

// IssueMove is a transferred issue: where it was and where it is now.
struct IssueMove {
  IssueRef from;
  IssueRef to;
};

// MutationResult says exactly what changed.
struct MutationResult {
  std::vector<IssueRef> changed_issues;  // each changed issue once, in order of first change
  std::vector<int64_t> new_comment_ids;  // ids of the comments created
  std::vector<IssueRef> deleted;         // issues deleted
  std::vector<IssueMove> transferred;    // issues transferred
};

// ApplyMutation applies `spec` at time `now` (Unix seconds). INVALID_ARGUMENT for negative
// counts; NOT_FOUND when spec.repo names no repository.
absl::StatusOr<MutationResult> ApplyMutation(Corpus& corpus, const MutationSpec& spec,
                                             int64_t now);

}  // namespace issuescope::sim

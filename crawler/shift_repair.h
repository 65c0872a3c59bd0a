// Shift repair: the pure planning behind a listing pass (crawler/repo_crawler.h uses it). Offset
// pagination over a listing sorted by updated_at can skip an item when another item that was
// already read is updated meanwhile and moves to the end (everything behind it shifts one place
// forward). Every page remembers the tracker's `Date` and the last updated_at on it. After a
// pass, the items whose updated_at is at or after the first page's Date (− 1 s) changed while we
// paged; the first page fetched after the earliest such change marks where skipping could
// start, so a repair pass re-lists from the last updated_at before that page. Nothing changed →
// no repair, no extra request.
//
// Plain values and functions; no I/O; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace issuescope::crawler {

// PageMark is what shift repair needs to know about one page.
struct PageMark {
  absl::Time date;                          // tracker's Date (or our clock) at the response
  std::optional<absl::Time> last_updated;   // greatest updated_at on the page
};

// PassResult is one pass over a listing.
struct PassResult {
  bool not_modified = false;
  std::string first_etag;
  std::vector<PageMark> pages;
  std::vector<absl::Time> updated;          // updated_at of every item listed
  std::optional<absl::Time> max_updated;
  bool truncated = false;                   // stopped early: the lease's page budget is spent
};

// RepairPlan says whether and from where a pass must be repaired.
struct RepairPlan {
  bool needed = false;
  // Where the repair pass lists from: the last updated_at before the first page that can have
  // been shifted, or the pass's own `since` when no earlier page had an item.
  std::optional<absl::Time> since;
};

// PlanRepair plans the repair of `pass`, which listed from `pass_since` (nullopt: from the
// start). A pass of at most one page never needs one (no page boundary to skip at).
RepairPlan PlanRepair(const PassResult& pass, const std::optional<absl::Time>& pass_since);

// PartialSince is where the next listing must start after a pass that stopped early: the start
// a repair would use when items changed while paging, else the greatest updated_at stored.
std::optional<absl::Time> PartialSince(const PassResult& pass,
                                       const std::optional<absl::Time>& pass_since);

}  // namespace issuescope::crawler

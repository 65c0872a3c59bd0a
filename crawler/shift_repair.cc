#include "shift_repair.h"

namespace issuescope::crawler {

RepairPlan PlanRepair(const PassResult& pass, const std::optional<absl::Time>& pass_since) {
  RepairPlan plan;
  // A listing that fit on one page was served whole: there is no page boundary to skip at.
  if (pass.pages.size() <= 1) return plan;
  const absl::Time start = pass.pages.front().date - absl::Seconds(1);
  std::optional<absl::Time> earliest_change;
  for (absl::Time t : pass.updated) {
    if (t >= start && (!earliest_change || t < *earliest_change)) earliest_change = t;
  }
  if (!earliest_change) return plan;
  plan.needed = true;
  // j: the first page served at or after the change (timestamps have one-second resolution).
  size_t j = pass.pages.size() - 1;
  for (size_t i = 0; i < pass.pages.size(); ++i) {
    if (pass.pages[i].date >= *earliest_change - absl::Seconds(1)) {
      j = i;
      break;
    }
  }
  // A change before the first response shifts nothing; within its second, the earliest boundary
  // that can have been affected is the one after the first page.
  if (j == 0) j = 1;
  plan.since = pass_since;
  for (size_t i = j; i > 0; --i) {
    if (pass.pages[i - 1].last_updated) {
      plan.since = pass.pages[i - 1].last_updated;
      break;
    }
  }
  return plan;
}

std::optional<absl::Time> PartialSince(const PassResult& pass,
                                       const std::optional<absl::Time>& pass_since) {
  RepairPlan plan = PlanRepair(pass, pass_since);
  if (plan.needed) return plan.since;
  return pass.max_updated ? pass.max_updated : pass_since;
}

}  // namespace issuescope::crawler

#include "crawler/rate_budget.h"

namespace issuescope::crawler {

void RateBudget::Update(const RateLimit& seen) {
  if (seen.remaining < 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (budget_.remaining < 0 || seen.reset > budget_.reset) {
    budget_ = seen;  // first news, or a newer window
  } else if (seen.reset == budget_.reset && seen.remaining < budget_.remaining) {
    budget_ = seen;  // the same window, seen later
  }
}

RateLimit RateBudget::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return budget_;
}

absl::Time RateBudget::SpentUntil(absl::Time now) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (budget_.remaining != 0 || budget_.reset == absl::InfinitePast()) return absl::InfinitePast();
  // The tracker's reset is in whole seconds; one more second keeps us past it.
  const absl::Time until = budget_.reset + absl::Seconds(1);
  return until > now ? until : absl::InfinitePast();
}

}  // namespace issuescope::crawler

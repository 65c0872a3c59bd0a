// RateBudget: responses of concurrent crawls arrive in any order; the budget keeps the newest
// window and the smallest remaining count seen in it.
#include "crawler/rate_budget.h"

#include "gtest/gtest.h"

namespace issuescope::crawler {
namespace {

RateLimit Seen(int64_t remaining, int64_t reset_unix) {
  RateLimit r;
  r.limit = 5000;
  r.remaining = remaining;
  r.reset = absl::FromUnixSeconds(reset_unix);
  return r;
}

TEST(RateBudget, KeepsTheNewestWindowAndItsSmallestRemaining) {
  RateBudget budget;
  EXPECT_EQ(budget.Snapshot().remaining, -1);
  budget.Update(Seen(10, 1000));
  budget.Update(Seen(12, 1000));  // an older response of the same window, arriving late
  EXPECT_EQ(budget.Snapshot().remaining, 10);
  budget.Update(Seen(4999, 4600));  // a new window
  EXPECT_EQ(budget.Snapshot().remaining, 4999);
  budget.Update(Seen(0, 1000));  // a late response of the old window changes nothing
  EXPECT_EQ(budget.Snapshot().remaining, 4999);
  RateLimit unknown;
  budget.Update(unknown);  // a response without headers changes nothing
  EXPECT_EQ(budget.Snapshot().remaining, 4999);
}

TEST(RateBudget, SpentUntilOneSecondPastTheReset) {
  RateBudget budget;
  const absl::Time now = absl::FromUnixSeconds(900);
  EXPECT_EQ(budget.SpentUntil(now), absl::InfinitePast());
  budget.Update(Seen(0, 1000));
  EXPECT_EQ(budget.SpentUntil(now), absl::FromUnixSeconds(1001));
  EXPECT_EQ(budget.SpentUntil(absl::FromUnixSeconds(1001)), absl::InfinitePast());
  budget.Update(Seen(1, 1000));  // higher than 0 in the same window: a stale response
  EXPECT_EQ(budget.SpentUntil(now), absl::FromUnixSeconds(1001));
}

}  // namespace
}  // namespace issuescope::crawler

// Shift repair planning (crawler/shift_repair.h) as pure values: which passes need a repair, and
// where the repair (or the next lease, after a pass cut short) must list from.
#include "crawler/shift_repair.h"

#include "gtest/gtest.h"

namespace issuescope::crawler {
namespace {

absl::Time T(int s) { return absl::FromUnixSeconds(1700000000 + s); }

// Page builds a page served at second `date` whose greatest updated_at is `last` (< 0: none).
PageMark Page(int date, int last) {
  PageMark p;
  p.date = T(date);
  if (last >= 0) p.last_updated = T(last);
  return p;
}

TEST(ShiftRepairTest, OnePageOrNoChangeWhilePagingNeedsNoRepair) {
  PassResult one;
  one.pages = {Page(100, 50)};
  one.updated = {T(40), T(50), T(120)};  // changed after the response: still one page
  EXPECT_FALSE(PlanRepair(one, std::nullopt).needed);

  PassResult quiet;
  quiet.pages = {Page(100, 50), Page(101, 60), Page(102, 70)};
  quiet.updated = {T(40), T(50), T(55), T(60), T(70)};  // all before the first page's Date − 1 s
  EXPECT_FALSE(PlanRepair(quiet, T(10)).needed);
}

TEST(ShiftRepairTest, RepairsFromTheLastUpdatedBeforeThePageThatCouldShift) {
  PassResult pass;
  pass.pages = {Page(100, 50), Page(105, 60), Page(110, 70), Page(115, 108)};
  // An item listed earlier changed at second 108: pages served from 110 on could have skipped.
  pass.updated = {T(40), T(50), T(60), T(70), T(108)};
  const RepairPlan plan = PlanRepair(pass, T(10));
  EXPECT_TRUE(plan.needed);
  ASSERT_TRUE(plan.since.has_value());
  EXPECT_EQ(*plan.since, T(60));  // the page before the one served at 110
}

TEST(ShiftRepairTest, ChangeWithinTheFirstSecondStartsAfterTheFirstPage) {
  PassResult pass;
  pass.pages = {Page(100, 50), Page(101, 60), Page(102, 70)};
  pass.updated = {T(50), T(60), T(99)};  // at the first page's Date − 1 s: counts as a change
  const RepairPlan plan = PlanRepair(pass, std::nullopt);
  EXPECT_TRUE(plan.needed);
  EXPECT_EQ(plan.since, T(50));
}

TEST(ShiftRepairTest, NoEarlierItemRepairsFromThePassStart) {
  PassResult pass;
  pass.pages = {Page(100, -1), Page(101, -1), Page(102, 101)};
  pass.updated = {T(101)};
  EXPECT_EQ(PlanRepair(pass, T(7)).since, T(7));
  EXPECT_EQ(PlanRepair(pass, std::nullopt).since, std::nullopt);
}

TEST(ShiftRepairTest, PartialPassResumesAtTheRepairStartOrTheNewestStored) {
  PassResult quiet;
  quiet.pages = {Page(100, 50), Page(101, 60)};
  quiet.updated = {T(50), T(60)};
  quiet.max_updated = T(60);
  quiet.truncated = true;
  EXPECT_EQ(PartialSince(quiet, T(10)), T(60));
  quiet.max_updated.reset();
  EXPECT_EQ(PartialSince(quiet, T(10)), T(10));

  PassResult changed = quiet;
  changed.pages = {Page(100, 50), Page(105, 60), Page(110, 70)};
  changed.updated = {T(50), T(60), T(70), T(107)};
  changed.max_updated = T(107);
  EXPECT_EQ(PartialSince(changed, T(10)), T(60));  // not 107: that would skip the shifted ones
}

}  // namespace
}  // namespace issuescope::crawler

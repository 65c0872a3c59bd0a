// The statistics of `issuescope study` against textbook examples computed by hand or published
// with their answers, and their defined results on degenerate input (never NaN).
#include "indexer/study_stats.h"

#include <cmath>
#include <numeric>

#include "gtest/gtest.h"

namespace issuescope::study {
namespace {

constexpr int M = kMissing;

// Cohen's κ of the 2×2 table yes/yes 20, yes/no 5, no/yes 10, no/no 15:
// p_o = 35/50 = 0.70, p_e = 0.5·0.6 + 0.5·0.4 = 0.50, κ = 0.20 / 0.50 = 0.40.
TEST(StudyStatsTest, CohenKappaOfTheTextbookTable) {
  const Table table = {{20, 5}, {10, 15}};
  ASSERT_TRUE(CohenKappa(table).has_value());
  EXPECT_NEAR(*CohenKappa(table), 0.40, 1e-12);
  EXPECT_NEAR(*ObservedAgreement(table), 0.70, 1e-12);
}

TEST(StudyStatsTest, ConfusionTableCountsOnlyUnitsBothLabelled) {
  // yes = 0, no = 1; the same table as above from parallel codes, plus units one side skipped.
  std::vector<int> a, b;
  auto add = [&](int x, int y, int n) {
    for (int i = 0; i < n; ++i) {
      a.push_back(x);
      b.push_back(y);
    }
  };
  add(0, 0, 20);
  add(0, 1, 5);
  add(1, 0, 10);
  add(1, 1, 15);
  add(0, M, 7);
  add(M, 1, 3);
  const Table table = ConfusionTable(a, b, 2);
  EXPECT_EQ(table, (Table{{20, 5}, {10, 15}}));
  EXPECT_NEAR(*CohenKappa(table), 0.40, 1e-12);
}

// Fleiss (1971) as on Wikipedia's "Fleiss' kappa" page: 10 subjects, 14 raters, 5 categories;
// P̄ = 0.378, P̄_e = 0.213, κ = 0.210.
TEST(StudyStatsTest, FleissKappaOfTheWikipediaExample) {
  const std::vector<std::vector<int64_t>> counts = {
      {0, 0, 0, 0, 14}, {0, 2, 6, 4, 2}, {0, 0, 3, 5, 6}, {0, 3, 9, 2, 0}, {2, 2, 8, 1, 1},
      {7, 7, 0, 0, 0},  {3, 2, 6, 3, 0}, {2, 5, 3, 2, 2}, {6, 5, 2, 1, 0}, {0, 2, 2, 3, 7}};
  ASSERT_TRUE(FleissKappa(counts).has_value());
  EXPECT_NEAR(*FleissKappa(counts), 0.210, 0.0005);
}

// Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the nominal example with
// 4 coders, 12 units and missing values: α = 0.743.
TEST(StudyStatsTest, KrippendorffAlphaOfThePublishedExample) {
  // Values 1..5 coded 0..4; rows are units, columns coders A, B, C, D.
  const std::vector<std::vector<int>> coders = {
      {0, 1, 2, 2, 1, 0, 3, 0, 1, M, M, M},   // A
      {0, 1, 2, 2, 1, 1, 3, 0, 1, 4, M, 2},   // B
      {M, 2, 2, 2, 1, 2, 3, 1, 1, 4, 0, M},   // C
      {0, 1, 2, 2, 1, 3, 3, 0, 1, 4, 0, M}};  // D
  std::vector<std::vector<int>> units(12, std::vector<int>(4));
  for (int c = 0; c < 4; ++c) {
    for (int u = 0; u < 12; ++u) units[u][c] = coders[c][u];
  }
  ASSERT_TRUE(KrippendorffAlphaNominal(units).has_value());
  EXPECT_NEAR(*KrippendorffAlphaNominal(units), 0.743, 0.0005);
}

// With two coders and no missing values, α is Scott's π corrected for small samples:
// α = 1 − (n − 1) D_o / Σ_{c≠k} n_c n_k; for the 2×2 table above n = 100 values,
// n_yes = 55, n_no = 45, D_o = 2·15 = 30: α = 1 − 99·30 / (2·55·45) = 0.4.
TEST(StudyStatsTest, KrippendorffAlphaOfTwoCoders) {
  std::vector<std::vector<int>> units;
  auto add = [&](int x, int y, int n) {
    for (int i = 0; i < n; ++i) units.push_back({x, y});
  };
  add(0, 0, 20);
  add(0, 1, 5);
  add(1, 0, 10);
  add(1, 1, 15);
  EXPECT_NEAR(*KrippendorffAlphaNominal(units), 1.0 - 99.0 * 30.0 / (2 * 55.0 * 45.0), 1e-12);
  // Fleiss' κ of two raters is Scott's π: p_o = 0.7, p_e = 0.55² + 0.45² = 0.505.
  EXPECT_NEAR(*FleissKappa(CategoryCounts(units, 2)), (0.7 - 0.505) / (1 - 0.505), 1e-12);
  EXPECT_NEAR(*UnanimousShare(units), 0.7, 1e-12);
}

// Degenerate input has a defined result: perfect agreement over two or more categories is 1;
// a single category (chance agreement 1) and empty input are undefined (nullopt, never NaN).
TEST(StudyStatsTest, DegenerateInputIsDefined) {
  const std::vector<std::vector<int>> all_agree = {{0, 0}, {1, 1}, {2, 2}, {1, 1}};
  EXPECT_EQ(CohenKappa(ConfusionTable({0, 1, 2, 1}, {0, 1, 2, 1}, 3)), 1.0);
  EXPECT_EQ(FleissKappa(CategoryCounts(all_agree, 3)), 1.0);
  EXPECT_EQ(KrippendorffAlphaNominal(all_agree), 1.0);
  EXPECT_EQ(UnanimousShare(all_agree), 1.0);

  const std::vector<std::vector<int>> one_category = {{0, 0}, {0, 0}, {0, 0}};
  EXPECT_EQ(CohenKappa(ConfusionTable({0, 0, 0}, {0, 0, 0}, 1)), std::nullopt);
  EXPECT_EQ(FleissKappa(CategoryCounts(one_category, 1)), std::nullopt);
  EXPECT_EQ(KrippendorffAlphaNominal(one_category), std::nullopt);
  EXPECT_EQ(UnanimousShare(one_category), 1.0);

  EXPECT_EQ(CohenKappa(Table{}), std::nullopt);
  EXPECT_EQ(CohenKappa(Table{{0, 0}, {0, 0}}), std::nullopt);
  EXPECT_EQ(ObservedAgreement(Table{}), std::nullopt);
  EXPECT_EQ(FleissKappa({}), std::nullopt);
  EXPECT_EQ(KrippendorffAlphaNominal({}), std::nullopt);
  EXPECT_EQ(UnanimousShare({}), std::nullopt);
  // No unit with two values: nothing is pairable.
  const std::vector<std::vector<int>> lonely = {{0, M}, {M, 1}, {M, M}};
  EXPECT_EQ(KrippendorffAlphaNominal(lonely), std::nullopt);
  EXPECT_EQ(FleissKappa(CategoryCounts(lonely, 2)), std::nullopt);
  EXPECT_EQ(UnanimousShare(lonely), std::nullopt);

  // Systematic disagreement is negative, not undefined.
  EXPECT_NEAR(*CohenKappa(Table{{0, 5}, {5, 0}}), -1.0, 1e-12);
}

TEST(StudyStatsTest, NormalQuantile) {
  EXPECT_NEAR(NormalQuantile(0.975), 1.959963984540054, 1e-9);
  EXPECT_NEAR(NormalQuantile(0.5), 0.0, 1e-12);
  EXPECT_NEAR(NormalQuantile(0.005), -2.5758293035489, 1e-9);
  EXPECT_NEAR(TwoSidedZ(0.99), 2.5758293035489, 1e-9);
  EXPECT_NEAR(TwoSidedZ(0.90), 1.6448536269514722, 1e-9);
}

// Cochran: n0 = 1.96² · 0.25 / 0.05² = 384.1 → 385 for an infinite population; with the
// finite-population correction n0 / (1 + (n0 − 1) / N): N = 1000 → 278, N = 100 → 80.
TEST(StudyStatsTest, CochranSampleSize) {
  EXPECT_EQ(CochranSampleSize(0.95, 0.05, 0.5, 0), 385);
  EXPECT_EQ(CochranSampleSize(0.95, 0.05, 0.5, 1000), 278);
  EXPECT_EQ(CochranSampleSize(0.95, 0.05, 0.5, 100), 80);
  EXPECT_LT(CochranSampleSize(0.95, 0.05, 0.5, 100000), 385);
  EXPECT_EQ(CochranSampleSize(0.99, 0.05, 0.5, 0), 664);
  EXPECT_EQ(CochranSampleSize(0.95, 0.03, 0.5, 0), 1068);
  EXPECT_EQ(CochranSampleSize(0.95, 0.05, 0.5, 10), 10);  // never more than the population
}

TEST(StudyStatsTest, ProportionalAllocationSumsToN) {
  struct Case {
    std::vector<int64_t> sizes;
    int64_t n;
    std::vector<int64_t> want;
  };
  const Case cases[] = {
      {{500, 300, 200}, 100, {50, 30, 20}},
      {{1000, 5, 1}, 10, {8, 1, 1}},        // at least one per non-empty stratum
      {{10, 0, 10}, 5, {3, 0, 2}},          // empty strata get none; ties to the earlier
      {{3, 4}, 100, {3, 4}},                // n beyond the population: all of it
      {{100, 100, 100}, 2, {1, 1, 1}},      // fewer units than strata: one each
      {{}, 10, {}},
      {{7, 7}, 0, {0, 0}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(AllocateProportional(c.sizes, c.n), c.want) << "n = " << c.n;
  }
  // Sums to n for many uneven populations.
  const std::vector<int64_t> sizes = {1234, 17, 1, 560, 88, 3, 9000, 41};
  const int64_t total = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
  for (int64_t n : {8, 9, 50, 385, 1000, 10943, 20000}) {
    std::vector<int64_t> alloc = AllocateProportional(sizes, n);
    EXPECT_EQ(std::accumulate(alloc.begin(), alloc.end(), int64_t{0}), std::min(n, total));
    for (size_t h = 0; h < sizes.size(); ++h) {
      EXPECT_GE(alloc[h], 1);
      EXPECT_LE(alloc[h], sizes[h]);
    }
  }
}

// Stratified: N = 600, 400; n = 60, 40; hits 30, 10 → p = 0.6·0.5 + 0.4·0.25 = 0.4;
// Var = 0.36·0.9·0.25/59 + 0.16·0.9·0.1875/39 = 0.0020652, half-width 1.96·0.045445 = 0.08907.
TEST(StudyStatsTest, StratifiedEstimate) {
  const Estimate e = EstimateProportion({{600, 60, 30}, {400, 40, 10}}, 0.95);
  EXPECT_EQ(e.method, "stratified");
  EXPECT_NEAR(e.proportion, 0.4, 1e-12);
  const double var = 0.36 * 0.9 * 0.25 / 59 + 0.16 * 0.9 * 0.1875 / 39;
  EXPECT_NEAR(e.low, 0.4 - 1.959963985 * std::sqrt(var), 1e-9);
  EXPECT_NEAR(e.high, 0.4 + 1.959963985 * std::sqrt(var), 1e-9);
  EXPECT_NEAR(e.high - 0.4, 0.08907, 1e-5);
  EXPECT_EQ(e.population, 1000);
}

// One stratum: Wilson's interval (n_eff = n (N − 1)/(N − n)); 30 of 100 out of a large N is
// about [0.219, 0.396]; a stratum labelled whole has no sampling error.
TEST(StudyStatsTest, WilsonIntervalForOneStratum) {
  const Estimate e = EstimateProportion({{100000000, 100, 30}}, 0.95);
  EXPECT_EQ(e.method, "wilson");
  EXPECT_NEAR(e.proportion, 0.30, 1e-12);
  EXPECT_NEAR(e.low, 0.2189, 0.0005);
  EXPECT_NEAR(e.high, 0.3958, 0.0005);
  const Estimate none = EstimateProportion({{1000, 50, 0}}, 0.95);
  EXPECT_EQ(none.low, 0.0);
  EXPECT_GT(none.high, 0.0);
  EXPECT_LT(none.high, 0.1);
  const Estimate census = EstimateProportion({{40, 40, 10}}, 0.95);
  EXPECT_EQ(census.low, 0.25);
  EXPECT_EQ(census.high, 0.25);
  // The finite population narrows the interval.
  const Estimate finite = EstimateProportion({{200, 100, 30}}, 0.95);
  EXPECT_GT(finite.low, e.low);
  EXPECT_LT(finite.high, e.high);
}

// Several strata and no variance in the sample (a theme seen in none of the sampled issues):
// not 0 ± 0, but Wilson's interval over all labelled units, n = 30 of N = 1000.
TEST(StudyStatsTest, NoVarianceInTheSampleStillHasAnInterval) {
  const Estimate zero = EstimateProportion({{600, 18, 0}, {400, 12, 0}}, 0.95);
  EXPECT_EQ(zero.method, "wilson");
  EXPECT_EQ(zero.proportion, 0.0);
  EXPECT_EQ(zero.low, 0.0);
  const double n_eff = 30.0 * 999 / 970, z2 = 1.959963985 * 1.959963985;
  EXPECT_NEAR(zero.high, z2 / n_eff / (1 + z2 / n_eff), 1e-6);  // ≈ 0.113
  const Estimate all = EstimateProportion({{600, 18, 18}, {400, 12, 12}}, 0.95);
  EXPECT_NEAR(all.proportion, 1.0, 1e-12);
  EXPECT_EQ(all.high, 1.0);
  EXPECT_NEAR(all.low, 1 - zero.high, 1e-6);
  // Every stratum labelled whole: exact.
  const Estimate census = EstimateProportion({{6, 6, 0}, {4, 4, 0}}, 0.95);
  EXPECT_EQ(census.low, 0.0);
  EXPECT_EQ(census.high, 0.0);
}

TEST(StudyStatsTest, EstimateEdgeCases) {
  const Estimate empty = EstimateProportion({}, 0.95);
  EXPECT_EQ(empty.method, "none");
  EXPECT_EQ(empty.population, 0);
  // A stratum with no labelled unit is left out, with its N.
  const Estimate partial = EstimateProportion({{500, 0, 0}, {300, 30, 15}, {200, 20, 5}}, 0.95);
  EXPECT_EQ(partial.population, 500);
  EXPECT_NEAR(partial.proportion, 0.6 * 0.5 + 0.4 * 0.25, 1e-12);
  // A stratum of one sampled unit uses the largest variance, p(1 − p) = 1/4.
  const Estimate single = EstimateProportion({{10, 1, 1}, {10, 10, 5}}, 0.95);
  EXPECT_NEAR(single.proportion, 0.75, 1e-12);
  EXPECT_NEAR(single.proportion - single.low, 1.959963985 * std::sqrt(0.25 * 0.9 * 0.25), 1e-9);
  EXPECT_EQ(single.high, 1.0);  // clipped
  for (const Estimate& e : {empty, partial, single}) {
    EXPECT_FALSE(std::isnan(e.proportion));
    EXPECT_LE(e.low, e.proportion);
    EXPECT_GE(e.high, e.proportion);
  }
}

}  // namespace
}  // namespace issuescope::study

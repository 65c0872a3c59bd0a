// The statistics of an annotation study (`issuescope study`, docs/STUDY.md): agreement between
// annotators (percent agreement, Cohen's κ, Fleiss' κ, Krippendorff's α for nominal data), the
// size and stratified allocation of a sample (Cochran's formula, proportional allocation), and
// the estimate of a proportion in the population a stratified sample stands for, with its
// confidence interval (stratified estimator; Wilson's interval for one stratum).
//
// Ratings are coded: category c of a field is the int c >= 0, and kMissing marks a unit an
// annotator did not label. A coefficient that is undefined for its input (no units, or every
// label in one category so that chance agreement is 1) is std::nullopt, never NaN; callers print
// it as "n/a". Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace issuescope::study {

// kMissing is the code of a unit an annotator did not label.
inline constexpr int kMissing = -1;

// Table is a square matrix of counts: table[i][j] = units the first annotator put in category i
// and the second in category j.
using Table = std::vector<std::vector<int64_t>>;

// ConfusionTable counts the units labelled by both `a` and `b` (parallel vectors of codes)
// into a `categories` × `categories` table. Codes outside [0, categories) are skipped.
Table ConfusionTable(const std::vector<int>& a, const std::vector<int>& b, int categories);

// ObservedAgreement is the share of the table's units on its diagonal; nullopt for an empty
// table.
std::optional<double> ObservedAgreement(const Table& table);

// CohenKappa is Cohen's κ = (p_o − p_e) / (1 − p_e) of a confusion table, with
// p_e = Σ_i (row_i / n)(col_i / n). nullopt when the table is empty or p_e = 1 (both
// annotators used one and the same category for every unit).
std::optional<double> CohenKappa(const Table& table);

// FleissKappa is Fleiss' κ of `counts` (subjects × categories: counts[i][j] = raters who put
// subject i in category j). Subjects with fewer than two ratings are skipped; when subjects
// have different numbers of raters, each subject's agreement is
// P_i = Σ_j n_ij (n_ij − 1) / (n_i (n_i − 1)) and p_j is the share of all ratings in j (the
// usual extension; with a constant number of raters this is Fleiss (1971)). nullopt when no
// subject has two ratings or P_e = 1.
std::optional<double> FleissKappa(const std::vector<std::vector<int64_t>>& counts);

// CategoryCounts turns coded ratings (units × raters, kMissing allowed) into the subjects ×
// categories counts FleissKappa takes.
std::vector<std::vector<int64_t>> CategoryCounts(const std::vector<std::vector<int>>& ratings,
                                                 int categories);

// KrippendorffAlphaNominal is Krippendorff's α for nominal data of `ratings` (units × coders,
// kMissing for a missing value): α = 1 − D_o / D_e from the coincidence matrix of the pairable
// values (units with at least two values; Krippendorff 2011, "Computing Krippendorff's
// Alpha-Reliability"). nullopt when fewer than two values are pairable or all pairable values
// are one category (D_e = 0).
std::optional<double> KrippendorffAlphaNominal(const std::vector<std::vector<int>>& ratings);

// UnanimousShare is the share of units with at least two labels whose labels are all equal;
// nullopt when no unit has two labels.
std::optional<double> UnanimousShare(const std::vector<std::vector<int>>& ratings);

// NormalQuantile is the standard normal quantile Φ⁻¹(p), for 0 < p < 1 (|error| < 1e-12).
double NormalQuantile(double p);

// TwoSidedZ is the z of a two-sided interval of `confidence` (0.95 → 1.959964).
double TwoSidedZ(double confidence);

// CochranSampleSize is the sample size that estimates a proportion `p` to ± `margin` at
// `confidence`: n0 = z² p (1 − p) / margin², with the finite-population correction
// n = n0 / (1 + (n0 − 1) / N) when `population` N > 0, rounded up (and at most N). 0.95, 0.05,
// p = 0.5, infinite population: 385. Requires 0 < confidence < 1, 0 < margin < 1, 0 < p < 1.
int64_t CochranSampleSize(double confidence, double margin, double p, int64_t population);

// AllocateProportional splits a sample of `n` over strata of `sizes` N_h in proportion to N_h
// (largest remainders, ties to the earlier stratum), giving at least one unit to every non-empty
// stratum and never more than N_h. The result sums to min(n, Σ N_h), except that when n is
// smaller than the number of non-empty strata every one of them still gets one unit.
std::vector<int64_t> AllocateProportional(const std::vector<int64_t>& sizes, int64_t n);

// StratumTally is one stratum of a sample for the estimate of one proportion.
struct StratumTally {
  int64_t population = 0;  // N_h: units of the stratum in the population
  int64_t sample = 0;      // n_h: units of the stratum in the sample that carry a label
  int64_t hits = 0;        // units among the n_h with the property counted
};

// Estimate is an estimated proportion of the population and its confidence interval.
struct Estimate {
  double proportion = 0;  // p̂
  double low = 0;         // interval bounds of p, within [0, 1]
  double high = 0;
  double population = 0;  // N of the strata the estimate covers
  // "stratified" (normal approximation of the stratified estimator), "wilson" (Wilson's
  // interval with n_eff = n (N − 1) / (N − n) for the finite population, a point when the whole
  // population was labelled) or "none" (no labelled unit).
  std::string method;
};

// EstimateProportion estimates the share of the population with a property from a stratified
// sample: p̂ = Σ W_h p_h with W_h = N_h / N, Var = Σ W_h² (1 − f_h) p_h (1 − p_h) / (n_h − 1),
// f_h = n_h / N_h, interval p̂ ± z √Var clipped to [0, 1]. With one stratum, and when the sample
// shows no variance at all (the property in none or all of the sampled units of every stratum,
// where p̂ ± 0 would claim certainty), Wilson's interval over the n = Σ n_h labelled units.
// Strata with no labelled unit are left out (and N with them). A stratum with n_h = 1 < N_h has
// no variance estimate; it contributes W_h² (1 − f_h) · 1/4 (the largest p(1 − p)) instead.
Estimate EstimateProportion(const std::vector<StratumTally>& strata, double confidence);

}  // namespace issuescope::study

#include "indexer/study_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace issuescope::study {
namespace {

// Agreement is (observed − expected) / (1 − expected), or nullopt when expected is 1.
std::optional<double> ChanceCorrected(double observed, double expected) {
  if (expected >= 1.0 - 1e-12) return std::nullopt;
  return (observed - expected) / (1.0 - expected);
}

}  // namespace

Table ConfusionTable(const std::vector<int>& a, const std::vector<int>& b, int categories) {
  Table table(categories, std::vector<int64_t>(categories, 0));
  for (size_t u = 0; u < a.size() && u < b.size(); ++u) {
    if (a[u] < 0 || b[u] < 0 || a[u] >= categories || b[u] >= categories) continue;
    ++table[a[u]][b[u]];
  }
  return table;
}

std::optional<double> ObservedAgreement(const Table& table) {
  int64_t n = 0, diagonal = 0;
  for (size_t i = 0; i < table.size(); ++i) {
    for (size_t j = 0; j < table[i].size(); ++j) n += table[i][j];
    if (i < table[i].size()) diagonal += table[i][i];
  }
  if (n == 0) return std::nullopt;
  return static_cast<double>(diagonal) / static_cast<double>(n);
}

std::optional<double> CohenKappa(const Table& table) {
  const size_t k = table.size();
  std::vector<double> rows(k, 0), cols(k, 0);
  double n = 0, diagonal = 0;
  for (size_t i = 0; i < k; ++i) {
    for (size_t j = 0; j < table[i].size() && j < k; ++j) {
      rows[i] += table[i][j];
      cols[j] += table[i][j];
      n += table[i][j];
    }
    if (i < table[i].size()) diagonal += table[i][i];
  }
  if (n == 0) return std::nullopt;
  double expected = 0;
  for (size_t i = 0; i < k; ++i) expected += (rows[i] / n) * (cols[i] / n);
  return ChanceCorrected(diagonal / n, expected);
}

std::vector<std::vector<int64_t>> CategoryCounts(const std::vector<std::vector<int>>& ratings,
                                                 int categories) {
  std::vector<std::vector<int64_t>> counts;
  counts.reserve(ratings.size());
  for (const std::vector<int>& unit : ratings) {
    std::vector<int64_t> row(categories, 0);
    for (int c : unit) {
      if (c >= 0 && c < categories) ++row[c];
    }
    counts.push_back(std::move(row));
  }
  return counts;
}

std::optional<double> FleissKappa(const std::vector<std::vector<int64_t>>& counts) {
  size_t k = 0;
  for (const auto& row : counts) k = std::max(k, row.size());
  std::vector<double> category_totals(k, 0);
  double agreement_sum = 0, ratings = 0;
  int64_t subjects = 0;
  for (const auto& row : counts) {
    const double n_i = std::accumulate(row.begin(), row.end(), 0.0);
    if (n_i < 2) continue;
    double pairs = 0;
    for (size_t j = 0; j < row.size(); ++j) {
      pairs += static_cast<double>(row[j]) * static_cast<double>(row[j] - 1);
      category_totals[j] += row[j];
    }
    agreement_sum += pairs / (n_i * (n_i - 1));
    ratings += n_i;
    ++subjects;
  }
  if (subjects == 0) return std::nullopt;
  double expected = 0;
  for (double total : category_totals) expected += (total / ratings) * (total / ratings);
  return ChanceCorrected(agreement_sum / static_cast<double>(subjects), expected);
}

std::optional<double> KrippendorffAlphaNominal(const std::vector<std::vector<int>>& ratings) {
  int k = 0;
  for (const auto& unit : ratings) {
    for (int c : unit) k = std::max(k, c + 1);
  }
  // Coincidence matrix o[c][d]: each ordered pair of values within a unit of m_u pairable values
  // counts 1 / (m_u − 1).
  std::vector<std::vector<double>> o(k, std::vector<double>(k, 0));
  for (const auto& unit : ratings) {
    std::vector<int64_t> in_unit(k, 0);
    int64_t m = 0;
    for (int c : unit) {
      if (c < 0) continue;
      ++in_unit[c];
      ++m;
    }
    if (m < 2) continue;
    for (int c = 0; c < k; ++c) {
      if (in_unit[c] == 0) continue;
      for (int d = 0; d < k; ++d) {
        const double pairs = c == d ? static_cast<double>(in_unit[c] * (in_unit[c] - 1))
                                    : static_cast<double>(in_unit[c] * in_unit[d]);
        o[c][d] += pairs / static_cast<double>(m - 1);
      }
    }
  }
  std::vector<double> n_c(k, 0);
  double n = 0, disagree_observed = 0;
  for (int c = 0; c < k; ++c) {
    for (int d = 0; d < k; ++d) {
      n_c[c] += o[c][d];
      if (c != d) disagree_observed += o[c][d];
    }
    n += n_c[c];
  }
  if (n < 2) return std::nullopt;
  double disagree_expected = 0;  // Σ_{c≠d} n_c n_d
  for (int c = 0; c < k; ++c) {
    for (int d = 0; d < k; ++d) {
      if (c != d) disagree_expected += n_c[c] * n_c[d];
    }
  }
  if (disagree_expected <= 0) return std::nullopt;
  return 1.0 - (n - 1) * disagree_observed / disagree_expected;
}

std::optional<double> UnanimousShare(const std::vector<std::vector<int>>& ratings) {
  int64_t units = 0, unanimous = 0;
  for (const auto& unit : ratings) {
    int first = kMissing, labels = 0;
    bool same = true;
    for (int c : unit) {
      if (c < 0) continue;
      if (labels++ == 0) first = c;
      else same &= c == first;
    }
    if (labels < 2) continue;
    ++units;
    unanimous += same ? 1 : 0;
  }
  if (units == 0) return std::nullopt;
  return static_cast<double>(unanimous) / static_cast<double>(units);
}

double NormalQuantile(double p) {
  // Acklam's rational approximation, refined by one Halley step on erfc.
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                             -2.759285104469687e+02, 1.383577518672690e+02,
                             -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                             -1.556989798598866e+02, 6.680131188771972e+01,
                             -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                             -2.400758277161838e+00, -2.549732539343734e+00,
                             4.374664141464968e+00, 2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                             2.445134137142996e+00, 3.754408661907416e+00};
  if (p <= 0) return -HUGE_VAL;
  if (p >= 1) return HUGE_VAL;
  double x;
  if (p < 0.02425) {
    const double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= 1 - 0.02425) {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    const double q = std::sqrt(-2 * std::log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  const double e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
  const double u = e * std::sqrt(2 * M_PI) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

double TwoSidedZ(double confidence) { return NormalQuantile(0.5 + confidence / 2); }

int64_t CochranSampleSize(double confidence, double margin, double p, int64_t population) {
  const double z = TwoSidedZ(confidence);
  const double n0 = z * z * p * (1 - p) / (margin * margin);
  double n = n0;
  if (population > 0) n = n0 / (1 + (n0 - 1) / static_cast<double>(population));
  // Guard against 384.00000000001 becoming 385 through rounding noise.
  int64_t size = static_cast<int64_t>(std::ceil(n - 1e-9));
  if (population > 0) size = std::min(size, population);
  return std::max<int64_t>(size, 1);
}

std::vector<int64_t> AllocateProportional(const std::vector<int64_t>& sizes, int64_t n) {
  const size_t k = sizes.size();
  std::vector<int64_t> out(k, 0);
  const int64_t total = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
  if (total <= 0 || n <= 0) return out;
  n = std::min(n, total);
  std::vector<double> quota(k, 0);
  int64_t sum = 0;
  for (size_t h = 0; h < k; ++h) {
    if (sizes[h] <= 0) continue;
    quota[h] = static_cast<double>(n) * static_cast<double>(sizes[h]) / static_cast<double>(total);
    out[h] = std::min(sizes[h], std::max<int64_t>(1, static_cast<int64_t>(std::floor(quota[h]))));
    sum += out[h];
  }
  // Hand out what is left to the largest remainders (quota − n_h), among strata with room.
  while (sum < n) {
    size_t best = k;
    for (size_t h = 0; h < k; ++h) {
      if (out[h] >= sizes[h]) continue;
      if (best == k || quota[h] - out[h] > quota[best] - out[best]) best = h;
    }
    if (best == k) break;
    ++out[best];
    ++sum;
  }
  // Take back what the minimum of one gave beyond n, from the most over-allocated strata.
  while (sum > n) {
    size_t best = k;
    for (size_t h = 0; h < k; ++h) {
      if (out[h] <= 1) continue;
      if (best == k || out[h] - quota[h] > out[best] - quota[best]) best = h;
    }
    if (best == k) break;  // every non-empty stratum is down to one unit
    --out[best];
    --sum;
  }
  return out;
}

Estimate EstimateProportion(const std::vector<StratumTally>& strata, double confidence) {
  Estimate e;
  double population = 0;
  int used = 0;
  for (const StratumTally& s : strata) {
    if (s.sample > 0 && s.population > 0) {
      population += static_cast<double>(s.population);
      ++used;
    }
  }
  e.population = population;
  if (used == 0) {
    e.method = "none";
    return e;
  }
  const double z = TwoSidedZ(confidence);
  double p = 0, variance = 0, n = 0;
  int64_t hits = 0, labelled = 0;
  for (const StratumTally& s : strata) {
    if (s.sample <= 0 || s.population <= 0) continue;
    const double w = static_cast<double>(s.population) / population;
    const double n_h = static_cast<double>(s.sample);
    const double p_h = static_cast<double>(s.hits) / n_h;
    const double f_h = std::min(1.0, n_h / static_cast<double>(s.population));
    p += w * p_h;
    const double spread = s.sample > 1 ? p_h * (1 - p_h) / (n_h - 1) : 0.25;
    variance += w * w * (1 - f_h) * spread;
    n += std::min(n_h, static_cast<double>(s.population));
    hits += s.hits;
    labelled += s.sample;
  }
  e.proportion = p;
  if (used > 1 && variance > 0) {
    e.method = "stratified";
    const double half = z * std::sqrt(variance);
    e.low = std::max(0.0, p - half);
    e.high = std::min(1.0, p + half);
    return e;
  }
  // One stratum, or several whose sample shows no variance (every p_h 0, or every p_h 1):
  // Wilson's interval over the n labelled units, with the finite-population correction.
  e.method = "wilson";
  if (n >= population) {  // the whole population was labelled: no sampling error
    e.low = e.high = p;
    return e;
  }
  const double n_eff = population > 1 ? n * (population - 1) / (population - n) : n;
  const double z2 = z * z;
  const double centre = (p + z2 / (2 * n_eff)) / (1 + z2 / n_eff);
  const double half =
      z / (1 + z2 / n_eff) * std::sqrt(p * (1 - p) / n_eff + z2 / (4 * n_eff * n_eff));
  e.low = hits == 0 ? 0.0 : std::max(0.0, centre - half);
  e.high = hits >= labelled ? 1.0 : std::min(1.0, centre + half);
  return e;
}

}  // namespace issuescope::study

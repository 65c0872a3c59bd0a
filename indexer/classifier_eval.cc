#include "indexer/classifier_eval.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace issuescope::classifier {

EvalReport Evaluate(const std::string& field, const std::vector<std::string>& gold,
                    const std::vector<std::string>& predicted) {
  EvalReport report;
  report.field = field;
  report.examples = static_cast<int>(std::min(gold.size(), predicted.size()));
  std::set<std::string> gold_set(gold.begin(), gold.end());
  std::vector<std::string> names(gold_set.begin(), gold_set.end());
  std::set<std::string> extra;
  for (const std::string& p : predicted) {
    if (gold_set.count(p) == 0) extra.insert(p);
  }
  names.insert(names.end(), extra.begin(), extra.end());
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < names.size(); ++i) index[names[i]] = i;
  report.confusion.assign(names.size(), std::vector<int>(names.size(), 0));
  int correct = 0;
  for (int i = 0; i < report.examples; ++i) {
    report.confusion[index[gold[i]]][index[predicted[i]]]++;
    correct += gold[i] == predicted[i];
  }
  report.accuracy = report.examples ? static_cast<double>(correct) / report.examples : 0;
  double f1_sum = 0;
  for (size_t c = 0; c < names.size(); ++c) {
    ClassMetrics m;
    m.name = names[c];
    m.correct = report.confusion[c][c];
    for (size_t o = 0; o < names.size(); ++o) {
      m.support += report.confusion[c][o];
      m.predicted += report.confusion[o][c];
    }
    m.precision = m.predicted ? static_cast<double>(m.correct) / m.predicted : 0;
    m.recall = m.support ? static_cast<double>(m.correct) / m.support : 0;
    m.f1 = m.precision + m.recall > 0 ? 2 * m.precision * m.recall / (m.precision + m.recall) : 0;
    if (gold_set.count(m.name)) f1_sum += m.f1;
    report.classes.push_back(m);
  }
  report.macro_f1 = gold_set.empty() ? 0 : f1_sum / static_cast<double>(gold_set.size());
  return report;
}

void AddBootstrap(const std::vector<std::string>& gold, const std::vector<std::string>& predicted,
                  int resamples, uint32_t seed, EvalReport* report) {
  const size_t n = std::min(gold.size(), predicted.size());
  if (n == 0 || resamples < 1) return;
  // Labels as small integers once; each resample then counts in arrays.
  std::map<std::string, int> ids;
  auto id = [&](const std::string& s) {
    return ids.emplace(s, static_cast<int>(ids.size())).first->second;
  };
  std::vector<int> g(n), p(n);
  for (size_t i = 0; i < n; ++i) {
    g[i] = id(gold[i]);
    p[i] = id(predicted[i]);
  }
  const size_t k = ids.size();
  std::mt19937 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, n - 1);
  std::vector<double> accuracies, f1s;
  std::vector<int> support(k), guessed(k), hits(k);
  for (int r = 0; r < resamples; ++r) {
    std::fill(support.begin(), support.end(), 0);
    std::fill(guessed.begin(), guessed.end(), 0);
    std::fill(hits.begin(), hits.end(), 0);
    int correct = 0;
    for (size_t i = 0; i < n; ++i) {
      const size_t j = pick(rng);
      support[g[j]]++;
      guessed[p[j]]++;
      if (g[j] == p[j]) {
        hits[g[j]]++;
        correct++;
      }
    }
    double f1_sum = 0;
    int classes = 0;
    for (size_t c = 0; c < k; ++c) {
      if (support[c] == 0) continue;  // macro-F1 over the gold classes of this sample
      ++classes;
      const double precision = guessed[c] ? static_cast<double>(hits[c]) / guessed[c] : 0;
      const double recall = static_cast<double>(hits[c]) / support[c];
      if (precision + recall > 0) f1_sum += 2 * precision * recall / (precision + recall);
    }
    accuracies.push_back(static_cast<double>(correct) / static_cast<double>(n));
    f1s.push_back(classes ? f1_sum / classes : 0);
  }
  auto percentile = [](std::vector<double>* v, double q) {
    std::sort(v->begin(), v->end());
    const double at = q * static_cast<double>(v->size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(at));
    const size_t hi = std::min(v->size() - 1, lo + 1);
    return (*v)[lo] + (at - static_cast<double>(lo)) * ((*v)[hi] - (*v)[lo]);
  };
  report->resamples = resamples;
  report->accuracy_ci = {percentile(&accuracies, 0.025), percentile(&accuracies, 0.975)};
  report->macro_f1_ci = {percentile(&f1s, 0.025), percentile(&f1s, 0.975)};
}

std::string FormatReport(const EvalReport& report) {
  size_t width = 9;
  for (const auto& c : report.classes) width = std::max(width, c.name.size());
  const int w = static_cast<int>(width);
  std::string out = absl::StrCat(report.field, ": ", report.examples, " examples\n");
  char line[512];
  std::snprintf(line, sizeof(line), "%-*s %9s %9s %9s %8s %9s\n", w, "class", "precision",
                "recall", "f1", "support", "predicted");
  out += line;
  for (const auto& c : report.classes) {
    std::snprintf(line, sizeof(line), "%-*s %9.4f %9.4f %9.4f %8d %9d\n", w, c.name.c_str(),
                  c.precision, c.recall, c.f1, c.support, c.predicted);
    out += line;
  }
  if (report.resamples > 0) {
    std::snprintf(line, sizeof(line),
                  "macro-F1 %.4f [%.4f, %.4f]   accuracy %.4f [%.4f, %.4f]   (95%% bootstrap "
                  "intervals, %d resamples)\n",
                  report.macro_f1, report.macro_f1_ci.low, report.macro_f1_ci.high,
                  report.accuracy, report.accuracy_ci.low, report.accuracy_ci.high,
                  report.resamples);
  } else {
    std::snprintf(line, sizeof(line), "macro-F1 %.4f   accuracy %.4f\n", report.macro_f1,
                  report.accuracy);
  }
  out += line;
  out += "confusion (rows: gold, columns: predicted)\n";
  std::snprintf(line, sizeof(line), "%-*s", w, "");
  out += line;
  for (const auto& c : report.classes) {
    std::snprintf(line, sizeof(line), " %*s", std::max<int>(6, static_cast<int>(c.name.size())),
                  c.name.c_str());
    out += line;
  }
  out += "\n";
  for (size_t r = 0; r < report.classes.size(); ++r) {
    std::snprintf(line, sizeof(line), "%-*s", w, report.classes[r].name.c_str());
    out += line;
    for (size_t c = 0; c < report.classes.size(); ++c) {
      std::snprintf(line, sizeof(line), " %*d",
                    std::max<int>(6, static_cast<int>(report.classes[c].name.size())),
                    report.confusion[r][c]);
      out += line;
    }
    out += "\n";
  }
  return out;
}

std::string ReportJson(const EvalReport& report) {
  nlohmann::json j;
  j["field"] = report.field;
  j["examples"] = report.examples;
  j["accuracy"] = report.accuracy;
  j["macro_f1"] = report.macro_f1;
  if (report.resamples > 0) {
    j["bootstrap"] = {{"resamples", report.resamples},
                      {"accuracy", {report.accuracy_ci.low, report.accuracy_ci.high}},
                      {"macro_f1", {report.macro_f1_ci.low, report.macro_f1_ci.high}}};
  }
  j["classes"] = nlohmann::json::array();
  nlohmann::json labels = nlohmann::json::array();
  for (const auto& c : report.classes) {
    j["classes"].push_back({{"name", c.name},
                            {"support", c.support},
                            {"predicted", c.predicted},
                            {"correct", c.correct},
                            {"precision", c.precision},
                            {"recall", c.recall},
                            {"f1", c.f1}});
    labels.push_back(c.name);
  }
  j["confusion"] = {{"labels", labels}, {"matrix", report.confusion}};
  return j.dump();
}

namespace {

// Shuffled returns `items` in an order shuffled by mt19937(seed) Fisher-Yates.
std::vector<size_t> Shuffled(std::vector<size_t> items, uint32_t seed) {
  std::mt19937 rng(seed);
  for (size_t i = items.size(); i > 1; --i) {
    size_t j = static_cast<size_t>(rng() % i);
    std::swap(items[i - 1], items[j]);
  }
  return items;
}

// ByStratum groups record indices by stratum, strata in sorted order.
std::map<std::string, std::vector<size_t>> ByStratum(const std::vector<std::string>& strata) {
  std::map<std::string, std::vector<size_t>> out;
  for (size_t i = 0; i < strata.size(); ++i) out[strata[i]].push_back(i);
  return out;
}

}  // namespace

std::vector<bool> HoldOut(const std::vector<std::string>& strata, double fraction, uint32_t seed) {
  std::vector<bool> held(strata.size(), false);
  for (const auto& [stratum, members] : ByStratum(strata)) {
    std::vector<size_t> order = Shuffled(members, seed);
    size_t n = static_cast<size_t>(std::llround(fraction * static_cast<double>(order.size())));
    if (n == 0 && order.size() >= 2 && fraction > 0) n = 1;
    n = std::min(n, order.size());
    for (size_t i = 0; i < n; ++i) held[order[i]] = true;
  }
  return held;
}

FoldAssignment AssignFolds(const std::vector<std::string>& strata,
                           const std::vector<std::string>& groups, int folds, uint32_t seed) {
  FoldAssignment out;
  out.fold.assign(strata.size(), 0);
  const bool grouped =
      std::any_of(groups.begin(), groups.end(), [](const std::string& g) { return !g.empty(); });
  if (grouped) {
    out.by_group = true;
    std::map<std::string, std::vector<size_t>> members = ByStratum(groups);
    std::vector<std::pair<std::string, size_t>> sizes;  // group, size
    for (const auto& [g, m] : members) sizes.emplace_back(g, m.size());
    std::stable_sort(sizes.begin(), sizes.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    out.folds = std::min<int>(folds, static_cast<int>(sizes.size()));
    std::vector<size_t> load(out.folds, 0);
    for (const auto& [g, size] : sizes) {
      int best = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
      load[best] += size;
      for (size_t i : members[g]) out.fold[i] = best;
    }
    return out;
  }
  out.folds = folds;
  size_t next = 0;
  for (const auto& [stratum, members] : ByStratum(strata)) {
    for (size_t i : Shuffled(members, seed)) out.fold[i] = static_cast<int>(next++ % folds);
  }
  return out;
}

}  // namespace issuescope::classifier

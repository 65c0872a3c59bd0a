// Evaluation of a classifier against gold labels: per-class precision, recall and F1, macro-F1,
// accuracy and the confusion matrix, as a plain value that formats itself as text or JSON; and
// the deterministic data splits used to measure it (a held-out validation part, k folds).
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace issuescope::classifier {

// ClassMetrics is the score of one class.
struct ClassMetrics {
  std::string name;
  int support = 0;    // gold examples of the class
  int predicted = 0;  // examples predicted as the class
  int correct = 0;    // true positives
  double precision = 0;
  double recall = 0;
  double f1 = 0;
};

// Interval is a two-sided 95% confidence interval.
struct Interval {
  double low = 0;
  double high = 0;
};

// EvalReport is the evaluation of one field (kind, theme, ...).
struct EvalReport {
  std::string field;
  int examples = 0;
  double accuracy = 0;
  double macro_f1 = 0;  // mean F1 over the classes that occur in the gold labels
  // Percentile bootstrap intervals (AddBootstrap); resamples = 0 when not computed.
  int resamples = 0;
  Interval accuracy_ci;
  Interval macro_f1_ci;
  std::vector<ClassMetrics> classes;  // sorted by name: gold classes, then predicted-only ones
  // confusion[gold][predicted], indexed like `classes`.
  std::vector<std::vector<int>> confusion;
};

// Evaluate compares `predicted` with `gold` (same length) for `field`.
EvalReport Evaluate(const std::string& field, const std::vector<std::string>& gold,
                    const std::vector<std::string>& predicted);

// AddBootstrap fills the report's 95% intervals of accuracy and macro-F1 by the percentile
// bootstrap: `resamples` (>= 1) samples of the examples drawn with replacement (mt19937 seeded
// with `seed`, so the same inputs give the same intervals), the metrics computed on each as
// Evaluate does, the 2.5th and 97.5th percentiles kept.
void AddBootstrap(const std::vector<std::string>& gold, const std::vector<std::string>& predicted,
                  int resamples, uint32_t seed, EvalReport* report);

// FormatReport renders a report as an aligned text table plus the confusion matrix.
std::string FormatReport(const EvalReport& report);

// ReportJson renders a report as one JSON object (keys: field, examples, accuracy, macro_f1,
// classes [{name, support, predicted, correct, precision, recall, f1}], confusion {labels,
// matrix}).
std::string ReportJson(const EvalReport& report);

// HoldOut marks about `fraction` (in (0, 1)) of the records of every stratum (e.g. the gold
// kind) as held out: each stratum's records in an order shuffled with `seed` (mt19937
// Fisher-Yates, the same on every platform), the first round(fraction * size) of them, at least
// one when the stratum has two or more records. Returns one flag per record (true = held out).
std::vector<bool> HoldOut(const std::vector<std::string>& strata, double fraction, uint32_t seed);

// FoldAssignment says which fold each record is tested in.
struct FoldAssignment {
  int folds = 0;          // number of folds actually used
  bool by_group = false;  // folds hold whole groups (e.g. repositories)
  std::vector<int> fold;  // per record, in [0, folds)
};

// AssignFolds splits records into `folds` (>= 2) folds for cross-validation, deterministically:
//  - when any record has a non-empty group (e.g. its repository), whole groups go to one fold:
//    with at most `folds` groups, each group is its own fold (leave-one-group-out, so `folds`
//    becomes the number of groups); otherwise groups, largest first (ties by name), go to the
//    fold with the fewest records so far (ties: the lower fold);
//  - otherwise records are stratified by `strata`: the records of each stratum, in an order
//    shuffled with `seed`, are dealt round-robin over the folds, continuing where the previous
//    stratum stopped.
// `strata` and `groups` have one entry per record (`groups` may be empty: no groups).
FoldAssignment AssignFolds(const std::vector<std::string>& strata,
                           const std::vector<std::string>& groups, int folds, uint32_t seed);

}  // namespace issuescope::classifier

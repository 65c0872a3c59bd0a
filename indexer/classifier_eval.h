// Evaluation of a classifier against gold labels: per-class precision, recall and F1, macro-F1,
// accuracy and the confusion matrix, as a plain value that formats itself as text or JSON.
// Pure functions; thread-safe.
#pragma once

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

// EvalReport is the evaluation of one field (kind, theme, ...).
struct EvalReport {
  std::string field;
  int examples = 0;
  double accuracy = 0;
  double macro_f1 = 0;  // mean F1 over the classes that occur in the gold labels
  std::vector<ClassMetrics> classes;  // sorted by name: gold classes, then predicted-only ones
  // confusion[gold][predicted], indexed like `classes`.
  std::vector<std::vector<int>> confusion;
};

// Evaluate compares `predicted` with `gold` (same length) for `field`.
EvalReport Evaluate(const std::string& field, const std::vector<std::string>& gold,
                    const std::vector<std::string>& predicted);

// FormatReport renders a report as an aligned text table plus the confusion matrix.
std::string FormatReport(const EvalReport& report);

// ReportJson renders a report as one JSON object (keys: field, examples, accuracy, macro_f1,
// classes [{name, support, predicted, correct, precision, recall, f1}], confusion {labels,
// matrix}).
std::string ReportJson(const EvalReport& report);

}  // namespace issuescope::classifier

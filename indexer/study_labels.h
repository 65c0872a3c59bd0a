// Annotators' labels in an annotation study (`issuescope study import|agreement|adjudicate|
// report`; docs/STUDY.md): reading and validating label files against the taxonomy, agreement
// between annotators per field, the adjudication sheet and its resolution into a training file
// for `taxonomy train`, and the population estimates of the final labels.
//
// A label file is JSON Lines ({"ref": "owner/name#N", "kind": "bug", "theme": "bug.operators",
// "subtheme": "", "llm": true}, the format of indexer/taxonomies/devset/pass-a.jsonl) or CSV with
// a header naming the columns ref, kind, theme, subtheme, llm (the file `study export` writes,
// filled in); other keys and columns are ignored. Values are checked against the taxonomy: a
// theme may be given by its full id or by its key under the row's kind; an empty kind (theme) is
// taken from the theme (sub-theme) given; a row whose four fields are all empty is not a label.
//
// For agreement a field's value is missing when the annotator left it empty; the sub-theme of a
// label with a theme is "(none)" when left empty (no sub-theme is an answer), missing otherwise.
//
// Pure functions except Read*/Write*, which touch only the files named; all thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "indexer/study.h"
#include "indexer/study_stats.h"
#include "indexer/taxonomy.h"

namespace issuescope::study {

// kLabelFields are the labelled fields, in report order.
inline constexpr const char* kLabelFields[] = {"kind", "theme", "subtheme", "llm"};

// kNoSubtheme is the value of an empty sub-theme next to a theme.
inline constexpr char kNoSubtheme[] = "(none)";

// Label is one issue's label by one annotator (or the final one); "" / nullopt when not given.
struct Label {
  std::string ref;  // as written in the file
  std::string key;  // CanonicalRef(ref)
  std::string kind;
  std::string theme;     // full id, "bug.memory"
  std::string subtheme;  // full id, "bug.memory.oom"
  std::optional<bool> llm;
  std::string reason;  // the adjudicator's reason (final labels only)
  int line = 0;        // line of the record in its file
};

// Annotation is one annotator's labels.
struct Annotation {
  std::string annotator;
  std::vector<Label> labels;
};

// FieldValue is a label's value of `field` for agreement; nullopt when missing.
std::optional<std::string> FieldValue(const Label& label, absl::string_view field);

// ParseLabels reads label records from `text` (CSV when `csv`, else JSON Lines) and validates
// them against `taxonomy`. INVALID_ARGUMENT "<source>:<line>: field '<field>': <what>" naming
// the bad value (an unknown kind, theme or sub-theme, a theme of another kind, an llm that is not
// true/false), a malformed line, a missing or bad ref, or a ref given twice.
absl::StatusOr<std::vector<Label>> ParseLabels(absl::string_view text, absl::string_view source,
                                               bool csv, const taxonomy::Taxonomy& taxonomy);

// ReadLabelFile reads `path` with ParseLabels (CSV when it ends in ".csv").
absl::StatusOr<std::vector<Label>> ReadLabelFile(const std::string& path,
                                                 const taxonomy::Taxonomy& taxonomy);

// CheckInSample fails with INVALID_ARGUMENT "<source>:<line>: ref '<ref>' is not in the sample
// (<dir>/sample.jsonl)" for the first label of an issue outside the study's sample.
absl::Status CheckInSample(const std::vector<Label>& labels, const Study& study,
                           absl::string_view source);

// LabelsJsonl renders labels as JSON Lines {"ref", "kind", "theme", "subtheme", "llm"[, "reason"]}.
std::string LabelsJsonl(const std::vector<Label>& labels);

// ValidAnnotatorName: letters, digits, '.', '_' and '-', not starting with '.'.
bool ValidAnnotatorName(absl::string_view name);

// WriteAnnotation stores an annotator's labels as <dir>/labels/<annotator>.jsonl (replacing
// them); ReadAnnotations reads every annotator stored in a study, sorted by name.
absl::Status WriteAnnotation(const std::string& dir, const Annotation& annotation);
absl::StatusOr<std::vector<Annotation>> ReadAnnotations(const std::string& dir,
                                                        const taxonomy::Taxonomy& taxonomy);

// PairAgreement is the agreement of two annotators on one field.
struct PairAgreement {
  std::string a, b;
  int64_t units = 0;  // units both labelled
  std::optional<double> agreement;  // share of those with equal values
  std::optional<double> kappa;      // Cohen's κ
  Table confusion;                  // a's values (rows) × b's (columns), FieldAgreement order
};

// FieldAgreement is the agreement of all annotators on one field.
struct FieldAgreement {
  std::string field;
  std::vector<std::string> categories;  // values seen, sorted
  int64_t units = 0;                    // units with at least two values
  std::optional<double> unanimous;      // share of those where every value is equal
  std::optional<double> fleiss;         // Fleiss' κ
  std::optional<double> alpha;          // Krippendorff's α, nominal
  std::vector<PairAgreement> pairs;     // every pair of annotators, in name order
};

// AgreementReport is the agreement of a set of annotations, field by field.
struct AgreementReport {
  std::vector<std::string> annotators;
  int64_t units = 0;  // issues labelled by anyone
  std::vector<FieldAgreement> fields;  // kLabelFields order
};

// ComputeAgreement measures agreement over the union of the annotated issues.
AgreementReport ComputeAgreement(const std::vector<Annotation>& annotations);

// AdjudicationItem is one issue of the adjudication sheet.
struct AdjudicationItem {
  std::string ref;
  std::string key;
  // "disagreed" (two annotators gave different values of some field), "single" (only one
  // annotator labelled it), or "agreed".
  std::string status;
  std::vector<std::string> disagree_on;  // fields with different values
  std::vector<std::optional<Label>> labels;  // per annotator, AgreementReport order
  // The final label: the agreed fields (labelled by two or more, all equal) filled in, the rest
  // empty for the adjudicator.
  Label final_label;
};

// Adjudicate lists every issue labelled by anyone: disagreements first, then single labels,
// then agreements, each in sample order (key order without a study).
std::vector<AdjudicationItem> Adjudicate(const std::vector<Annotation>& annotations,
                                         const Study* study);

// AdjudicationSheet renders the items as CSV (csv) or JSON Lines: ref, status, disagree_on,
// each field's value per annotator side by side ("kind:alice", "kind:bob", …), the title when
// `texts` has it, then the final kind, theme, subtheme, llm and an empty reason.
std::string AdjudicationSheet(const std::vector<AdjudicationItem>& items,
                              const std::vector<std::string>& annotators,
                              const std::vector<IssueRecord>& texts, bool csv);

// CheckFinal fails with INVALID_ARGUMENT "<source>:<line>: ref '<ref>': no final <field>" for
// the first final label without a kind or theme (not yet adjudicated).
absl::Status CheckFinal(const std::vector<Label>& labels, absl::string_view source);

// TrainingJsonl joins final labels with the issues' texts into the file `taxonomy train` reads
// (indexer/classifier_data.h): {"id", "ref", "repo", "title", "body", "labels", "kind", "theme",
// "subtheme", "llm"} per line. FAILED_PRECONDITION naming the first ref without a text.
absl::StatusOr<std::string> TrainingJsonl(const std::vector<Label>& labels,
                                          const std::vector<IssueRecord>& texts);

// ReportRow is the estimate of one value of one field in the population.
struct ReportRow {
  std::string field;  // "kind", "theme" or "llm"
  std::string value;  // "bug", "bug.memory", "true"
  std::string title;  // the taxonomy's title of the value ("" for llm)
  int64_t in_sample = 0;  // labelled units of the sample with this value
  int64_t labelled = 0;   // labelled units of the sample with any value of the field
  Estimate share;         // of the population
  double count = 0, count_low = 0, count_high = 0;  // share × N
};

// StudyReport holds the rows of `study report`.
struct StudyReport {
  double confidence = 0.95;
  int64_t population = 0;
  int64_t sample_size = 0;
  int64_t labelled = 0;  // sample units with a final label
  // Strata without any labelled unit: left out of the estimates (their N with them).
  std::vector<std::string> uncovered_strata;
  std::vector<ReportRow> rows;  // kinds, then themes, in taxonomy order, then llm = true
};

// ComputeReport estimates, for every kind and theme of `taxonomy` and for llm = true, the share
// and number of the population's issues from the final labels of the sample's issues
// (EstimateProportion over the manifest's strata). INVALID_ARGUMENT "<source>:<line>: ref … is
// not in the sample" for a label of another issue.
absl::StatusOr<StudyReport> ComputeReport(const Study& study, const std::vector<Label>& labels,
                                          const taxonomy::Taxonomy& taxonomy, double confidence,
                                          absl::string_view source);

}  // namespace issuescope::study

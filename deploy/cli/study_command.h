// `issuescope study sample|export|import|agreement|adjudicate|report`: an annotation study of
// the index's issues, from a stratified random sample to the population estimates a paper
// reports (docs/STUDY.md). The commands are thin: they read and write the study directory and
// the index (a data directory's, --data, or a search service's, --server) and print; the
// formats live in indexer/study.h and indexer/study_labels.h, the statistics in
// indexer/study_stats.h.
//
// Every Run* prints to `out` and returns INVALID_ARGUMENT for bad flags or bad input files (the
// message names the file, line, field and value), NOT_FOUND for a missing study or file.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "query_commands.h"

namespace issuescope::cli {

// StudySampleOptions are the flags of `study sample`.
struct StudySampleOptions {
  QueryTarget target;
  std::string query;     // query in the query language; "" samples every issue
  std::string out;       // the study directory to create
  int64_t size = 0;      // sample size; 0: from confidence and margin (Cochran)
  double confidence = 0.95;
  double margin = 0.05;
  std::vector<std::string> by;  // strata dimensions (study::kStrataDimensions)
  uint64_t seed = 1;
  std::string taxonomy;  // taxonomy file the labels will follow; "" = the built-in llm-dl/1
  bool force = false;    // replace a sample already in `out`
};

// RunStudySample draws the sample and writes out/manifest.json and out/sample.jsonl.
absl::Status RunStudySample(const StudySampleOptions& options, std::FILE* out = stdout);

// StudyExportOptions are the flags of `study export`.
struct StudyExportOptions {
  std::string sample;  // the study directory
  std::string format = "csv";  // csv or jsonl
  std::string out;     // the annotators' file; the definitions go next to it (*.definitions.md)
  bool show_tags = false;  // show the index's tags (default: blind)
  bool comments = false;   // append each issue's comments to its body
  QueryTarget target;  // where to read the issues; default: where the sample was drawn from
};

// RunStudyExport writes the annotators' file, the taxonomy's definitions and sample/texts.jsonl.
absl::Status RunStudyExport(const StudyExportOptions& options, std::FILE* out = stdout);

// StudyImportOptions are the flags of `study import`.
struct StudyImportOptions {
  std::string sample;
  std::vector<std::string> files;  // ANNOTATOR=FILE, CSV or JSONL
};

// RunStudyImport validates every file first, then stores each as sample/labels/ANNOTATOR.jsonl.
absl::Status RunStudyImport(const StudyImportOptions& options, std::FILE* out = stdout);

// StudyAgreementOptions are the flags of `study agreement`.
struct StudyAgreementOptions {
  std::string sample;  // a study directory (its imported labels), or none and
  std::vector<std::string> labels;  // ANNOTATOR=FILE label files (added to a study's own)
  std::string taxonomy;  // without a study: the taxonomy file; "" = the built-in llm-dl/1
  bool json = false;
};

// RunStudyAgreement prints agreement per field: unanimous share, Fleiss' κ, Krippendorff's α,
// per pair the agreement and Cohen's κ, and per pair the confusion of kind and theme.
absl::Status RunStudyAgreement(const StudyAgreementOptions& options, std::FILE* out = stdout);

// StudyAdjudicateOptions are the flags of `study adjudicate`.
struct StudyAdjudicateOptions {
  std::string sample;
  std::string out;       // the sheet (without resolved) or the training file (with it)
  std::string resolved;  // the sheet with the final columns filled in
};

// RunStudyAdjudicate writes the adjudication sheet (CSV when `out` ends in .csv, else JSONL);
// with `resolved`, checks that every labelled issue has a final kind and theme and writes the
// training file `out` (`taxonomy train --data`) and sample/final.jsonl.
absl::Status RunStudyAdjudicate(const StudyAdjudicateOptions& options, std::FILE* out = stdout);

// StudyReportOptions are the flags of `study report`.
struct StudyReportOptions {
  std::string sample;
  std::string labels;  // final labels; "" = sample/final.jsonl
  double confidence = 0.95;
  bool json = false;
};

// RunStudyReport prints per kind, theme and llm the sample counts and the population estimates
// with their confidence intervals, as Markdown tables or one JSON object.
absl::Status RunStudyReport(const StudyReportOptions& options, std::FILE* out = stdout);

}  // namespace issuescope::cli

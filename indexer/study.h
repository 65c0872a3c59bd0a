// An annotation study's sample and the files annotators work from (`issuescope study sample` and
// `study export`; docs/STUDY.md). A study lives in one directory:
//
//   manifest.json   what the sample is: query, index (documents, tagger, feed positions),
//                   taxonomy, seed, population size, strata (N_h, n_h)
//   sample.jsonl    one sampled issue per line: {"ref", "repo_slug", "number", "stratum"}, in a
//                   seeded random order (the order annotators see)
//   texts.jsonl     the sampled issues' title, body and native labels as indexed (written by
//                   `export`; `adjudicate` carries them into the training file)
//   labels/NAME.jsonl  each annotator's validated labels (study_labels.h)
//   final.jsonl     the adjudicated labels
//
// The sample is a pure function of the population (as a set: its order does not matter), the
// strata dimensions, the size and the seed: each stratum keeps its n_h issues with the smallest
// SplitMix64 hash of (seed, issue key), so the same seed over the same index gives the same
// sample however the index returns its hits.
//
// Pure functions except the ones named Read*/Write*, which touch only the files named; all
// thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/file_util.h"
#include "indexer/taxonomy.h"

namespace issuescope::study {

// CanonicalRef maps an issue reference ("owner/name#N" for GitHub, "gitlab:group/name#N",
// "github:Owner/Name#N") to the key refs are compared by: "github:owner/name#N", lower case.
// INVALID_ARGUMENT naming the reference when it is not one.
absl::StatusOr<std::string> CanonicalRef(absl::string_view ref);

// kStrataDimensions are the dimensions `--by` accepts.
inline constexpr const char* kStrataDimensions[] = {"repo", "tracker", "kind", "theme",
                                                    "llm",  "year",    "state"};

// PopulationUnit is one issue of the population a sample is drawn from (a hit of the query).
struct PopulationUnit {
  std::string ref;        // "owner/name#N" (GitHub) or "<tracker>:owner/name#N"
  std::string repo_slug;  // "github:owner/name"
  int64_t number = 0;
  std::string repo;  // "owner/name"
  std::string tracker;
  std::string kind;   // the index's tags; "" when untagged
  std::string theme;
  std::string llm;    // "true", "false" or ""
  int year = 0;       // year created (UTC); 0 when unknown
  std::string state;  // "open", "closed", ...
};

// SampleSpec says how to draw a sample.
struct SampleSpec {
  // Sample size; when 0 it is CochranSampleSize(confidence, margin, 0.5, population).
  int64_t size = 0;
  double confidence = 0.95;
  double margin = 0.05;
  // Strata dimensions, from kStrataDimensions; empty: one stratum.
  std::vector<std::string> by;
  uint64_t seed = 1;
};

// SampledUnit is one issue of a sample.
struct SampledUnit {
  std::string ref;        // as in PopulationUnit
  std::string repo_slug;
  int64_t number = 0;
  std::string stratum;    // "repo=owner/name|kind=bug"; "all" when not stratified
};

// Stratum is one stratum of the population and its share of the sample.
struct Stratum {
  std::string name;
  int64_t population = 0;  // N_h
  int64_t sample = 0;      // n_h
};

// IndexInfo is what the index said about itself when the sample was drawn.
struct IndexInfo {
  int64_t documents = 0;
  std::string tagger;  // fingerprint of the tagger the tags were made with
  std::vector<std::pair<std::string, uint64_t>> feeds;  // change-feed positions (store id, seq)
};

// Manifest describes a study's sample.
struct Manifest {
  std::string query;
  std::string data_dir;  // where the sample was drawn from: --data, or
  std::string server;    // --server
  IndexInfo index;
  std::string taxonomy;       // "llm-dl/1"
  std::string taxonomy_file;  // the file given with --taxonomy; "" for the built-in one
  uint64_t seed = 0;
  std::vector<std::string> by;
  int64_t requested_size = 0;  // --size; 0 when sized by confidence and margin
  double confidence = 0;
  double margin = 0;
  int64_t population = 0;  // N: issues matching the query
  int64_t sample_size = 0;  // n
  std::vector<Stratum> strata;  // sorted by name
};

// Study is a study directory's manifest and sample.
struct Study {
  std::string dir;
  Manifest manifest;
  std::vector<SampledUnit> units;
};

// StratumOf names the stratum of `unit` for the dimensions `by` ("all" for none). Untagged
// values are "(none)".
std::string StratumOf(const PopulationUnit& unit, const std::vector<std::string>& by);

// DrawSample draws the sample of `spec` from `population` (duplicates by key counted once) and
// fills `manifest`'s seed, by, sizes and strata. INVALID_ARGUMENT for an unknown dimension, an
// empty population, or confidence/margin outside (0, 1).
absl::StatusOr<std::vector<SampledUnit>> DrawSample(const std::vector<PopulationUnit>& population,
                                                    const SampleSpec& spec, Manifest* manifest);

// ManifestJson renders a manifest as pretty-printed JSON; ParseManifest reads it back
// (INVALID_ARGUMENT naming `source` and the field).
std::string ManifestJson(const Manifest& manifest);
absl::StatusOr<Manifest> ParseManifest(absl::string_view text, absl::string_view source);

// WriteStudy writes dir/manifest.json and dir/sample.jsonl (creating dir). FAILED_PRECONDITION
// when dir already holds a sample and `overwrite` is false.
absl::Status WriteStudy(const Study& study, bool overwrite);

// ReadStudy reads a study directory's manifest and sample. NOT_FOUND when dir has none.
absl::StatusOr<Study> ReadStudy(const std::string& dir);

// LoadStudyTaxonomy loads the study's taxonomy (its file, else the built-in default) and checks
// it is the one the manifest names. FAILED_PRECONDITION when it is another name or version.
absl::StatusOr<taxonomy::Taxonomy> LoadStudyTaxonomy(const Manifest& manifest);

// IssueComment is one comment of an exported issue.
struct IssueComment {
  std::string author;
  std::string created_at;  // RFC 3339
  std::string body;
};

// IssueRecord is a sampled issue's text and tags, as the index holds it.
struct IssueRecord {
  std::string ref;
  std::string repo;  // "owner/name"
  std::string title;
  std::string body;  // Markdown, as crawled
  std::vector<std::string> labels;
  std::vector<IssueComment> comments;
  // The index's tags (shown to annotators only with ExportOptions::show_tags).
  std::string kind, theme;
  std::vector<std::string> subthemes;
  std::string llm;  // "true", "false", "" (untagged)
};

// ExportOptions shapes the annotators' file.
struct ExportOptions {
  bool csv = true;          // CSV (RFC 4180, "\r\n") or JSON Lines
  bool show_tags = false;   // add the index's tags (tag_kind, tag_theme, tag_subthemes, tag_llm)
  bool comments = false;    // append the comments to the body text
};

// AnnotatorText renders a Markdown body for annotators: prose and template text as plain text
// (common/issue_sections.h PlainText, paragraph by paragraph; HTML comments dropped), code,
// logs and environment dumps verbatim.
std::string AnnotatorText(absl::string_view body);

// AnnotatorFile renders the file annotators fill in: columns ref, repo, title, labels, body,
// then the empty kind, theme, subtheme, llm, (with show_tags the index's tags before them) in
// `options`' format, one record per issue in sample order.
std::string AnnotatorFile(const std::vector<IssueRecord>& issues, const ExportOptions& options);

// TaxonomyDefinitions is a Markdown page of the taxonomy's kinds, themes and sub-themes with
// their ids, titles and definitions, and how to fill in the columns.
std::string TaxonomyDefinitions(const taxonomy::Taxonomy& taxonomy);

// TextsJsonl renders issues as dir/texts.jsonl lines {"ref", "repo", "title", "body", "labels"};
// ReadTexts reads that file back, by canonical ref. NOT_FOUND when it is missing.
std::string TextsJsonl(const std::vector<IssueRecord>& issues);
absl::StatusOr<std::vector<IssueRecord>> ReadTexts(const std::string& path);

}  // namespace issuescope::study

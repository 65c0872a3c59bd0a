// Tagging throughput (docs/TAXONOMY.md, "The shipped model"): issues tagged per second on one
// thread by TaxonomyTagger::Tag, rules only (--model none) and with the built-in model, over
// real issues (--data FILE: JSONL or CSV as `issuescope taxonomy eval` reads, e.g. devset-1
// joined from ../shared) or the generated benchmark corpus. Tag is what the indexer calls per
// issue, so this is the tagging share of bulk indexing.
//
//   bench_tagging [--data FILE] [--issues N] [--seconds S] [--model none,default,FILE...]
//
// Prints one line per model: issues, passes, seconds, issues/s, and the mean text bytes.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "indexer/classifier_data.h"
#include "indexer/taxonomy_tagger.h"
#include "tests/bench/bench_corpus.h"

namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "bench_tagging: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Tagging throughput: issues per second on one thread"};
  std::string data;
  int64_t issues = 5000;
  double seconds = 3;
  std::vector<std::string> models = {"none", "default"};
  app.add_option("--data", data, "labelled/real issues, JSONL or CSV (default: generated corpus)");
  app.add_option("--issues", issues, "generated issues when no --data")->check(CLI::PositiveNumber);
  app.add_option("--seconds", seconds, "minimum seconds per model")->check(CLI::PositiveNumber);
  app.add_option("--model", models, "models to time: none, default or files")->delimiter(',');
  CLI11_PARSE(app, argc, argv);

  namespace ix = issuescope::indexer;
  std::vector<issuescope::v1::IssueWithComments> corpus;
  if (!data.empty()) {
    auto records = issuescope::classifier::ReadIssuesFile(data);
    if (!records.ok()) return Fail(std::string(records.status().message()));
    for (const auto& rec : *records) {
      issuescope::v1::IssueWithComments iwc;
      iwc.mutable_issue()->set_title(rec.issue.title);
      iwc.mutable_issue()->set_body(rec.issue.body);
      for (const auto& l : rec.issue.labels) iwc.mutable_issue()->add_labels(l);
      corpus.push_back(std::move(iwc));
    }
  } else {
    issuescope::bench::CorpusOptions options;
    options.issues = issues;
    absl::Status s = issuescope::bench::GenerateChunks(
        options, [&](issuescope::bench::RepoIssues& repo) {
          for (auto& iwc : repo.issues) corpus.push_back(std::move(iwc));
          return absl::OkStatus();
        });
    if (!s.ok()) return Fail(std::string(s.message()));
  }
  if (corpus.empty()) return Fail("no issues");
  int64_t bytes = 0;
  for (const auto& iwc : corpus) bytes += iwc.issue().title().size() + iwc.issue().body().size();

  std::printf("%-10s %8s %6s %8s %10s %10s\n", "model", "issues", "passes", "seconds", "issues/s",
              "bytes/issue");
  for (const std::string& model : models) {
    auto tagger = ix::TaxonomyTagger::Create("", model);
    if (!tagger.ok()) return Fail(std::string(tagger.status().message()));
    if (model != "none" && !(*tagger)->has_model()) return Fail(model + ": no model loaded");
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    int passes = 0;
    double elapsed = 0;
    do {
      for (auto& iwc : corpus) (*tagger)->Tag(&iwc);
      ++passes;
      elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    } while (elapsed < seconds);
    const double tagged = static_cast<double>(corpus.size()) * passes;
    std::printf("%-10s %8zu %6d %8.2f %10.0f %10lld\n", model.c_str(), corpus.size(), passes,
                elapsed, tagged / elapsed, static_cast<long long>(bytes / corpus.size()));
  }
  return 0;
}

// bench_make_corpus: writes the benchmark corpus (tests/bench/bench_corpus.h) in the forms the
// indexing benchmark feeds to each indexer — a crawler store (what issuescope-bulk-index
// reads), a JSONL dump, scriptindex input (Omega's "field=value" records) and a CSV for SQLite
// FTS5's .import — all holding the same issues. Prints the corpus's size on stdout.
//
//   bench_make_corpus --issues N [--issues-per-repo N] [--comments-per-issue X] [--seed S]
//                     [--store DIR] [--jsonl FILE] [--scriptindex FILE] [--csv FILE]
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "common/csv.h"
#include "crawler/issue_store.h"
#include "google/protobuf/util/json_util.h"
#include "tests/bench/bench_corpus.h"

namespace {

using issuescope::v1::IssueWithComments;

// CommentsText joins the comment bodies, one blank line apart.
std::string CommentsText(const IssueWithComments& issue) {
  std::string out;
  for (const auto& c : issue.comments()) absl::StrAppend(&out, out.empty() ? "" : "\n\n", c.body());
  return out;
}

// ScriptindexField writes `name=value`; each further line of value continues with '='.
void ScriptindexField(std::ostream& out, absl::string_view name, absl::string_view value) {
  bool first = true;
  for (absl::string_view line : absl::StrSplit(value, '\n')) {
    out << (first ? absl::StrCat(name, "=") : std::string("=")) << line << "\n";
    first = false;
  }
}

int Fail(const std::string& message) {
  std::cerr << "bench_make_corpus: " << message << std::endl;
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  namespace bench = issuescope::bench;
  CLI::App app{"Write the indexing benchmark's corpus."};
  bench::CorpusOptions options;
  std::string store_dir, jsonl_path, script_path, csv_path;
  app.add_option("--issues", options.issues, "number of issues")->check(CLI::Range(0, 100000000));
  app.add_option("--issues-per-repo", options.issues_per_repo, "issues per repository")
      ->check(CLI::Range(1, 10000000));
  app.add_option("--comments-per-issue", options.comments_per_issue, "mean comments per issue")
      ->check(CLI::Range(0.0, 1000.0));
  app.add_option("--seed", options.seed, "generator seed");
  app.add_option("--store", store_dir, "crawler store directory to create");
  app.add_option("--jsonl", jsonl_path, "JSONL file of IssueWithComments");
  app.add_option("--scriptindex", script_path, "scriptindex input file");
  app.add_option("--csv", csv_path, "CSV file (key,title,body,comments) for SQLite .import");
  CLI11_PARSE(app, argc, argv);

  std::unique_ptr<issuescope::crawler::IssueStore> store;
  if (!store_dir.empty()) {
    absl::StatusOr<std::unique_ptr<issuescope::crawler::IssueStore>> opened =
        issuescope::crawler::IssueStore::Open(store_dir);
    if (!opened.ok()) return Fail(std::string(opened.status().message()));
    store = std::move(*opened);
  }
  std::ofstream jsonl, script, csv;
  auto open = [](std::ofstream& f, const std::string& path) {
    if (!path.empty()) f.open(path, std::ios::trunc | std::ios::binary);
    return path.empty() || f.good();
  };
  if (!open(jsonl, jsonl_path) || !open(script, script_path) || !open(csv, csv_path)) {
    return Fail("cannot create an output file");
  }

  int64_t issues = 0, comments = 0, text_bytes = 0, stored_bytes = 0;
  constexpr size_t kPage = 1000;
  absl::Status status = bench::GenerateChunks(options, [&](bench::RepoIssues& repo) {
    for (const IssueWithComments& issue : repo.issues) {
      ++issues;
      comments += issue.comments_size();
      text_bytes += bench::TextBytes(issue);
      stored_bytes += static_cast<int64_t>(issue.ByteSizeLong());
      const std::string key =
          absl::StrCat(repo.slug, "#", issue.issue().number());
      if (jsonl.is_open()) {
        std::string line;
        google::protobuf::util::MessageToJsonString(issue, &line);
        jsonl << line << "\n";
      }
      if (script.is_open()) {
        ScriptindexField(script, "id", key);
        ScriptindexField(script, "title", issue.issue().title());
        ScriptindexField(script, "body", issue.issue().body());
        ScriptindexField(script, "comments", CommentsText(issue));
        script << "\n";
      }
      if (csv.is_open()) {
        using issuescope::CsvQuote;
        csv << CsvQuote(key) << "," << CsvQuote(issue.issue().title()) << ","
            << CsvQuote(issue.issue().body()) << "," << CsvQuote(CommentsText(issue)) << "\n";
      }
    }
    if (store == nullptr) return absl::OkStatus();
    for (size_t i = 0; i < repo.issues.size(); i += kPage) {
      std::vector<issuescope::v1::Issue> page;
      std::vector<issuescope::v1::Comment> page_comments;
      for (size_t j = i; j < std::min(repo.issues.size(), i + kPage); ++j) {
        page.push_back(repo.issues[j].issue());
        for (const auto& c : repo.issues[j].comments()) page_comments.push_back(c);
      }
      absl::StatusOr<issuescope::crawler::StoreWriteCounts> r = store->ApplyIssues(repo.slug, 1, page);
      if (!r.ok()) return r.status();
      if (!page_comments.empty()) {
        r = store->ApplyComments(repo.slug, 1, page_comments);
        if (!r.ok()) return r.status();
      }
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return Fail(std::string(status.message()));
  for (std::ofstream* f : {&jsonl, &script, &csv}) {
    if (f->is_open()) {
      f->flush();
      if (!f->good()) return Fail("writing an output file failed");
    }
  }
  std::printf("issues=%lld comments=%lld text_bytes_per_issue=%.0f stored_bytes_per_issue=%.0f\n",
              static_cast<long long>(issues), static_cast<long long>(comments),
              issues ? static_cast<double>(text_bytes) / issues : 0.0,
              issues ? static_cast<double>(stored_bytes) / issues : 0.0);
  return 0;
}

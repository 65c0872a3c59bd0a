// issuescope-bulk-index: builds a new sharded index from stored issues, fast (a bulk
// (re-)index; the live indexer then follows the feeds from the positions it records).
//
//   issuescope-bulk-index --index DIR (--store DIR ... | --jsonl FILE ...)
//                         [--shards N] [--jobs N] [--batch N] [--fuller] [--quiet]
//                         [--taxonomy FILE] [--model FILE] [--no-tags]
//
// --store reads crawler store directories (stop their crawler first: a store is opened
// exclusively) and records each store's change-feed position in every shard; --jsonl reads
// dumps of issuescope.v1.IssueWithComments, one JSON object a line. --batch is the number of
// issues per run database (one commit each); runs are merged per shard with Xapian's compactor.
// Issues are tagged with the taxonomy (the embedded default llm-dl/1 unless --taxonomy/--model
// name others; --no-tags keeps the tags as read). Progress goes to stderr; the final line is a summary with documents per second. Bad flags or
// input print one line on stderr and exit 2; a failure while indexing exits 1.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
#include "bulk_indexer.h"
#include "bulk_source.h"
#include "indexer/taxonomy_tagger.h"

namespace {

constexpr char kProgram[] = "issuescope-bulk-index";

int Fail(int code, const std::string& message) {
  std::cerr << kProgram << ": " << message << std::endl;
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  namespace ix = issuescope::indexer;
  CLI::App app{"Build a new sharded Xapian index from stored issues, fast."};
  std::vector<std::string> stores, jsonl;
  ix::BulkIndexOptions options;
  bool quiet = false;
  app.add_option("--index", options.index_dir, "index directory to create (new or empty)")
      ->required();
  app.add_option("--store", stores, "crawler store directory (repeatable)");
  app.add_option("--jsonl", jsonl, "JSONL file of IssueWithComments (repeatable)");
  app.add_option("--shards", options.shards, "shard databases (match the live indexer)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--jobs", options.jobs, "worker threads; 0 = number of cores")
      ->check(CLI::Range(0, 256));
  app.add_option("--batch", options.batch_docs, "issues per run database (one commit each)")
      ->check(CLI::Range(1, 1000000));
  app.add_flag("--fuller", options.fuller, "merge with FULLER compaction (read-mostly index)");
  app.add_flag("--quiet", quiet, "no progress lines");
  std::string taxonomy_path, model_path = "default";
  bool no_tags = false;
  app.add_option("--taxonomy", taxonomy_path, "taxonomy TOML file (default: built-in llm-dl/1)");
  app.add_option("--model", model_path,
                 "classifier model: default (built in), none (rules and labels only) or a file")
      ->capture_default_str();
  app.add_flag("--no-tags", no_tags, "do not tag; keep the tags the issues carry");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    return Fail(2, e.what());
  }
  if (stores.empty() == jsonl.empty()) {
    return Fail(2, "give either --store DIR ... or --jsonl FILE ..., not both or neither");
  }
  std::unique_ptr<ix::TaxonomyTagger> tagger;
  if (!no_tags) {
    absl::StatusOr<std::unique_ptr<ix::TaxonomyTagger>> created =
        ix::TaxonomyTagger::Create(taxonomy_path, model_path);
    if (!created.ok()) return Fail(2, std::string(created.status().message()));
    tagger = std::move(*created);
    options.tagger = tagger.get();
  } else if (!taxonomy_path.empty() || model_path != "default") {
    return Fail(2, "--no-tags cannot be combined with --taxonomy or --model");
  }
  absl::StatusOr<std::unique_ptr<ix::IssueSource>> source =
      stores.empty() ? ix::OpenJsonlSource(jsonl) : ix::OpenStoreSource(stores);
  if (!source.ok()) return Fail(2, std::string(source.status().message()));
  if (!quiet) {
    options.progress = [](const ix::BulkProgress& p) {
      if (p.phase == "index") {
        std::fprintf(stderr, "%s: index %.1fs read=%lld built=%lld (%.0f docs/s) runs=%lld/%lld\n",
                     kProgram, p.elapsed_seconds, static_cast<long long>(p.issues_read),
                     static_cast<long long>(p.documents_built),
                     p.elapsed_seconds > 0 ? p.documents_built / p.elapsed_seconds : 0.0,
                     static_cast<long long>(p.runs_done), static_cast<long long>(p.runs_total));
      } else {
        std::fprintf(stderr, "%s: merge %.1fs shards=%lld/%lld\n", kProgram, p.elapsed_seconds,
                     static_cast<long long>(p.runs_done), static_cast<long long>(p.runs_total));
      }
    };
  }
  absl::StatusOr<ix::BulkIndexStats> stats = ix::BuildIndex(**source, options);
  if (!stats.ok()) {
    const int code = stats.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
    return Fail(code, std::string(stats.status().message()));
  }
  const double total = stats->index_seconds + stats->merge_seconds;
  std::fprintf(stderr,
               "%s: done: %lld documents (%lld copies read, %lld superseded, %lld tombstones) in "
               "%.2fs (index %.2fs, merge %.2fs) = %.0f docs/s; %lld runs, %u shards\n",
               kProgram, static_cast<long long>(stats->documents),
               static_cast<long long>(stats->issues_read),
               static_cast<long long>(stats->superseded),
               static_cast<long long>(stats->tombstones), total, stats->index_seconds,
               stats->merge_seconds, total > 0 ? stats->documents / total : 0.0,
               static_cast<long long>(stats->runs), options.shards);
  for (const auto& [store, seq] : stats->feed_positions) {
    std::fprintf(stderr, "%s: feed:%s = %llu\n", kProgram, store.c_str(),
                 static_cast<unsigned long long>(seq));
  }
  return 0;
}

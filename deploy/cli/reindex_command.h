// `issuescope reindex --data DIR [--taxonomy F] [--model M] [--no-progress]`: re-tags every issue
// stored in the one-machine index DIR/index (sharded or not) with the given taxonomy and model
// (default: the built-in llm-dl/1, rules and labels only), without re-crawling: each document
// holds its issue. It runs offline with a progress bar ("re-tagged 12,000 / 80,000"), commits in
// batches so searches keep working meanwhile, resumes an interrupted re-tag, and does nothing
// when the index was already tagged with the same taxonomy and model. It refuses, naming the
// directory, when a live indexer holds the index's write lock.
#pragma once

#include <cstdio>
#include <string>

#include "absl/status/status.h"

namespace issuescope::cli {

// ReindexCommandOptions are the flags of `issuescope reindex`.
struct ReindexCommandOptions {
  std::string data_dir;  // the data directory of `crawl`; the index is data_dir/index
  std::string taxonomy;  // taxonomy file; "" = the built-in default
  std::string model = "default";  // "default" (built in), "none" or a model file
  int batch_size = 500;  // documents per commit
  bool force = false;    // re-tag even when the fingerprint is unchanged
};

// RunReindex re-tags the index and prints progress and a summary to `out`. FAILED_PRECONDITION
// when the index is missing or locked by a running indexer; the tagger's errors for bad files.
absl::Status RunReindex(const ReindexCommandOptions& options, std::FILE* out = stdout);

}  // namespace issuescope::cli

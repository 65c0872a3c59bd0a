// BulkIndexer builds a new sharded index (common/index_layout.h: shard-NNN databases and the
// issuescope.stub) from stored issues, fast: a bulk (re-)index, not live indexing.
//
// How: the calling thread reads issues from an IssueSource and keeps, per issue, only the newest
// copy (IndexVersion order; a newer tombstone removes it). It groups issues by shard
// (index::ShardOf of the repository slug) into runs of `batch_docs` issues. `jobs` worker
// threads each turn one run at a time into a small Xapian database, written in ONE commit into
// an empty database (the cheapest write Xapian has: no merging with existing posting lists).
// Finally each shard's runs are merged with Xapian's compactor (what xapian-compact runs),
// shards in parallel, and every shard records the change-feed positions the source covered
// ("feed:<store_id>") and the tagger's fingerprint, so the live indexer continues from there.
//
// Runs are built in `<index_dir>/.bulk-runs` and removed at the end. The index directory must
// be new or empty: a re-index builds beside the live index and is swapped in by the operator.
// Thread-safety: BuildIndex may be called from any thread; it runs its own workers and returns
// when they are done. The Tagger, if any, is called from several workers at once.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "bulk_source.h"
#include "indexer/tagger.h"

namespace issuescope::indexer {

// BulkProgress is a snapshot of a running bulk index, passed to BulkIndexOptions::progress.
struct BulkProgress {
  // Phase: "index" while reading and building runs, "merge" while merging runs into shards.
  std::string phase;
  int64_t issues_read = 0;      // copies read from the source
  int64_t documents_built = 0;  // documents written into runs
  int64_t runs_done = 0;        // runs committed (index) or shards merged (merge)
  int64_t runs_total = 0;       // runs dispatched so far (index) or shards (merge)
  double elapsed_seconds = 0;
};

// BulkIndexOptions configure BuildIndex. Every field documents its Default.
struct BulkIndexOptions {
  // index_dir is where the index is built; it must not exist or be empty. Required.
  std::string index_dir;
  // shards is the number of shard databases (match the live indexer's). Default: 1.
  uint32_t shards = 1;
  // jobs is the number of worker threads building runs and merging shards; 0 means the number
  // of cores. Default: 0.
  int jobs = 0;
  // batch_docs is the number of issues per run: each run is one database written with one
  // commit (the commit interval). Larger runs mean fewer, larger merges and more memory: the
  // reader holds up to batch_docs stored issues per shard plus 2 × jobs runs in flight, and
  // each worker's database buffers its run until the commit. Default: 5000.
  int batch_docs = 5000;
  // fuller merges with Xapian's FULLER compaction (smaller, for indexes that will not be
  // updated much); else STANDARD, as xapian-compact does by default. Default: false.
  bool fuller = false;
  // tagger, when set, tags every issue before its document is built; its Fingerprint is
  // recorded under index::kTaggerMetadataKey. Not owned. Default: nullptr (tags kept as read).
  Tagger* tagger = nullptr;
  // progress, when set, is called from the calling thread about every progress_interval
  // seconds and once at the end of each phase. Default: none.
  std::function<void(const BulkProgress&)> progress;
  // progress_interval in seconds. Default: 2.
  double progress_interval = 2.0;
};

// BulkIndexStats is what BuildIndex did.
struct BulkIndexStats {
  int64_t issues_read = 0;    // copies read from the source
  int64_t documents = 0;      // documents in the index
  int64_t tombstones = 0;     // issues whose newest copy is deleted (not indexed)
  // superseded counts copies not indexed because an equal or newer copy of the same issue was
  // read, or replaced later by a newer one (a store's change log names an issue once per
  // change, so most are repeats of the same version).
  int64_t superseded = 0;
  int64_t runs = 0;           // run databases built
  double index_seconds = 0;   // reading and building runs (wall clock)
  double merge_seconds = 0;   // merging runs into shards (wall clock)
  // feed_positions are the "feed:<store_id>" positions recorded in every shard.
  std::map<std::string, uint64_t> feed_positions;
};

// BuildIndex builds the index described by `options` from everything `source` yields.
// Errors: INVALID_ARGUMENT for bad options or a non-empty index_dir; the source's errors;
// UNAVAILABLE (or the Xapian error converted, named) when writing fails. On error the partial
// index directory is left for inspection and is not a valid index (it has no stub).
absl::StatusOr<BulkIndexStats> BuildIndex(IssueSource& source, const BulkIndexOptions& options);

}  // namespace issuescope::indexer

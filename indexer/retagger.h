// Retagger: re-tags every stored document of an index (all its shards) when the tagger's
// fingerprint differs from the one the index records (metadata index::kTaggerMetadataKey), so a
// taxonomy or model change needs no re-crawl: each document holds its serialized issue
// (index::ReadDocument), which is tagged again and rebuilt in place.
//
// Work goes in batches of `batch_size` documents per shard, each committed with its progress
// (metadata kRetag* below), so searches keep working and see whole batches, and a crash resumes
// where the last committed batch ended. Documents indexed from the feed meanwhile are tagged by
// the writer's (new) tagger anyway; only documents that existed when the re-tag began (ids up to
// the shard's last id then) are visited. When a shard is done its "tagger" metadata becomes the
// new fingerprint. Progress: Progress(), a callback, and an info log line every
// `log_every` documents ("re-tagged 12,000 / 80,000").
//
// The shard writers and the tagger are borrowed and must outlive the Retagger. Thread-safety:
// Start/Stop/Progress from any thread; Run from one thread at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/index_schema.h"
#include "indexer/index_writer.h"
#include "indexer/tagger.h"

namespace issuescope::indexer {

// Metadata keys of a re-tag in progress (defined with the schema in common/index_schema.h).
using index::kRetagCursorKey;
using index::kRetagDoneKey;
using index::kRetagEndKey;
using index::kRetagFingerprintKey;
using index::kRetagTotalKey;

// RetagProgress is a snapshot of a re-tag over all shards.
struct RetagProgress {
  int64_t done = 0;
  int64_t total = 0;
  // True while some shard still has documents to visit.
  bool running = false;
  // The fingerprint being applied (or applied last).
  std::string fingerprint;
};

// RetaggerOptions tunes batches and reporting.
struct RetaggerOptions {
  // Documents re-tagged per commit. Default: 500.
  int batch_size = 500;
  // An info log line every this many documents (and at the end); 0 logs none. Default: 10000.
  int64_t log_every = 10000;
  // Called after every committed batch (from the thread running the re-tag). Default: none.
  std::function<void(const RetagProgress&)> on_progress;
};

class Retagger {
 public:
  // Retagger borrows the shard writers and the tagger (whose Fingerprint must not be "").
  Retagger(std::vector<IndexWriter*> shards, Tagger* tagger, RetaggerOptions options = {});
  // ~Retagger stops the background thread.
  ~Retagger();
  Retagger(const Retagger&) = delete;
  Retagger& operator=(const Retagger&) = delete;

  // Prepare reads every shard's metadata and plans the work: shards already tagged with the
  // fingerprint are skipped, empty ones just record it, a re-tag of the same fingerprint that
  // was interrupted resumes at its cursor. Returns whether any document needs re-tagging.
  absl::StatusOr<bool> Prepare();
  // Run re-tags (calling Prepare first if it was not called) until done or Stop. CANCELLED
  // when stopped early (the committed batches stay).
  absl::Status Run();
  // Start runs Prepare and Run on a background thread (errors are logged; see status()).
  void Start();
  // Stop makes Run return after its current batch and joins the background thread.
  void Stop();
  // Progress returns the current totals.
  RetagProgress Progress() const;
  // status returns how the background run ended (OK while running or not started).
  absl::Status status() const;

 private:
  // ShardPlan is the re-tag state of one shard.
  struct ShardPlan {
    bool pending = false;
    Xapian::docid cursor = 0;
    Xapian::docid up_to = 0;
    int64_t done = 0;
    int64_t total = 0;
  };

  void Report(bool force);

  const std::vector<IndexWriter*> shards_;
  Tagger* const tagger_;
  const RetaggerOptions options_;
  const std::string fingerprint_;

  std::atomic<bool> stopping_{false};
  std::thread thread_;
  mutable std::mutex mu_;
  bool prepared_ = false;
  std::vector<ShardPlan> plans_;
  int64_t last_logged_ = 0;
  absl::Status status_;
};

// RecordUntagged marks every shard as holding documents without (current) tags, so the next
// run with a tagger re-tags them (used with `--no-tags`).
absl::Status RecordUntagged(const std::vector<IndexWriter*>& shards);

// TaggingStatus is what an index says about its tags (summed over its shards).
struct TaggingStatus {
  // The fingerprint the tags were made with ("" when unknown, "mixed" when shards differ).
  std::string tagger;
  RetagProgress retag;
};

// ReadTaggingStatus reads the tagger and re-tag metadata of every local shard of `index_dir`
// (index::ShardPaths). Throws what Xapian throws (callers convert at their edge).
TaggingStatus ReadTaggingStatus(const std::string& index_dir);

}  // namespace issuescope::indexer

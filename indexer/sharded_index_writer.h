// ShardedIndexWriter: live indexing into a sharded index (common/index_layout.h): one Xapian
// database per shard (`shard-NNN`) plus the stub `issuescope.stub` readers open, each shard with
// its own IndexWriter and its own writer thread fed through a bounded queue, so shards index in
// parallel. An issue always goes to shard ShardOf(repo_slug, N).
//
// Exactly-once per shard: Apply splits a batch by shard and hands every shard its part (possibly
// no events) with the batch's last_seq; each shard commits its documents together with its own
// "feed:<store>" position. Position(store) is the minimum over the shards, so after a crash a
// follower resumes there and each shard skips, by its own position, what it already holds.
// Apply returns when every shard has applied its part (the first error, if any; the caller then
// resumes from Position()).
//
// Thread-safety: every method may be called from any thread; Apply calls of several stores run
// concurrently. The shard writers are owned; shard(i) lends them to the Retagger.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "indexer/change_sink.h"
#include "indexer/index_writer.h"

namespace issuescope::indexer {

// ShardedIndexWriterOptions: shard count, queueing and the options of every shard writer.
struct ShardedIndexWriterOptions {
  // Number of shards (>= 2; one database is a plain IndexWriter). Default: 2.
  uint32_t shards = 2;
  // Tasks each shard's queue holds before Apply blocks. Default: 16.
  size_t queue_capacity = 16;
  // Options of every shard's IndexWriter (commit grouping, tagger, hooks).
  IndexWriterOptions writer;
};

class ShardedIndexWriter : public ChangeSink {
 public:
  // Open opens (creating) the sharded index in `index_dir`: writes the stub, opens every shard
  // writer, starts the shard threads. INVALID_ARGUMENT when `shards` < 2 or the directory
  // holds an unsharded index or a stub with another shard count (naming both counts);
  // FAILED_PRECONDITION when a shard is locked by another indexer.
  static absl::StatusOr<std::unique_ptr<ShardedIndexWriter>> Open(
      const std::string& index_dir, ShardedIndexWriterOptions options);

  // ~ShardedIndexWriter stops the shard threads; each shard writer commits what is pending.
  ~ShardedIndexWriter() override;
  ShardedIndexWriter(const ShardedIndexWriter&) = delete;
  ShardedIndexWriter& operator=(const ShardedIndexWriter&) = delete;

  // ChangeSink: see the class comment. Flush/FlushIfDue run on every shard.
  absl::Status Apply(const v1::ChangeBatch& batch, ApplyResult* result = nullptr) override;
  absl::Status Flush() override;
  absl::Status FlushIfDue() override;
  uint64_t Position(absl::string_view store_id) const override;
  std::vector<std::pair<std::string, uint64_t>> Positions() const override;
  // CommittedPositions: per store, the lowest committed position over the shards.
  std::vector<std::pair<std::string, uint64_t>> CommittedPositions() const override;
  int64_t DocumentCount() const override;

  // shard_count returns N; shard(i) the writer of shard i (owned by this object).
  uint32_t shard_count() const { return static_cast<uint32_t>(shards_.size()); }
  IndexWriter* shard(uint32_t i) const { return shards_[i]->writer.get(); }

 private:
  // Shard is one shard's writer, its queue of tasks and its thread.
  struct Shard {
    std::unique_ptr<IndexWriter> writer;
    std::mutex mu;
    std::condition_variable changed;
    std::deque<std::function<void()>> queue;
    bool stopping = false;
    std::thread thread;
  };

  ShardedIndexWriter(std::string index_dir, size_t queue_capacity);
  void RunShard(Shard* shard);
  // RunOnAll runs `task(i)` on every shard's thread and waits for all; returns the first error.
  absl::Status RunOnAll(const std::function<absl::Status(uint32_t)>& task);

  const std::string index_dir_;
  const size_t queue_capacity_;
  std::vector<std::unique_ptr<Shard>> shards_;
};

// CheckIndexLayout verifies that `index_dir` can be opened with `shards` shards: 1 needs no
// stub there; more need no unsharded database there and, if a stub exists, the same count.
// INVALID_ARGUMENT naming the directory and what it holds otherwise.
absl::Status CheckIndexLayout(const std::string& index_dir, uint32_t shards);

// OpenShardWriters opens a writer on every local database of `index_dir` (index::ShardPaths),
// for offline work such as `issuescope reindex`. FAILED_PRECONDITION when one is locked.
absl::StatusOr<std::vector<std::unique_ptr<IndexWriter>>> OpenShardWriters(
    const std::string& index_dir, IndexWriterOptions options = {});

}  // namespace issuescope::indexer

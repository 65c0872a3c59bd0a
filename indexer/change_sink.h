// ChangeSink: what a FeedFollower and the IndexerDaemon write change-feed batches into. Two
// implementations: IndexWriter (one Xapian database) and ShardedIndexWriter (one database per
// shard, one writer thread each). Both are exactly-once per store: Position(store) is where a
// follower must resume, and any event at or below what is already indexed is skipped.
//
// Implementations are thread-safe (every method may be called from any thread).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "issuescope/v1/store.pb.h"

namespace issuescope::indexer {

// ApplyResult counts what one Apply did with the events of a batch.
struct ApplyResult {
  // Events with seq <= the store's position (already indexed).
  int64_t already_consumed = 0;
  // Documents replaced or added.
  int64_t upserted = 0;
  // Documents deleted (DELETE events, or issues the tracker reports deleted).
  int64_t deleted = 0;
  // Events whose version is older than the indexed document (a stale worker).
  int64_t stale = 0;
  // UPSERT events without an issue (only comments arrived so far).
  int64_t without_issue = 0;
  // Events newer than the position (everything except already_consumed).
  int64_t consumed() const { return upserted + deleted + stale + without_issue; }

  // Add sums the counts of another result into this one.
  void Add(const ApplyResult& other) {
    already_consumed += other.already_consumed;
    upserted += other.upserted;
    deleted += other.deleted;
    stale += other.stale;
    without_issue += other.without_issue;
  }
};

class ChangeSink {
 public:
  virtual ~ChangeSink() = default;
  // Apply indexes one batch of the feed of store `batch.store_id()` (see IndexWriter::Apply).
  // On error the caller must resume from Position(store_id).
  virtual absl::Status Apply(const v1::ChangeBatch& batch, ApplyResult* result = nullptr) = 0;
  // Flush commits every pending group now.
  virtual absl::Status Flush() = 0;
  // FlushIfDue commits pending groups whose commit delay has passed.
  virtual absl::Status FlushIfDue() = 0;
  // Position returns the sequence number of store `store_id` from which a follower resumes.
  virtual uint64_t Position(absl::string_view store_id) const = 0;
  // Positions returns every store's position, sorted by store id.
  virtual std::vector<std::pair<std::string, uint64_t>> Positions() const = 0;
  // CommittedPositions returns every store's position as of the last commit (durable: a crash
  // does not take it back), sorted by store id. The coordinator removes a drained worker once
  // these reach its store's last seq.
  virtual std::vector<std::pair<std::string, uint64_t>> CommittedPositions() const = 0;
  // DocumentCount returns the number of indexed issues.
  virtual int64_t DocumentCount() const = 0;
};

}  // namespace issuescope::indexer

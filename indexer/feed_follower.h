// FeedFollower: follows the change feed of one crawler worker's store over gRPC and applies
// every batch through a ChangeSink (IndexWriter or ShardedIndexWriter), from its position onwards.
//
// One background thread: GetStoreInfo (learns the store id and its newest seq), then
// Changes(from_seq = writer.Position(store_id), follow = true, store_id = id), applying each
// batch. When the stream breaks (the worker restarts, the network drops, a batch fails to
// apply), it reconnects after a bounded, jittered exponential backoff slept through the Clock
// seam, and resumes from the position the writer holds, so no event is lost or applied twice.
// When the store answers FAILED_PRECONDITION (it was wiped and got a new id), the follower
// re-reads GetStoreInfo and continues with the new id from that store's position (0 when new).
//
// Ownership: the writer and clock are not owned and must outlive the follower. Thread-safety:
// Start, Stop and GetStats may be called from any thread; Stop cancels the stream
// (ClientContext::TryCancel) and joins.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "indexer/index_writer.h"
#include "issuescope/v1/store.grpc.pb.h"

namespace issuescope::indexer {

// FeedFollowerOptions tunes reconnection and batching.
struct FeedFollowerOptions {
  // Backoff before the first reconnect; doubles per failed attempt. Default: 200 ms.
  absl::Duration initial_backoff = absl::Milliseconds(200);
  // Upper bound of the backoff. Default: 10 s.
  absl::Duration max_backoff = absl::Seconds(10);
  // Deadline of the GetStoreInfo call. Default: 10 s.
  absl::Duration info_timeout = absl::Seconds(10);
  // ChangesRequest.max_batch; 0 means the server's default. Default: 0.
  int32_t max_batch = 0;
  // Seed of the backoff jitter. Default: 0 (fixed, so runs are reproducible).
  uint64_t jitter_seed = 0;
};

// FeedFollowerStats is a snapshot of a follower's counters and state.
struct FeedFollowerStats {
  // Store address (host:port) and the store id being followed ("" before the first contact).
  std::string address;
  std::string store_id;
  // Batches received and applied.
  int64_t batches = 0;
  // Events newer than the position that were consumed (indexed, deleted or skipped as stale).
  int64_t events_applied = 0;
  // Times the stream was re-opened after breaking, and times the store id changed.
  int64_t reconnects = 0;
  int64_t store_changes = 0;
  // Writer position of the store, and the store's newest seq as last seen.
  uint64_t position = 0;
  uint64_t store_last_seq = 0;
  // True while the stream is open and the position has reached the store's newest seq as of
  // connecting (or any later batch).
  bool caught_up = false;
  // The last error that broke the stream ("" if none yet).
  std::string last_error;
};

class FeedFollower {
 public:
  // FeedFollower follows the store at `address` (host:port) through `channel`, expecting store
  // id `store_id` ("" means: learn it from GetStoreInfo).
  FeedFollower(std::string address, std::shared_ptr<grpc::Channel> channel, std::string store_id,
               ChangeSink* writer, Clock* clock, FeedFollowerOptions options = {});
  // ~FeedFollower stops the follower.
  ~FeedFollower();
  FeedFollower(const FeedFollower&) = delete;
  FeedFollower& operator=(const FeedFollower&) = delete;

  // Start launches the background thread (once).
  void Start();
  // Stop cancels the stream and any backoff, and joins the thread. Idempotent.
  void Stop();
  // GetStats returns the counters and state.
  FeedFollowerStats GetStats() const;

 private:
  void Run();
  // FollowOnce does one connection: GetStoreInfo, then the Changes stream until it ends.
  // Returns the status that ended it; *progressed tells whether any batch arrived.
  absl::Status FollowOnce(bool* progressed);
  // Backoff sleeps the jittered backoff of `attempt` in slices, returning early on Stop.
  void Backoff(int attempt);
  // SetContext publishes the in-flight call's context for Stop (nullptr when none); false when
  // stopping already (the caller must not start the call).
  bool SetContext(grpc::ClientContext* context);

  const std::string address_;
  const std::unique_ptr<v1::IssueStore::Stub> stub_;
  ChangeSink* const writer_;
  Clock* const clock_;
  const FeedFollowerOptions options_;

  std::atomic<bool> stopping_{false};
  std::thread thread_;
  std::mutex start_mu_;  // serializes Start and Stop

  mutable std::mutex mu_;
  grpc::ClientContext* context_ = nullptr;  // the in-flight call, for TryCancel
  FeedFollowerStats stats_;
  std::mt19937_64 rng_;
};

}  // namespace issuescope::indexer

// One way to drain a store's change log into an index: the feed follower (a gRPC Changes stream),
// the one-machine catch-up of `issuescope crawl` (the store read in process) and the bulk
// indexer's store input (crawler stores read from sequence 0) all read batches through a
// ChangeSource; the first two apply them with DrainChangeLog.
//
// A change log is a sequence of ChangeBatch messages (issuescope.v1.store): each batch covers the
// events after the previous batch's last_seq up to its own last_seq, coalesced per issue.
//
// Thread-safety: a ChangeSource is used by one thread at a time; DrainChangeLog is as
// thread-safe as the sink it writes to (ChangeSink implementations are).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "indexer/change_sink.h"
#include "issuescope/v1/store.pb.h"

namespace issuescope::indexer {

// ChangeSource yields one store's change-log batches in order.
class ChangeSource {
 public:
  virtual ~ChangeSource() = default;
  // Next fills `batch` with the next batch and returns true; false at the end of the log (or
  // when a stream ends: its caller reads the stream's final status); an error when a read
  // failed.
  virtual absl::StatusOr<bool> Next(v1::ChangeBatch* batch) = 0;
};

// ReadChangesFn reads the changes after `from_seq`, at most `max_events` events
// (crawler::IssueStore::ReadChanges has this contract: batch.last_seq is the highest seq
// covered, == from_seq when there is nothing new).
using ReadChangesFn =
    std::function<absl::StatusOr<v1::ChangeBatch>(uint64_t from_seq, int max_events)>;

// StoreLogSource reads a store's log with `read` from after `from` up to `until` (inclusive,
// usually the store's last_seq when the source is made), `max_events` a read. `name` names the
// store in errors. A read error is returned naming the store and the position; a read that
// makes no progress before `until` is DATA_LOSS (a log that ends before its own last_seq).
std::unique_ptr<ChangeSource> StoreLogSource(ReadChangesFn read, uint64_t from, uint64_t until,
                                             std::string name, int max_events = 1000);

// StreamSource adapts a stream reader: `read` fills a batch and returns false when the stream
// ends (grpc::ClientReader::Read).
std::unique_ptr<ChangeSource> StreamSource(std::function<bool(v1::ChangeBatch*)> read);

// BatchApplied is called by DrainChangeLog after each applied batch.
using BatchApplied = std::function<void(const v1::ChangeBatch&, const ApplyResult&)>;

// DrainChangeLog applies every batch of `source` to `sink` as batches of store `store_id`: a
// batch without a store id gets `store_id`, a batch naming another store stops the drain with
// FAILED_PRECONDITION ("a batch of store X while following Y"). `on_batch` (may be null) sees
// each applied batch. Returns OK at the end of the source, else the error that stopped it
// (nothing of the failed batch is applied; the sink's Position is where to resume). `*applied`
// (may be null) receives the number of events consumed (ApplyResult::consumed) in any case.
absl::Status DrainChangeLog(ChangeSource& source, absl::string_view store_id, ChangeSink& sink,
                            const BatchApplied& on_batch = nullptr, int64_t* applied = nullptr);

}  // namespace issuescope::indexer

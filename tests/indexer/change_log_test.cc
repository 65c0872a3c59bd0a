// The change-log reader and drain shared by the feed follower, the one-machine catch-up and the
// bulk indexer (indexer/change_log.h), over a scripted log and a recording sink.
#include "indexer/change_log.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace issuescope::indexer {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A log of `n` events, seq 1..n, read `max` at a time.
v1::ChangeBatch Read(uint64_t n, uint64_t from, int max) {
  v1::ChangeBatch batch;
  uint64_t seq = from;
  while (seq < n && batch.events_size() < max) {
    v1::ChangeEvent* e = batch.add_events();
    e->set_seq(++seq);
  }
  batch.set_last_seq(seq);
  return batch;
}

// RecordingSink applies nothing; it records each batch's store, events and last seq, and keeps
// positions per store. `fail_at` makes the Apply of a batch ending at that seq fail.
class RecordingSink final : public ChangeSink {
 public:
  absl::Status Apply(const v1::ChangeBatch& batch, ApplyResult* result) override {
    if (batch.last_seq() == fail_at) return absl::InternalError("disk full");
    applied.push_back(absl::StrCat(batch.store_id(), ":", batch.events_size(), "@",
                                   batch.last_seq()));
    positions[batch.store_id()] = batch.last_seq();
    if (result != nullptr) result->upserted = batch.events_size();
    return absl::OkStatus();
  }
  absl::Status Flush() override { return absl::OkStatus(); }
  absl::Status FlushIfDue() override { return absl::OkStatus(); }
  uint64_t Position(absl::string_view store_id) const override {
    auto it = positions.find(std::string(store_id));
    return it == positions.end() ? 0 : it->second;
  }
  std::vector<std::pair<std::string, uint64_t>> Positions() const override {
    return {positions.begin(), positions.end()};
  }
  std::vector<std::pair<std::string, uint64_t>> CommittedPositions() const override {
    return Positions();
  }
  int64_t DocumentCount() const override { return 0; }

  uint64_t fail_at = 0;
  std::vector<std::string> applied;
  std::map<std::string, uint64_t> positions;
};

TEST(StoreLogSourceTest, ReadsFromThePositionToTheEndInBatches) {
  std::vector<uint64_t> froms;
  auto log = StoreLogSource(
      [&](uint64_t from, int max) {
        froms.push_back(from);
        return absl::StatusOr<v1::ChangeBatch>(Read(25, from, max));
      },
      5, 25, "s1", 8);
  RecordingSink sink;
  int64_t applied = -1;
  ASSERT_TRUE(DrainChangeLog(*log, "s1", sink, nullptr, &applied).ok());
  EXPECT_THAT(froms, ElementsAre(5, 13, 21));
  EXPECT_THAT(sink.applied, ElementsAre("s1:8@13", "s1:8@21", "s1:4@25"));
  EXPECT_EQ(applied, 20);
  EXPECT_EQ(sink.Position("s1"), 25u);
}

TEST(StoreLogSourceTest, NothingToReadAtOrPastTheEnd) {
  int reads = 0;
  auto log = StoreLogSource(
      [&](uint64_t from, int max) {
        ++reads;
        return absl::StatusOr<v1::ChangeBatch>(Read(10, from, max));
      },
      10, 10, "s1");
  v1::ChangeBatch batch;
  absl::StatusOr<bool> more = log->Next(&batch);
  ASSERT_TRUE(more.ok());
  EXPECT_FALSE(*more);
  EXPECT_EQ(reads, 0);
}

TEST(StoreLogSourceTest, ALogEndingBeforeItsLastSeqIsDataLoss) {
  // The store says its last seq is 30, but the log holds 12 events.
  auto log = StoreLogSource(
      [](uint64_t from, int max) { return absl::StatusOr<v1::ChangeBatch>(Read(12, from, max)); },
      0, 30, "/data/store", 100);
  RecordingSink sink;
  absl::Status s = DrainChangeLog(*log, "s1", sink);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("/data/store made no progress"));
  EXPECT_THAT(s.message(), HasSubstr("at seq 12 of 30"));
  EXPECT_THAT(sink.applied, ElementsAre("s1:12@12"));  // what was read is applied
}

TEST(StoreLogSourceTest, AReadErrorNamesTheStoreAndThePosition) {
  auto log = StoreLogSource(
      [](uint64_t, int) {
        return absl::StatusOr<v1::ChangeBatch>(absl::UnavailableError("rocksdb: IO error"));
      },
      7, 30, "/data/store");
  v1::ChangeBatch batch;
  absl::StatusOr<bool> more = log->Next(&batch);
  EXPECT_EQ(more.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(more.status().message(),
              HasSubstr("change log of store /data/store after seq 7: rocksdb: IO error"));
}

TEST(DrainChangeLogTest, FillsTheStoreIdAndRefusesAnotherStoresBatch) {
  std::vector<v1::ChangeBatch> stream(3);
  stream[0] = Read(10, 0, 4);
  stream[1] = Read(10, 4, 4);
  stream[1].set_store_id("s1");
  stream[2] = Read(10, 8, 4);
  stream[2].set_store_id("s2");  // a replaced store answering on the same address
  size_t next = 0;
  auto source = StreamSource([&](v1::ChangeBatch* b) {
    if (next == stream.size()) return false;
    *b = stream[next++];
    return true;
  });
  RecordingSink sink;
  std::vector<uint64_t> seen;
  int64_t applied = 0;
  absl::Status s = DrainChangeLog(
      *source, "s1", sink,
      [&](const v1::ChangeBatch& b, const ApplyResult& r) {
        seen.push_back(b.last_seq());
        EXPECT_EQ(r.upserted, b.events_size());
      },
      &applied);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("a batch of store s2 while following s1"));
  EXPECT_THAT(sink.applied, ElementsAre("s1:4@4", "s1:4@8"));
  EXPECT_THAT(seen, ElementsAre(4, 8));
  EXPECT_EQ(applied, 8);
}

TEST(DrainChangeLogTest, AFailedApplyStopsTheDrainWhereTheSinkStands) {
  auto log = StoreLogSource(
      [](uint64_t from, int max) { return absl::StatusOr<v1::ChangeBatch>(Read(9, from, max)); },
      0, 9, "s1", 3);
  RecordingSink sink;
  sink.fail_at = 6;
  absl::Status s = DrainChangeLog(*log, "s1", sink);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(sink.Position("s1"), 3u);  // the caller resumes from here
  EXPECT_THAT(sink.applied, ElementsAre("s1:3@3"));
}

}  // namespace
}  // namespace issuescope::indexer

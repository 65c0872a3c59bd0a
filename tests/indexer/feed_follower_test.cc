#include "indexer/feed_follower.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/indexer/fake_services.h"
#include "tests/indexer/test_issues.h"

namespace issuescope::indexer {
namespace {

using testing::Batch;
using testing::FakeIssueStore;
using testing::LoopbackServer;
using testing::MakeIssue;
using testing::Upsert;
using testing::WaitUntil;

// Events seq first..last, each upserting issue `seq` of `repo`.
std::vector<v1::ChangeEvent> Events(const std::string& repo, uint64_t first, uint64_t last) {
  std::vector<v1::ChangeEvent> events;
  for (uint64_t seq = first; seq <= last; ++seq) {
    events.push_back(Upsert(seq, MakeIssue(repo, static_cast<int64_t>(seq),
                                           repo + " issue " + std::to_string(seq), 100)));
  }
  return events;
}

class FeedFollowerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto writer = IndexWriter::Open(":memory:");
    ASSERT_TRUE(writer.ok()) << writer.status();
    writer_ = std::move(writer).value();
  }

  std::unique_ptr<FeedFollower> MakeFollower(const std::string& address,
                                             const std::string& store_id) {
    auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
    return std::make_unique<FeedFollower>(address, channel, store_id, writer_.get(), &clock_);
  }

  FakeClock clock_;
  std::unique_ptr<IndexWriter> writer_;
};

TEST_F(FeedFollowerTest, ResumesAfterABrokenStreamWithoutLossOrDuplicates) {
  FakeIssueStore store("store-a");
  store.Append(Events("a/b", 1, 10));
  store.BreakNextStreamAfter(2);  // seqs 1-4 arrive, then the connection resets
  LoopbackServer server(&store);
  auto follower = MakeFollower(server.address(), "");
  follower->Start();

  ASSERT_TRUE(WaitUntil([&] { return follower->GetStats().caught_up; }));
  EXPECT_EQ(writer_->Position("store-a"), 10u);
  EXPECT_EQ(writer_->DocumentCount(), 10);
  const std::vector<v1::ChangesRequest> requests = store.ChangesRequests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].from_seq(), 0u);
  EXPECT_EQ(requests[0].store_id(), "store-a");
  EXPECT_TRUE(requests[0].follow());
  EXPECT_EQ(requests[1].from_seq(), 4u);  // resumed from the committed position
  EXPECT_EQ(store.EventsSent(), 10);       // nothing was sent (or applied) twice

  // While following, new events arrive on the open stream.
  store.Append(Events("a/b", 11, 13));
  ASSERT_TRUE(WaitUntil([&] { return writer_->Position("store-a") == 13; }));
  follower->Stop();

  const FeedFollowerStats stats = follower->GetStats();
  EXPECT_EQ(stats.store_id, "store-a");
  EXPECT_EQ(stats.batches, 7);
  EXPECT_EQ(stats.events_applied, 13);
  EXPECT_EQ(stats.reconnects, 1);
  EXPECT_EQ(stats.position, 13u);
  EXPECT_NE(stats.last_error.find("connection reset (scripted)"), std::string::npos)
      << stats.last_error;
  EXPECT_EQ(writer_->DocumentCount(), 13);
  EXPECT_GT(clock_.TotalSlept(), absl::ZeroDuration());  // backed off through the Clock
}

TEST_F(FeedFollowerTest, StartsFromTheWritersPositionOfAKnownStore) {
  FakeIssueStore store("store-a");
  const std::vector<v1::ChangeEvent> events = Events("a/b", 1, 6);
  store.Append(events);
  // Indexed before a restart: seqs 1-4.
  ASSERT_TRUE(writer_->Apply(Batch("store-a", 4, {events.begin(), events.begin() + 4})).ok());
  LoopbackServer server(&store);
  auto follower = MakeFollower(server.address(), "store-a");
  follower->Start();

  ASSERT_TRUE(WaitUntil([&] { return writer_->Position("store-a") == 6; }));
  follower->Stop();
  ASSERT_FALSE(store.ChangesRequests().empty());
  EXPECT_EQ(store.ChangesRequests()[0].from_seq(), 4u);
  EXPECT_EQ(store.EventsSent(), 2);
  EXPECT_EQ(follower->GetStats().events_applied, 2);
  EXPECT_EQ(writer_->DocumentCount(), 6);
}

TEST_F(FeedFollowerTest, ReplacedStoreIsFollowedFromItsOwnPosition) {
  FakeIssueStore store("store-a");
  store.Append(Events("a/b", 1, 3));
  LoopbackServer server(&store);
  auto follower = MakeFollower(server.address(), "");
  follower->Start();
  ASSERT_TRUE(WaitUntil([&] { return follower->GetStats().caught_up; }));
  ASSERT_EQ(writer_->Position("store-a"), 3u);

  // The worker restarts with a wiped store; the follower first sees the old id (a race), so
  // Changes answers FAILED_PRECONDITION and it must re-read the store's identity.
  store.Replace("store-b", Events("c/d", 1, 2), /*stale_info_once=*/true);
  ASSERT_TRUE(WaitUntil([&] {
    return writer_->Position("store-b") == 2 && follower->GetStats().caught_up;
  }));
  follower->Stop();

  EXPECT_EQ(writer_->Position("store-a"), 3u);
  EXPECT_EQ(writer_->DocumentCount(), 5);
  const std::vector<v1::ChangesRequest> requests = store.ChangesRequests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[1].store_id(), "store-a");  // refused: FAILED_PRECONDITION
  EXPECT_EQ(requests[1].from_seq(), 3u);
  EXPECT_EQ(requests[2].store_id(), "store-b");
  EXPECT_EQ(requests[2].from_seq(), 0u);  // a new store starts from 0
  const FeedFollowerStats stats = follower->GetStats();
  EXPECT_EQ(stats.store_id, "store-b");
  EXPECT_EQ(stats.store_changes, 1);
  EXPECT_EQ(stats.reconnects, 2);
}

TEST_F(FeedFollowerTest, BadBatchIsAClearErrorAndNotSkipped) {
  FakeIssueStore store("store-a");
  std::vector<v1::ChangeEvent> events = Events("a/b", 1, 3);
  events[2].set_kind(v1::CHANGE_KIND_UNSPECIFIED);  // seq 3, in the second batch
  store.Append(events);
  LoopbackServer server(&store);
  auto follower = MakeFollower(server.address(), "");
  follower->Start();

  ASSERT_TRUE(WaitUntil([&] { return follower->GetStats().reconnects >= 3; }));
  follower->Stop();
  const FeedFollowerStats stats = follower->GetStats();
  EXPECT_NE(stats.last_error.find("event seq 3 has unknown kind 0"), std::string::npos)
      << stats.last_error;
  EXPECT_EQ(writer_->Position("store-a"), 2u);
  EXPECT_EQ(writer_->DocumentCount(), 2);
}

TEST_F(FeedFollowerTest, UnreachableStoreIsRetriedAndStopReturns) {
  std::string address;
  {
    FakeIssueStore store("gone");
    LoopbackServer server(&store);
    address = server.address();
  }  // nothing listens there any more
  auto follower = MakeFollower(address, "store-x");
  follower->Start();
  ASSERT_TRUE(WaitUntil([&] { return follower->GetStats().reconnects >= 2; }));
  follower->Stop();
  const FeedFollowerStats stats = follower->GetStats();
  EXPECT_FALSE(stats.caught_up);
  EXPECT_NE(stats.last_error.find("GetStoreInfo of store " + address), std::string::npos)
      << stats.last_error;
  EXPECT_EQ(writer_->DocumentCount(), 0);
}

}  // namespace
}  // namespace issuescope::indexer

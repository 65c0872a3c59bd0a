#include "indexer/indexer_daemon.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/tls.h"
#include "gtest/gtest.h"
#include "tests/common/test_certificates.h"
#include "tests/indexer/fake_services.h"
#include "tests/indexer/test_issues.h"

namespace issuescope::indexer {
namespace {

using testing::FakeCoordinator;
using testing::FakeIssueStore;
using testing::LoopbackServer;
using testing::MakeIssue;
using testing::Upsert;
using testing::WaitUntil;
using testing::Worker;

class IndexerDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto writer = IndexWriter::Open(":memory:");
    ASSERT_TRUE(writer.ok()) << writer.status();
    writer_ = std::move(writer).value();
    store_a_.Append({Upsert(1, MakeIssue("a/b", 1, "one", 1)),
                     Upsert(2, MakeIssue("a/b", 2, "two", 1))});
    store_b_.Append({Upsert(1, MakeIssue("c/d", 1, "three", 1))});
  }

  FakeClock clock_;
  std::unique_ptr<IndexWriter> writer_;
  FakeIssueStore store_a_{"store-a"};
  FakeIssueStore store_b_{"store-b"};
  LoopbackServer server_a_{&store_a_};
  LoopbackServer server_b_{&store_b_};
  FakeCoordinator coordinator_;
  LoopbackServer coordinator_server_{&coordinator_};
};

TEST_F(IndexerDaemonTest, FollowsTheWorkersTheCoordinatorLists) {
  IndexerDaemonOptions options;
  options.coordinator_address = coordinator_server_.address();
  IndexerDaemon daemon(writer_.get(), &clock_, options);

  coordinator_.SetWorkers({Worker("worker-0", server_a_.address(), "store-a"),
                           Worker("worker-1", "", "store-x")});  // no store address: skipped
  ASSERT_TRUE(daemon.PollOnce().ok());
  ASSERT_TRUE(WaitUntil([&] { return writer_->Position("store-a") == 2; }));
  ASSERT_EQ(daemon.Followers().size(), 1u);
  EXPECT_EQ(daemon.Followers()[0].address, server_a_.address());

  // Polling again with the same list keeps the running follower.
  ASSERT_TRUE(daemon.PollOnce().ok());
  ASSERT_EQ(daemon.Followers().size(), 1u);
  EXPECT_EQ(daemon.Followers()[0].batches, 1);

  // worker-0 moves to another address (with another store): its follower is restarted there.
  coordinator_.SetWorkers({Worker("worker-0", server_b_.address(), "store-b")});
  ASSERT_TRUE(daemon.PollOnce().ok());
  ASSERT_TRUE(WaitUntil([&] { return writer_->Position("store-b") == 1; }));
  const std::vector<FeedFollowerStats> followers = daemon.Followers();
  ASSERT_EQ(followers.size(), 1u);
  EXPECT_EQ(followers[0].address, server_b_.address());
  EXPECT_EQ(followers[0].store_id, "store-b");
  EXPECT_EQ(writer_->DocumentCount(), 3);

  // Every poll reports the committed positions, which the coordinator waits on to remove a
  // drained worker.
  ASSERT_TRUE(writer_->Flush().ok());
  ASSERT_TRUE(daemon.PollOnce().ok());
  const auto [progress, reports] = coordinator_.LastProgress();
  EXPECT_EQ(reports, 4);
  EXPECT_EQ(progress.indexer_id(), "indexer");
  ASSERT_EQ(progress.positions_size(), 2);
  EXPECT_EQ(progress.positions(0).store_id(), "store-a");
  EXPECT_EQ(progress.positions(0).seq(), 2u);
  EXPECT_EQ(progress.positions(1).store_id(), "store-b");
  EXPECT_EQ(progress.positions(1).seq(), 1u);
  daemon.Stop();
  EXPECT_TRUE(daemon.Followers().empty());
}

TEST_F(IndexerDaemonTest, BackgroundThreadDiscoversWorkers) {
  IndexerDaemonOptions options;
  options.coordinator_address = coordinator_server_.address();
  IndexerDaemon daemon(writer_.get(), &clock_, options);
  ASSERT_TRUE(daemon.Start().ok());
  coordinator_.SetWorkers({Worker("worker-0", server_a_.address(), "store-a"),
                           Worker("worker-1", server_b_.address(), "store-b")});
  ASSERT_TRUE(WaitUntil([&] {
    return writer_->Position("store-a") == 2 && writer_->Position("store-b") == 1;
  }));
  EXPECT_EQ(daemon.Followers().size(), 2u);
  daemon.Stop();
  EXPECT_EQ(writer_->DocumentCount(), 3);
}

TEST_F(IndexerDaemonTest, StaticStoreListNeedsNoCoordinator) {
  IndexerDaemonOptions options;
  options.store_addresses = {server_a_.address(), server_b_.address()};
  IndexerDaemon daemon(writer_.get(), &clock_, options);
  ASSERT_TRUE(daemon.Start().ok());
  ASSERT_TRUE(WaitUntil([&] { return writer_->DocumentCount() == 3; }));
  const std::vector<FeedFollowerStats> followers = daemon.Followers();
  ASSERT_EQ(followers.size(), 2u);
  EXPECT_TRUE(WaitUntil([&] {
    for (const auto& f : daemon.Followers()) {
      if (!f.caught_up) return false;
    }
    return true;
  }));
  daemon.Stop();
  EXPECT_EQ(writer_->Position("store-a"), 2u);
  EXPECT_EQ(writer_->Position("store-b"), 1u);
}

TEST_F(IndexerDaemonTest, BadOptionsAreClearErrors) {
  struct Case {
    std::string name;
    IndexerDaemonOptions options;
    std::string message_part;
  };
  IndexerDaemonOptions both;
  both.coordinator_address = "127.0.0.1:1";
  both.store_addresses = {"127.0.0.1:2"};
  IndexerDaemonOptions bad_store;
  bad_store.store_addresses = {"no-port"};
  IndexerDaemonOptions bad_coordinator;
  bad_coordinator.coordinator_address = "no-port";
  const std::vector<Case> cases = {
      {"neither", IndexerDaemonOptions(), "exactly one of them"},
      {"both", both, "exactly one of them"},
      {"store without port", bad_store, "store address \"no-port\" is not HOST:PORT"},
      {"coordinator without port", bad_coordinator,
       "coordinator address \"no-port\" is not HOST:PORT"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    IndexerDaemon daemon(writer_.get(), &clock_, c.options);
    absl::Status status = daemon.Start();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find(c.message_part), absl::string_view::npos) << status;
  }
}

TEST_F(IndexerDaemonTest, UnreachableCoordinatorIsAnError) {
  std::string address;
  {
    FakeCoordinator gone;
    LoopbackServer server(&gone);
    address = server.address();
  }
  IndexerDaemonOptions options;
  options.coordinator_address = address;
  IndexerDaemon daemon(writer_.get(), &clock_, options);
  absl::Status status = daemon.PollOnce();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("GetStatus of coordinator " + address), std::string::npos)
      << status;
  EXPECT_TRUE(daemon.Followers().empty());
}

// Stores served over TLS (their --tls-cert, and --tls-client-ca for mTLS) are followed by a daemon
// with --store-tls-ca (and --store-tls-cert/--store-tls-key); a daemon without them gets nothing.
TEST_F(IndexerDaemonTest, FollowsStoresOverTls) {
  if (!HasOpenssl()) GTEST_SKIP() << "no openssl command";
  const std::string dir = ::testing::TempDir() + "issuescope-indexer-tls";
  auto certs = MakeTestCertificates(dir);
  ASSERT_TRUE(certs.ok()) << certs.status();
  for (const bool mtls : {false, true}) {
    SCOPED_TRACE(mtls ? "mTLS" : "TLS");
    const std::string store_id = mtls ? "store-mtls" : "store-tls";
    ServerTlsFiles tls;
    tls.cert = certs->server_cert;
    tls.key = certs->server_key;
    if (mtls) tls.client_ca = certs->ca;
    auto credentials = ServerCredentialsFor(tls);
    ASSERT_TRUE(credentials.ok()) << credentials.status();
    FakeIssueStore store(store_id);
    store.Append({Upsert(1, MakeIssue("t/ls", mtls ? 2 : 1, "over tls", 1))});
    LoopbackServer server(&store, *credentials);

    // Without the store's CA (or, for mTLS, without a client certificate) nothing arrives.
    IndexerDaemonOptions refused;
    refused.store_addresses = {server.address()};
    if (mtls) refused.store_tls.ca = certs->ca;
    {
      IndexerDaemon daemon(writer_.get(), &clock_, refused);
      ASSERT_TRUE(daemon.Start().ok());
      ASSERT_TRUE(WaitUntil([&] {
        const auto followers = daemon.Followers();
        return followers.size() == 1 && !followers[0].last_error.empty();
      }));
      daemon.Stop();
    }
    EXPECT_EQ(store.EventsSent(), 0);
    EXPECT_EQ(writer_->Position(store_id), 0u);

    IndexerDaemonOptions options;
    options.store_addresses = {server.address()};
    options.store_tls.ca = certs->ca;
    if (mtls) {
      options.store_tls.cert = certs->client_cert;
      options.store_tls.key = certs->client_key;
    }
    IndexerDaemon daemon(writer_.get(), &clock_, options);
    ASSERT_TRUE(daemon.Start().ok());
    EXPECT_TRUE(WaitUntil([&] { return writer_->Position(store_id) == 1; }));
    daemon.Stop();
  }
  EXPECT_EQ(writer_->DocumentCount(), 2);

  // An unreadable CA is an error naming its flag, before anything is followed.
  IndexerDaemonOptions bad;
  bad.store_addresses = {server_a_.address()};
  bad.store_tls.ca = dir + "/missing.pem";
  IndexerDaemon daemon(writer_.get(), &clock_, bad);
  absl::Status started = daemon.Start();
  EXPECT_EQ(started.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(started.message(), "--store-tls-ca " + dir + "/missing.pem: cannot read");
  EXPECT_TRUE(daemon.Followers().empty());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace issuescope::indexer

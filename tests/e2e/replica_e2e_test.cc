// Read replicas (issue 18): an index host's sharded index, with changesets kept as
// `issuescope-indexer --keep-changesets` keeps them, served by xapian-replicate-server; two
// issuescope-search processes keep copies of it (--replicate-from) and answer exactly as a
// searcher over the index host's own directory (hits, scores, totals, facets, gone issues); a
// commit on the index host reaches them within the lag the issue allows (5 s); and 16 clients
// calling through one CreateSearchChannel over both replicas lose no query when one replica is
// killed under them. Real processes on loopback; skips, saying why, without xapian-tools.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/grpc_channel.h"
#include "common/index_document.h"
#include "common/index_layout.h"
#include "common/subprocess.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "issuescope/v1/search.grpc.pb.h"
#include "search/replica_follower.h"
#include "search/searcher.h"
#include "tests/common/free_port.h"
#include "tests/e2e/e2e_util.h"
#include "tests/search/search_fixture.h"

namespace issuescope::e2e {
namespace {

using search::testing::GeneratedIssue;
using search::testing::IssueSpec;

constexpr char kReplicateServer[] = "/usr/bin/xapian-replicate-server";
constexpr uint32_t kShards = 2;

std::string Bin(const std::string& name) { return std::string(ISSUESCOPE_BIN_DIR) + "/" + name; }

v1::SearchRequest Request(const std::string& query) {
  v1::SearchRequest r;
  r.set_query(query);
  r.set_page_size(30);
  r.add_facets("repo");
  r.add_facets("label");
  return r;
}

// Comparable clears what differs between two correct answers: timing and the page token.
std::string Comparable(v1::SearchResponse r) {
  r.clear_took_us();
  r.clear_next_page_token();
  return r.DebugString();
}

bool Serving(const std::shared_ptr<grpc::Channel>& channel) {
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::health::v1::HealthCheckRequest req;
  grpc::health::v1::HealthCheckResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  return stub->Check(&ctx, req, &resp).ok() &&
         resp.status() == grpc::health::v1::HealthCheckResponse::SERVING;
}

absl::StatusOr<v1::SearchResponse> Call(v1::Search::Stub* stub, const v1::SearchRequest& req) {
  return e2e::CallSearch(stub, req);
}

TEST(ReplicaE2E, ReplicasAnswerAsTheIndexHostAndFailOverUnderLoad) {
  if (access(kReplicateServer, X_OK) != 0 || access("/usr/bin/xapian-replicate", X_OK) != 0) {
    GTEST_SKIP() << "xapian-replicate(-server) not installed (Debian package xapian-tools)";
  }
  const std::string work = MakeTempDir("issuescope-replica");
  const std::string master = work + "/master/index";
  // What --keep-changesets sets in the indexer.
  setenv("XAPIAN_MAX_CHANGESETS", "20", 1);
  std::filesystem::create_directories(master);
  std::vector<Xapian::WritableDatabase> shards;
  for (uint32_t i = 0; i < kShards; ++i) {
    shards.emplace_back(master + "/" + index::ShardDirName(i), Xapian::DB_CREATE_OR_OPEN);
  }
  ASSERT_TRUE(index::WriteStubFile(master, kShards).ok());
  search::testing::WriteGeneratedIssues(&shards, 0, 1500);
  {
    // Two issues the tracker reported deleted, in shard 0's gone database.
    Xapian::WritableDatabase gone(index::GonePath(master + "/" + index::ShardDirName(0)),
                                  Xapian::DB_CREATE_OR_OPEN);
    int written = 0;
    for (int n = 2000; written < 2; ++n) {
      v1::IssueWithComments iwc = GeneratedIssue(n);
      const std::string slug = RepoSlug(iwc.issue().repo());
      if (index::ShardOf(slug, kShards) != 0) continue;
      iwc.mutable_issue()->set_deleted(true);
      gone.replace_document(index::IdTerm(slug, iwc.issue().number()),
                            index::BuildGoneDocument(iwc));
      ++written;
    }
    gone.commit();
  }

  const int replicate_port = testing::FreeLoopbackPort();
  ASSERT_GT(replicate_port, 0);
  auto server = Subprocess::Start({kReplicateServer, "--interface=127.0.0.1",
                                   absl::StrCat("--port=", replicate_port), work + "/master"},
                                  work + "/replicate-server.log");
  ASSERT_TRUE(server.ok()) << server.status();

  std::vector<std::unique_ptr<Subprocess>> replicas;
  std::vector<std::string> addresses;
  for (int r = 0; r < 2; ++r) {
    const std::string dir = absl::StrCat(work, "/replica", r);
    auto replica = Subprocess::Start(
        {Bin("issuescope-search"), "--listen=127.0.0.1:0", "--port-file=" + dir + ".port",
         "--index=" + dir + "/index", absl::StrCat("--replicate-from=127.0.0.1:", replicate_port),
         "--replicate-index=index", absl::StrCat("--replicate-shards=", kShards),
         "--replicate-interval=0.2"},
        dir + ".log");
    ASSERT_TRUE(replica.ok()) << replica.status();
    auto port = WaitForPortFile(dir + ".port", absl::Seconds(30), replica->get());
    ASSERT_TRUE(port.ok()) << port.status() << "\n" << ReadFile(dir + ".log");
    addresses.push_back(absl::StrCat("127.0.0.1:", *port));
    replicas.push_back(*std::move(replica));
  }
  std::vector<std::unique_ptr<v1::Search::Stub>> stubs;
  for (int r = 0; r < 2; ++r) {
    auto channel = grpc::CreateChannel(addresses[r], grpc::InsecureChannelCredentials());
    bool serving = false;
    for (int i = 0; i < 300 && !serving; ++i) {
      serving = Serving(channel);
      if (!serving) absl::SleepFor(absl::Milliseconds(100));
    }
    ASSERT_TRUE(serving) << "replica " << r << " never reported SERVING\n"
                         << ReadFile(absl::StrCat(work, "/replica", r, ".log"));
    stubs.push_back(v1::Search::NewStub(channel));
  }

  // The same answers as a searcher over the index host's own directory.
  const std::string title = GeneratedIssue(5).issue().title();
  const std::string phrase = "\"" + title.substr(0, title.find(" in ")) + "\"";
  const std::vector<std::string> queries = {
      "cuda memory", "leak", phrase, "crash repo:org/repo1", "is:closed label:bug",
      "kernel OR nan", "is:deleted", "gradient -slow"};
  auto local = search::Searcher::ForPath(master);
  for (const std::string& q : queries) {
    auto want = local->Search(Request(q));
    ASSERT_TRUE(want.ok()) << q << ": " << want.status();
    ASSERT_GT(want->total(), 0) << q;
    for (int r = 0; r < 2; ++r) {
      auto got = Call(stubs[r].get(), Request(q));
      ASSERT_TRUE(got.ok()) << q << ": " << got.status();
      EXPECT_EQ(Comparable(*got), Comparable(*want)) << "replica " << r << ", query " << q;
    }
  }

  // A commit on the index host (to every shard) reaches the replicas within 5 s: they answer
  // every query as the index host does after it.
  search::testing::WriteGeneratedIssues(&shards, 1500, 1700);
  const absl::Time committed = absl::Now();
  std::map<std::string, std::string> expected;
  for (const std::string& q : queries) {
    auto want = local->Search(Request(q));
    ASSERT_TRUE(want.ok());
    expected[q] = Comparable(*want);
  }
  auto answers_as_expected = [&](v1::Search::Stub* stub) {
    for (const std::string& q : queries) {
      auto got = Call(stub, Request(q));
      if (!got.ok() || Comparable(*got) != expected[q]) return false;
    }
    return true;
  };
  absl::Duration lag[2];
  for (int r = 0; r < 2; ++r) {
    while (!answers_as_expected(stubs[r].get()) && absl::Now() - committed < absl::Seconds(30)) {
      absl::SleepFor(absl::Milliseconds(20));
    }
    lag[r] = absl::Now() - committed;
    EXPECT_TRUE(answers_as_expected(stubs[r].get())) << "replica " << r;
  }
  std::printf("[figures] replication lag after a 200-issue commit to both shards: %.2f s and "
              "%.2f s (--replicate-interval 0.2)\n",
              absl::ToDoubleSeconds(lag[0]), absl::ToDoubleSeconds(lag[1]));
  EXPECT_LE(lag[0], absl::Seconds(5));
  EXPECT_LE(lag[1], absl::Seconds(5));

  // 16 clients over both replicas; one replica is killed under them: no query is lost.
  auto channel = CreateSearchChannel(absl::StrCat(addresses[0], ",", addresses[1]), {});
  ASSERT_TRUE(channel.ok()) << channel.status();
  auto shared = v1::Search::NewStub(*channel);
  std::atomic<bool> stop{false};
  std::atomic<int64_t> served{0}, failed{0}, wrong{0}, after_kill{0};
  std::atomic<bool> killed{false};
  std::mutex first_error_mu;
  std::string first_error;
  std::vector<std::thread> clients;
  for (int c = 0; c < 16; ++c) {
    clients.emplace_back([&, c] {
      for (int i = c; !stop.load(); ++i) {
        const std::string& q = queries[i % queries.size()];
        auto got = Call(shared.get(), Request(q));
        if (!got.ok()) {
          ++failed;
          std::lock_guard<std::mutex> lock(first_error_mu);
          if (first_error.empty()) first_error = std::string(got.status().message());
          continue;
        }
        ++served;
        if (killed.load()) ++after_kill;
        if (Comparable(*got) != expected[q]) ++wrong;
      }
    });
  }
  absl::SleepFor(absl::Seconds(1.5));
  const int64_t before_kill = served.load();
  replicas[0]->Signal(SIGKILL);
  killed.store(true);
  absl::SleepFor(absl::Seconds(2.5));
  stop.store(true);
  for (std::thread& t : clients) t.join();
  std::printf("[figures] 16 clients over 2 replicas, one killed after %lld queries: %lld served, "
              "%lld after the kill, %lld failed, %lld wrong\n",
              static_cast<long long>(before_kill), static_cast<long long>(served.load()),
              static_cast<long long>(after_kill.load()), static_cast<long long>(failed.load()),
              static_cast<long long>(wrong.load()));
  EXPECT_GT(before_kill, 0);
  EXPECT_GT(after_kill.load(), 0) << "nothing was served after the kill";
  EXPECT_EQ(failed.load(), 0) << first_error;
  EXPECT_EQ(wrong.load(), 0);

  // Replica 1 restarted while the index host's replication server is down: it serves the copy
  // it completed before (and says SERVING), answering as before.
  (*server)->Stop();
  EXPECT_EQ(replicas[1]->Stop(), "exit 0");
  const std::string dir1 = work + "/replica1";
  auto again = Subprocess::Start(
      {Bin("issuescope-search"), "--listen=" + addresses[1], "--index=" + dir1 + "/index",
       absl::StrCat("--replicate-from=127.0.0.1:", replicate_port), "--replicate-index=index",
       absl::StrCat("--replicate-shards=", kShards), "--replicate-interval=0.2",
       "--port-file=" + dir1 + ".restarted.port"},
      dir1 + ".restarted.log");
  ASSERT_TRUE(again.ok()) << again.status();
  // Connect only once it listens: a channel refused while the process starts backs off for
  // seconds, which on a loaded machine outlasts the wait below.
  auto restarted_port = WaitForPortFile(dir1 + ".restarted.port", absl::Seconds(30), again->get());
  ASSERT_TRUE(restarted_port.ok()) << restarted_port.status() << "\n"
                                   << ReadFile(dir1 + ".restarted.log");
  auto restarted_channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", *restarted_port),
                                               grpc::InsecureChannelCredentials());
  bool serving = false;
  for (int i = 0; i < 300 && !serving; ++i) {
    serving = Serving(restarted_channel);
    if (!serving) absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_TRUE(serving) << ReadFile(dir1 + ".restarted.log");
  auto restarted = v1::Search::NewStub(restarted_channel);
  for (const std::string& q : queries) {
    auto got = Call(restarted.get(), Request(q));
    ASSERT_TRUE(got.ok()) << q << ": " << got.status();
    EXPECT_EQ(Comparable(*got), expected[q]) << q;
  }
  EXPECT_NE(ReadFile(dir1 + ".restarted.log").find("made before"), std::string::npos);
  EXPECT_EQ((*again)->Stop(), "exit 0");
  if (!::testing::Test::HasFailure()) std::filesystem::remove_all(work);
}

// The follower never copies over what is not a replica: an index directory holding a
// database (a local index) is refused, naming what it found, and left as it was.
TEST(ReplicaE2E, AReplicaNeverOverwritesALocalIndex) {
  if (access("/usr/bin/xapian-replicate", X_OK) != 0) {
    GTEST_SKIP() << "xapian-replicate not installed (Debian package xapian-tools)";
  }
  const std::string work = MakeTempDir("issuescope-replica-refuse");
  for (uint32_t shards : {1u, 2u}) {
    const std::string index = absl::StrCat(work, "/index", shards);
    const std::string db = shards == 1 ? index : index + "/" + index::ShardDirName(0);
    std::filesystem::create_directories(db);
    {
      Xapian::WritableDatabase w(db, Xapian::DB_CREATE_OR_OPEN);
      w.add_document(Xapian::Document());
      w.commit();
    }
    search::ReplicaOptions options;
    options.host = "127.0.0.1";
    options.port = 1;
    options.local_dir = index + "/";  // a trailing slash names the same directory
    options.shards = shards;
    search::ReplicaFollower follower(options);
    const absl::Status s = follower.Start();
    EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
    EXPECT_NE(s.message().find("not a replica"), std::string::npos) << s;
    EXPECT_FALSE(follower.Ready());
    EXPECT_EQ(Xapian::Database(db).get_doccount(), 1u) << "the local index was touched";
  }
  std::filesystem::remove_all(work);
}

// A replica pointed at a port where no xapian-replicate-server listens says NOT_SERVING and
// names the problem in its log, instead of serving an empty index.
TEST(ReplicaE2E, AReplicaWithoutItsIndexHostIsNotServing) {
  if (access("/usr/bin/xapian-replicate", X_OK) != 0) {
    GTEST_SKIP() << "xapian-replicate not installed (Debian package xapian-tools)";
  }
  const std::string work = MakeTempDir("issuescope-replica-down");
  const int nobody = testing::FreeLoopbackPort();
  auto replica = Subprocess::Start(
      {Bin("issuescope-search"), "--listen=127.0.0.1:0", "--port-file=" + work + "/port",
       "--index=" + work + "/index", absl::StrCat("--replicate-from=127.0.0.1:", nobody),
       "--replicate-interval=0.1"},
      work + "/search.log");
  ASSERT_TRUE(replica.ok()) << replica.status();
  auto port = WaitForPortFile(work + "/port", absl::Seconds(30), replica->get());
  ASSERT_TRUE(port.ok()) << port.status();
  auto channel =
      grpc::CreateChannel(absl::StrCat("127.0.0.1:", *port), grpc::InsecureChannelCredentials());
  std::string log;
  for (int i = 0; i < 100 && log.find("Couldn't connect") == std::string::npos; ++i) {
    absl::SleepFor(absl::Milliseconds(50));
    log = ReadFile(work + "/search.log");
  }
  EXPECT_NE(log.find("Couldn't connect"), std::string::npos) << log;
  EXPECT_FALSE(Serving(channel));
  auto stub = v1::Search::NewStub(channel);
  auto got = Call(stub.get(), Request("cuda"));
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("still making its first copy"), std::string::npos)
      << got.status();
  EXPECT_EQ((*replica)->Stop(), "exit 0");
  if (!::testing::Test::HasFailure()) std::filesystem::remove_all(work);
}

}  // namespace
}  // namespace issuescope::e2e

// Multi-host tests (issue 18): the whole pipeline as real processes, each on a host of its own
// — network namespaces with their own addresses on a bridge (tests/multihost/netns_lab.h) —
// talking over those addresses, not loopback: a tracker host (the simulator), a control host
// (the coordinator), three worker hosts, an index host (the indexer, and xapian-replicate-server
// when a test asks for search replicas or a second index host), a second index host (copies of
// half the shards, served by a shard server), a search host and two replica hosts. Faults
// are made in the network: a worker cut off from the coordinator but not from the tracker, the
// indexer cut off from one worker, a worker host lost, and delay and loss on links where the
// kernel has netem. After each, the index must hold exactly the tracker's issues, each at its
// newest version, nothing duplicated.
//
// Needs root (network namespaces); elsewhere every test skips, saying why. CTest label
// `multihost` (not in the default run; .ci/run runs them).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <tuple>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/grpc_channel.h"
#include "common/index_layout.h"
#include "deploy/cli/cluster.h"
#include "tests/e2e/e2e_util.h"
#include "tests/multihost/lab_processes.h"
#include "tests/multihost/netns_lab.h"

namespace issuescope::multihost {
namespace {

using e2e::ExpectIndexEqualsCorpus;
using e2e::IssueId;
using e2e::MakeTempDir;
using e2e::ReadFile;
using e2e::SimulatorAdmin;

const std::vector<std::string> kHosts = {"tracker", "control",  "worker0",  "worker1",
                                         "worker2", "index",    "index1",   "search",
                                         "replica0", "replica1"};

// The coordinator's lease time-to-live in these tests.
constexpr int64_t kLeaseTtlMs = 3000;

// HostOfProcess names the lab host a cluster process runs on.
std::string HostOfProcess(const std::string& process) {
  if (process == "simulator") return "tracker";
  if (process == "coordinator") return "control";
  if (absl::StartsWith(process, "worker-")) return "worker" + process.substr(7);
  if (process == "indexer" || process == "replicate") return "index";
  if (absl::StartsWith(process, "search-replica-")) return "replica" + process.substr(15);
  return "search";
}

// Comparable is a search answer without what differs between two correct ones (timing, the
// page token).
std::string Comparable(v1::SearchResponse r) {
  r.clear_took_us();
  r.clear_next_page_token();
  return r.DebugString();
}

v1::SearchRequest Request(const std::string& query) {
  v1::SearchRequest r;
  r.set_query(query);
  r.set_page_size(25);
  r.add_facets("repo");
  r.add_facets("state");
  return r;
}

absl::StatusOr<v1::SearchResponse> Call(v1::Search::Stub* stub, const std::string& query) {
  return e2e::CallSearch(stub, Request(query));
}

class MultiHostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto lab = NetnsLab::Create(kHosts);
    if (!lab.ok()) GTEST_SKIP() << "multi-host tests skipped: " << lab.status().message();
    lab_ = *std::move(lab);
    work_ = MakeTempDir("issuescope-multihost");
  }

  void TearDown() override {
    if (cluster_) cluster_->Stop();
    cluster_.reset();
    if (!HasFailure() && !work_.empty()) std::filesystem::remove_all(work_);
    if (HasFailure()) std::printf("[multihost] logs kept in %s/logs\n", work_.c_str());
  }

  // StartCluster starts the simulator with `simulator_args` and the rest of the cluster, one
  // process per host, and reads the simulator's corpus.
  void StartCluster(std::vector<std::string> simulator_args, int search_replicas = 0,
                    int index_shards = 1) {
    cli::ClusterOptions options;
    options.search_replicas = search_replicas;
    options.index_shards = index_shards;
    options.bin_dir = ISSUESCOPE_BIN_DIR;
    options.work_dir = work_;
    options.workers = 3;
    options.simulator_args = std::move(simulator_args);
    options.lease_ttl_ms = kLeaseTtlMs;
    options.heartbeat_ms = 300;
    options.worker_timeout_ms = 1500;
    options.placement = [this](const std::string& process) {
      const std::string host = HostOfProcess(process);
      return cli::ProcessHost{lab_->netns(host), lab_->address(host)};
    };
    auto started = cli::Cluster::Start(options);
    ASSERT_TRUE(started.ok()) << started.status();
    cluster_ = *std::move(started);
    sim_ = std::make_unique<SimulatorAdmin>(cluster_->simulator_url());
    corpus_ = sim_->Corpus(nullptr, nullptr);
    ASSERT_FALSE(corpus_.empty());
  }

  // FinishAndCheck waits for every repository to be crawled and indexed, then compares the
  // index with the tracker.
  void FinishAndCheck(int64_t min_crawls = 1) {
    absl::Status crawled = cluster_->WaitUntilCrawled(min_crawls, absl::Minutes(6));
    ASSERT_TRUE(crawled.ok()) << crawled;
    absl::Status indexed = cluster_->WaitUntilIndexed(absl::Minutes(4));
    ASSERT_TRUE(indexed.ok()) << indexed;
    ExpectIndexEqualsCorpus(*cluster_, corpus_);
    auto status = cluster_->Status();
    ASSERT_TRUE(status.ok()) << status.status();
    for (const v1::RepositoryStatus& r : status->repositories()) {
      EXPECT_NE(r.phase(), v1::REPO_PHASE_FAILED) << r.repo_slug() << ": " << r.last_error();
    }
  }

  // HeldBy returns the repositories `worker` is crawling now, with their lease epochs; waits up
  // to 2 minutes for at least one.
  std::map<std::string, uint64_t> WaitUntilCrawling(const std::string& worker) {
    std::map<std::string, uint64_t> held;
    const absl::Time deadline = absl::Now() + absl::Minutes(2);
    while (held.empty() && absl::Now() < deadline) {
      auto status = cluster_->Status();
      if (status.ok()) {
        for (const v1::RepositoryStatus& r : status->repositories()) {
          if (r.worker_id() == worker && r.phase() == v1::REPO_PHASE_CRAWLING) {
            held[r.repo_slug()] = r.epoch();
          }
        }
      }
      if (held.empty()) absl::SleepFor(absl::Milliseconds(100));
    }
    return held;
  }

  // WaitUntilMoved waits until every repository in `held` has a lease epoch above the one
  // held there (another worker took it, or finished it).
  bool WaitUntilMoved(const std::map<std::string, uint64_t>& held, absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    while (absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(200));
      auto status = cluster_->Status();
      if (!status.ok()) continue;
      bool moved = true;
      for (const v1::RepositoryStatus& r : status->repositories()) {
        auto it = held.find(r.repo_slug());
        if (it != held.end() && r.epoch() <= it->second) moved = false;
      }
      if (moved) return true;
    }
    return false;
  }

  // ReferenceAnswers sets want[q] to the cluster's search service's answer to each of `queries`
  // (Comparable); false, with a failure, when a call fails or no answer changed.
  bool ReferenceAnswers(const std::vector<std::string>& queries,
                        std::map<std::string, std::string>* want) {
    bool changed = false;
    for (const std::string& q : queries) {
      auto got = Call(&cluster_->search_stub(), q);
      if (!got.ok()) {
        ADD_FAILURE() << q << ": " << got.status();
        return false;
      }
      changed = changed || Comparable(*got) != (*want)[q];
      (*want)[q] = Comparable(*got);
    }
    if (!changed) ADD_FAILURE() << "no answer changed: the comparison would prove nothing";
    return changed;
  }

  std::unique_ptr<NetnsLab> lab_;
  std::string work_;
  std::unique_ptr<cli::Cluster> cluster_;
  std::unique_ptr<SimulatorAdmin> sim_;
  std::map<IssueId, std::string> corpus_;
};

TEST_F(MultiHostTest, PipelineRunsAcrossHosts) {
  StartCluster({"--repos=4", "--issues-per-repo=300", "--comments-per-issue=2", "--seed=31"});
  // Every process listens on its own host's address, none on loopback.
  EXPECT_TRUE(absl::StartsWith(cluster_->coordinator_address(), lab_->address("control") + ":"))
      << cluster_->coordinator_address();
  EXPECT_TRUE(absl::StartsWith(cluster_->search_address(), lab_->address("search") + ":"));
  ASSERT_TRUE(cluster_->AddSimulatorRepositories().ok());
  FinishAndCheck();
  auto status = cluster_->Status();
  ASSERT_TRUE(status.ok()) << status.status();
  std::set<std::string> store_hosts;
  for (const v1::WorkerStatus& w : status->workers()) {
    store_hosts.insert(w.store_address().substr(0, w.store_address().rfind(':')));
  }
  EXPECT_EQ(store_hosts, (std::set<std::string>{lab_->address("worker0"),
                                                lab_->address("worker1"),
                                                lab_->address("worker2")}));
}

// A worker that loses the coordinator but still reaches the tracker keeps crawling into its own
// store; its leases expire and move, and whatever it writes after that is fenced: the index
// ends equal to the tracker.
TEST_F(MultiHostTest, WorkerCutOffFromTheCoordinatorIsFencedAndItsRepositoriesMove) {
  StartCluster({"--repos=4", "--issues-per-repo=2500", "--comments-per-issue=3", "--seed=13"});
  ASSERT_TRUE(cluster_->AddSimulatorRepositories().ok());
  const std::map<std::string, uint64_t> held = WaitUntilCrawling(cluster_->worker_id(0));
  ASSERT_FALSE(held.empty()) << "worker-0 never held a lease";
  ASSERT_TRUE(lab_->Partition("worker0", "control").ok());
  const absl::Time cut = absl::Now();
  std::printf("[multihost] worker0 cut off from the coordinator holding %zu lease(s)\n",
              held.size());
  EXPECT_TRUE(WaitUntilMoved(held, absl::Seconds(60)))
      << "the cut-off worker's leases were not handed out again with a higher epoch";
  // Issue 18: crawled again elsewhere within the lease timeout + 1 s of the partition (the
  // status is polled every 200 ms).
  const absl::Duration moved_after = absl::Now() - cut;
  std::printf("[multihost] its repositories held by other workers %.2f s after the cut (lease "
              "ttl %.1f s)\n",
              absl::ToDoubleSeconds(moved_after), kLeaseTtlMs / 1000.0);
  EXPECT_LE(moved_after, absl::Milliseconds(kLeaseTtlMs) + absl::Seconds(1));
  // The tracker changes while the worker is still cut off: the new owners must index it.
  sim_->Post("/_sim/mutate", R"({"seed":7,"edited_issues":20,"new_comments":20})");
  corpus_ = sim_->Corpus(nullptr, nullptr);
  absl::SleepFor(absl::Seconds(2));
  ASSERT_TRUE(lab_->Heal("worker0", "control").ok());
  // A crawl running when the tracker changed may have listed before the change; one more
  // incremental crawl of every repository, started once all are idle, lists after it.
  absl::Status crawled = cluster_->WaitUntilCrawled(1, absl::Minutes(6));
  ASSERT_TRUE(crawled.ok()) << crawled;
  ASSERT_TRUE(cluster_->TriggerCrawl(v1::CRAWL_MODE_INCREMENTAL).ok());
  FinishAndCheck(2);
  const std::string log = ReadFile(work_ + "/logs/" + cluster_->worker_id(0) + ".log");
  bool noticed = false;
  for (const auto& [repo, epoch] : held) {
    if (absl::StrContains(log, "crawl of " + repo + " fenced") ||
        absl::StrContains(log, "crawl of " + repo + " stopped")) {
      noticed = true;
    }
  }
  EXPECT_TRUE(noticed) << "worker-0's log shows no fenced or stopped crawl of its old leases";
}

// The indexer cut off from one worker's store falls behind on that store only, and catches up
// once the link heals.
TEST_F(MultiHostTest, IndexerCutOffFromOneWorkerCatchesUpAfterTheHeal) {
  StartCluster({"--repos=6", "--issues-per-repo=400", "--comments-per-issue=2", "--seed=17"});
  ASSERT_TRUE(lab_->Partition("index", "worker1").ok());
  ASSERT_TRUE(cluster_->AddSimulatorRepositories().ok());
  absl::Status crawled = cluster_->WaitUntilCrawled(1, absl::Minutes(6));
  ASSERT_TRUE(crawled.ok()) << crawled;
  auto behind = cluster_->IndexProgressNow();
  ASSERT_TRUE(behind.ok()) << behind.status();
  EXPECT_FALSE(behind->caught_up) << "the index read worker1's store through a partition";
  EXPECT_LT(behind->indexed_seq, behind->stored_seq);
  std::printf("[multihost] while cut off: indexed %llu of %llu changes\n",
              static_cast<unsigned long long>(behind->indexed_seq),
              static_cast<unsigned long long>(behind->stored_seq));
  ASSERT_TRUE(lab_->Heal("index", "worker1").ok());
  FinishAndCheck();
}

// A worker host lost for good (its process killed, its store gone with it): its repositories
// are crawled again elsewhere and the index still equals the tracker.
TEST_F(MultiHostTest, LostWorkerHostIsReplaced) {
  StartCluster({"--repos=4", "--issues-per-repo=2000", "--comments-per-issue=2", "--seed=19"});
  ASSERT_TRUE(cluster_->AddSimulatorRepositories().ok());
  const std::map<std::string, uint64_t> held = WaitUntilCrawling(cluster_->worker_id(2));
  ASSERT_FALSE(held.empty()) << "worker-2 never held a lease";
  cluster_->worker(2)->Signal(SIGKILL);
  ASSERT_TRUE(lab_->Isolate("worker2").ok());
  EXPECT_TRUE(WaitUntilMoved(held, absl::Seconds(60)));
  FinishAndCheck();
}

// The control host cut off from every other host for longer than the workers' timeout: the
// coordinator declares them dead and the workers cannot report; once it is back they register
// again, the crawls finish, and nothing is lost or indexed twice.
TEST_F(MultiHostTest, CoordinatorHostCutOffAndBack) {
  StartCluster({"--repos=4", "--issues-per-repo=1500", "--comments-per-issue=2", "--seed=29"});
  ASSERT_TRUE(cluster_->AddSimulatorRepositories().ok());
  ASSERT_FALSE(WaitUntilCrawling(cluster_->worker_id(1)).empty()) << "worker-1 never crawled";
  ASSERT_TRUE(lab_->Isolate("control").ok());
  // Cut off until the coordinator has declared its silent workers dead (past worker_timeout).
  const std::string coordinator_log = work_ + "/logs/coordinator.log";
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (!absl::StrContains(ReadFile(coordinator_log), "dead") && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_TRUE(lab_->Rejoin("control").ok());
  FinishAndCheck();
  const std::string log = ReadFile(work_ + "/logs/coordinator.log");
  EXPECT_TRUE(absl::StrContains(log, "dead")) << "the coordinator never noticed the silence";
}

// Two search replicas, each on a host of its own, copy the index from the index host
// (xapian-replicate) and answer exactly as the search service on the index host. 16 clients
// calling both through one channel lose no query when the index host is cut off under them
// (the replicas serve their copies) and then when one replica's process is killed; the killed
// replica, started again, copies the index anew and answers the same.
TEST_F(MultiHostTest, SearchReplicasSurviveLosingTheIndexHostAndAReplica) {
  StartCluster({"--repos=3", "--issues-per-repo=300", "--comments-per-issue=2", "--seed=37"}, 2);
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(absl::StartsWith(cluster_->replica_addresses()[i],
                                 lab_->address(absl::StrCat("replica", i)) + ":"));
  }
  ASSERT_TRUE(cluster_->AddSimulatorRepositories().ok());
  FinishAndCheck();
  const absl::Time indexed = absl::Now();
  ASSERT_TRUE(cluster_->WaitUntilReplicasReady(absl::Minutes(1)).ok());
  const std::vector<std::string> queries = {"is:open", "is:closed", "error", "memory OR crash",
                                            "-error"};
  std::map<std::string, std::string> want;
  for (const std::string& q : queries) {
    auto got = Call(&cluster_->search_stub(), q);
    ASSERT_TRUE(got.ok()) << q << ": " << got.status();
    want[q] = Comparable(*got);
  }
  std::vector<std::unique_ptr<v1::Search::Stub>> replicas;
  for (const std::string& address : cluster_->replica_addresses()) {
    replicas.push_back(v1::Search::NewStub(
        grpc::CreateChannel(address, grpc::InsecureChannelCredentials())));
  }
  auto all_equal = [&](int i) {
    for (const std::string& q : queries) {
      auto got = Call(replicas[i].get(), q);
      if (!got.ok() || Comparable(*got) != want[q]) return false;
    }
    return true;
  };
  for (int i = 0; i < 2; ++i) {
    while (!all_equal(i) && absl::Now() - indexed < absl::Seconds(30)) {
      absl::SleepFor(absl::Milliseconds(100));
    }
    EXPECT_TRUE(all_equal(i)) << "replica " << i << " does not answer as the index host";
  }
  std::printf("[multihost] both replicas answer as the index host %.1f s after it caught up\n",
              absl::ToDoubleSeconds(absl::Now() - indexed));

  std::string servers = absl::StrCat(cluster_->replica_addresses()[0], ",",
                                     cluster_->replica_addresses()[1]);
  auto channel = CreateSearchChannel(servers, {});
  ASSERT_TRUE(channel.ok()) << channel.status();
  auto shared = v1::Search::NewStub(*channel);
  std::atomic<bool> stop{false};
  std::atomic<int64_t> served{0}, failed{0}, wrong{0}, during_cut{0}, after_kill{0};
  std::atomic<int> phase{0};  // 0 before the faults, 1 index host cut off, 2 a replica killed
  std::mutex error_mu;
  std::string first_error;
  std::vector<std::thread> clients;
  for (int c = 0; c < 16; ++c) {
    clients.emplace_back([&, c] {
      for (size_t i = c; !stop.load(); ++i) {
        const std::string& q = queries[i % queries.size()];
        auto got = Call(shared.get(), q);
        if (!got.ok()) {
          ++failed;
          std::lock_guard<std::mutex> lock(error_mu);
          if (first_error.empty()) first_error = std::string(got.status().message());
          continue;
        }
        ++served;
        if (phase.load() == 1) ++during_cut;
        if (phase.load() == 2) ++after_kill;
        if (Comparable(*got) != want[q]) ++wrong;
      }
    });
  }
  absl::SleepFor(absl::Seconds(1.5));
  ASSERT_TRUE(lab_->Isolate("index").ok());
  phase.store(1);
  absl::SleepFor(absl::Seconds(2));
  cluster_->search_replica(0)->Signal(SIGKILL);
  phase.store(2);
  absl::SleepFor(absl::Seconds(2.5));
  stop.store(true);
  for (std::thread& t : clients) t.join();
  ASSERT_TRUE(lab_->Rejoin("index").ok());
  std::printf("[multihost] 16 clients over 2 replicas: %lld served, %lld with the index host cut "
              "off, %lld after replica 0 was killed, %lld failed, %lld wrong\n",
              static_cast<long long>(served.load()), static_cast<long long>(during_cut.load()),
              static_cast<long long>(after_kill.load()), static_cast<long long>(failed.load()),
              static_cast<long long>(wrong.load()));
  EXPECT_EQ(failed.load(), 0) << first_error;
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(during_cut.load(), 0);
  EXPECT_GT(after_kill.load(), 0);

  // The killed replica starts again with its old copy; the tracker changes and is crawled
  // again; both replicas bring their copies up to date and answer as the index host.
  ASSERT_TRUE(cluster_->RestartSearchReplica(0).ok());
  ASSERT_TRUE(cluster_->WaitUntilReplicasReady(absl::Minutes(1)).ok());
  replicas[0] = v1::Search::NewStub(
      grpc::CreateChannel(cluster_->replica_addresses()[0], grpc::InsecureChannelCredentials()));
  sim_->Post("/_sim/mutate", R"({"seed":41,"edited_issues":30,"new_issues":30})");
  corpus_ = sim_->Corpus(nullptr, nullptr);
  ASSERT_TRUE(cluster_->TriggerCrawl(v1::CRAWL_MODE_INCREMENTAL).ok());
  FinishAndCheck(2);
  const absl::Time caught_up = absl::Now();
  ASSERT_TRUE(ReferenceAnswers(queries, &want)) << "after the mutation";
  for (int i = 0; i < 2; ++i) {
    while (!all_equal(i) && absl::Now() - caught_up < absl::Seconds(30)) {
      absl::SleepFor(absl::Milliseconds(100));
    }
    EXPECT_TRUE(all_equal(i)) << "replica " << i << " did not catch up with the new crawl";
  }
  std::printf("[multihost] replicas caught up with the re-crawl %.1f s after the index did\n",
              absl::ToDoubleSeconds(absl::Now() - caught_up));
}

// The whole pipeline with the index split over two index hosts: the tracker crawled by three
// workers, the indexer on `index` writing 4 shards, `index1` keeping copies of shards 1 and 3
// current with xapian-replicate (from index's xapian-replicate-server), a shard server on each
// index host over its two shards plus an alternate on `index` over the originals of index1's,
// and a second search service on `search` over a stub naming them. It answers exactly as the
// cluster's search service over the local index; after the tracker changes and is crawled again,
// it answers the new index within seconds; when index1 is cut off from every host under 4
// clients (silent: no reset), no query fails or answers differently (the alternate takes over
// once the 1.5 s --shard-timeout has passed).
TEST_F(MultiHostTest, PipelineSearchesAcrossTwoIndexHosts) {
  if (access("/usr/bin/xapian-replicate", X_OK) != 0 ||
      access("/usr/bin/xapian-replicate-server", X_OK) != 0) {
    GTEST_SKIP() << "xapian-replicate not installed (Debian package xapian-tools)";
  }
  constexpr int kShards = 4;
  StartCluster({"--repos=4", "--issues-per-repo=300", "--comments-per-issue=2", "--seed=43"},
               /*search_replicas=*/0, kShards);
  ASSERT_TRUE(cluster_->AddSimulatorRepositories().ok());
  FinishAndCheck();

  const std::string logs = work_ + "/logs";
  std::filesystem::create_directories(logs);
  const std::string index_dir = work_ + "/data/index";
  const std::string index0 = lab_->address("index"), index1 = lab_->address("index1");
  std::vector<std::unique_ptr<Subprocess>> processes;
  struct StopAll {
    std::vector<std::unique_ptr<Subprocess>>* processes;
    ~StopAll() {
      for (auto it = processes->rbegin(); it != processes->rend(); ++it) (*it)->Stop();
    }
  } stop_all{&processes};
  auto start = [&](const std::string& host, const std::vector<std::string>& argv,
                   const std::string& name) -> Subprocess* {
    auto p = Subprocess::Start(InHost(*lab_, host, argv), logs + "/" + name + ".log");
    if (!p.ok()) {
      ADD_FAILURE() << name << ": " << p.status();
      return nullptr;
    }
    processes.push_back(*std::move(p));
    return processes.back().get();
  };

  // index1's shards, copied across the network and kept current.
  Subprocess* replicate_server =
      start("index", {"/usr/bin/xapian-replicate-server", "--interface=" + index0, "--port=7012",
                      index_dir},
            "replicate-server-7012");
  ASSERT_NE(replicate_server, nullptr);
  ASSERT_TRUE(WaitForListener(index0, 7012, replicate_server));
  const std::string copy = work_ + "/index1";
  std::filesystem::create_directories(copy);
  for (int s = 1; s < kShards; s += 2) {
    const std::string shard = index::ShardDirName(s);
    // The first copy whole, then a follower that applies each new commit's changeset.
    ASSERT_TRUE(RunToEnd(InHost(*lab_, "index1",
                                {"/usr/bin/xapian-replicate", "--one-shot", "--host=" + index0,
                                 "--port=7012", "--master=" + shard, copy + "/" + shard}),
                         logs + "/replicate-" + shard + "-first.log", absl::Minutes(2))
                    .ok());
    ASSERT_NE(start("index1",
                    {"/usr/bin/xapian-replicate", "--interval=1", "--host=" + index0,
                     "--port=7012", "--master=" + shard, copy + "/" + shard},
                    "replicate-" + shard),
              nullptr);
  }

  // A shard server on each index host (shard s on server s mod 2), and index1's alternate.
  std::string stub;
  Subprocess* index1_server = nullptr;
  for (const auto& [host, dir, port] :
       std::vector<std::tuple<std::string, std::string, int>>{
           {"index", index_dir, 7020}, {"index1", copy, 7020}, {"index", index_dir, 7021}}) {
    const int first = host == "index" && port == 7020 ? 0 : 1;
    std::vector<std::string> argv = {
        std::string(ISSUESCOPE_BIN_DIR) + "/issuescope-shard-server",
        absl::StrCat("--listen=", lab_->address(host), ":", port)};
    for (int s = first; s < kShards; s += 2) {
      argv.push_back("--db=" + dir + "/" + index::ShardDirName(s));
    }
    Subprocess* server = start(host, argv, absl::StrCat("shard-server-", host, "-", port));
    ASSERT_NE(server, nullptr);
    ASSERT_TRUE(WaitForListener(lab_->address(host), port, server)) << host << ":" << port;
    if (host == "index1") index1_server = server;
    absl::StrAppend(&stub, port == 7021 ? index::kAlternatePrefix : "remote ",
                    lab_->address(host), ":", port, "\n");
  }
  const std::string remote = work_ + "/remote-index";
  std::filesystem::create_directories(remote);
  std::ofstream(index::StubPath(remote)) << stub;
  Subprocess* service =
      start("search",
            {std::string(ISSUESCOPE_BIN_DIR) + "/issuescope-search",
             "--listen=" + lab_->address("search") + ":0",
             "--port-file=" + logs + "/search-remote.port", "--index=" + remote,
             "--shard-timeout=1.5", "--log-level=warn"},
            "search-remote");
  ASSERT_NE(service, nullptr);
  auto port = WaitForPortFile(logs + "/search-remote.port", absl::Seconds(60), service);
  ASSERT_TRUE(port.ok()) << port.status();
  const std::string target = absl::StrCat(lab_->address("search"), ":", *port);
  auto split = v1::Search::NewStub(grpc::CreateChannel(target, grpc::InsecureChannelCredentials()));

  const std::vector<std::string> queries = {"is:open",         "is:closed",    "error",
                                            "memory OR crash", "-error",       "sort:updated",
                                            "crash in:title",  "sort:created-asc is:open"};
  std::map<std::string, std::string> want;
  auto all_equal = [&](std::string* first_difference) {
    for (const std::string& q : queries) {
      auto got = Call(split.get(), q);
      if (!got.ok() || Comparable(*got) != want[q]) {
        *first_difference = got.ok() ? q + ": a different answer"
                                     : q + ": " + got.status().ToString();
        return false;
      }
    }
    return true;
  };
  ASSERT_TRUE(ReferenceAnswers(queries, &want));
  int with_hits = 0;
  for (const std::string& q : queries) {
    auto got = Call(&cluster_->search_stub(), q);
    ASSERT_TRUE(got.ok());
    with_hits += got->hits_size() > 0;
  }
  EXPECT_GE(with_hits, 6) << "most queries match nothing: the comparison would prove little";
  std::string difference;
  EXPECT_TRUE(all_equal(&difference)) << difference;

  // The tracker changes and is crawled again: the split search answers the new index once
  // index1's followers have applied the commits.
  sim_->Post("/_sim/mutate", R"({"seed":47,"edited_issues":40,"new_issues":40})");
  corpus_ = sim_->Corpus(nullptr, nullptr);
  ASSERT_TRUE(cluster_->TriggerCrawl(v1::CRAWL_MODE_INCREMENTAL).ok());
  FinishAndCheck(2);
  const absl::Time indexed = absl::Now();
  ASSERT_TRUE(ReferenceAnswers(queries, &want)) << "after the mutation";
  bool equal = false;
  while (!(equal = all_equal(&difference)) && absl::Now() - indexed < absl::Seconds(30)) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_TRUE(equal) << "the split search did not catch up with the re-crawl: " << difference;
  std::printf("[multihost] two index hosts: the split search answered the re-crawl %.1f s after "
              "the index host did\n",
              absl::ToDoubleSeconds(absl::Now() - indexed));

  // index1 goes silent mid-query (cut off from every host: no reset reaches the search host)
  // under 4 clients; the search service (--shard-timeout=1.5) fails over to the alternate.
  std::atomic<bool> stop{false}, lost{false};
  std::atomic<int64_t> slowest_ms{0};
  AnswerTally tally;
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c) {
    clients.emplace_back([&, c] {
      auto client =
          v1::Search::NewStub(grpc::CreateChannel(target, grpc::InsecureChannelCredentials()));
      for (size_t i = c; !stop.load(); ++i) {
        const std::string& q = queries[i % queries.size()];
        const bool after = lost.load();
        const absl::Time sent = absl::Now();
        auto got = Call(client.get(), q);
        const int64_t ms = absl::ToInt64Milliseconds(absl::Now() - sent);
        for (int64_t seen = slowest_ms.load();
             ms > seen && !slowest_ms.compare_exchange_weak(seen, ms);) {
        }
        tally.Record(q, got.ok() ? absl::StatusOr<std::string>(Comparable(*got)) : got.status(),
                     want[q], after);
      }
    });
  }
  absl::SleepFor(absl::Seconds(1.5));
  ASSERT_TRUE(lab_->Isolate("index1").ok());
  lost = true;
  absl::SleepFor(absl::Seconds(6));
  stop = true;
  for (std::thread& t : clients) t.join();
  ASSERT_TRUE(lab_->Rejoin("index1").ok());
  ASSERT_TRUE(index1_server->Running());
  std::printf("[multihost] index1 silent under 4 clients: %lld answered as before (%lld after the "
              "cut), %lld failed, %lld different; slowest answer %lld ms\n",
              static_cast<long long>(tally.answered()), static_cast<long long>(tally.after_fault()),
              static_cast<long long>(tally.failed()), static_cast<long long>(tally.different()),
              static_cast<long long>(slowest_ms.load()));
  EXPECT_EQ(tally.failed(), 0) << tally.first_problem();
  EXPECT_EQ(tally.different(), 0) << tally.first_problem();
  EXPECT_GT(tally.after_fault(), 0) << "no query was answered after index1 was cut off";
}

// Delay and loss on every worker's link, where the kernel has netem.
TEST_F(MultiHostTest, SlowLossyWorkerLinks) {
  absl::Status netem = lab_->Netem("worker0", "delay 20ms 5ms loss 1%");
  if (absl::IsUnimplemented(netem)) GTEST_SKIP() << netem.message();
  ASSERT_TRUE(netem.ok()) << netem;
  for (const char* host : {"worker1", "worker2"}) {
    ASSERT_TRUE(lab_->Netem(host, "delay 20ms 5ms loss 1%").ok());
  }
  StartCluster({"--repos=3", "--issues-per-repo=300", "--comments-per-issue=2", "--seed=23"});
  ASSERT_TRUE(cluster_->AddSimulatorRepositories().ok());
  FinishAndCheck();
}

}  // namespace
}  // namespace issuescope::multihost

// Chaos tests: the whole cluster as real processes on loopback, with processes killed, paused
// and added at random moments. Each scenario ends with the index holding exactly the simulator's
// issue set, each at its newest version, with no duplicates.
//
// Every run logs its seed; ISSUESCOPE_CHAOS_SEED=<seed> replays the same choices (the moments
// depend on the machine's speed too, so a replay is close, not identical).
// ISSUESCOPE_CHAOS_KILLS sets the number of worker kills (default 6, at least 5).
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "deploy/cli/cluster.h"
#include "tests/e2e/e2e_util.h"

namespace issuescope {
namespace {

using e2e::ExpectIndexEqualsCorpus;
using e2e::IssueId;
using e2e::MakeTempDir;
using e2e::SimulatorAdmin;

// Seed returns the run's seed (from ISSUESCOPE_CHAOS_SEED, else the clock) and logs it.
uint64_t Seed(const char* scenario) {
  uint64_t seed = static_cast<uint64_t>(absl::ToUnixNanos(absl::Now()));
  if (const char* env = std::getenv("ISSUESCOPE_CHAOS_SEED")) seed = std::strtoull(env, nullptr, 10);
  std::printf("[chaos] %s seed=%llu (replay with ISSUESCOPE_CHAOS_SEED=%llu)\n", scenario,
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
  std::fflush(stdout);
  return seed;
}

int EnvInt(const char* name, int fallback) {
  const char* env = std::getenv(name);
  return env != nullptr ? std::atoi(env) : fallback;
}

cli::ClusterOptions Options(const std::string& work, int workers,
                            std::vector<std::string> simulator_args) {
  cli::ClusterOptions options;
  options.bin_dir = ISSUESCOPE_BIN_DIR;
  options.work_dir = work;
  options.workers = workers;
  options.simulator_args = std::move(simulator_args);
  // Short timings keep the scenarios quick: a dead worker's leases move after 3 s.
  options.lease_ttl_ms = 3000;
  options.heartbeat_ms = 300;
  options.worker_timeout_ms = 1500;
  return options;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Owners maps each repository slug to the worker the coordinator's assignment names.
std::map<std::string, std::string> Owners(const v1::GetStatusResponse& status) {
  std::map<std::string, std::string> owners;
  for (const v1::RepositoryStatus& r : status.repositories()) owners[r.repo_slug()] = r.owner();
  return owners;
}

// FinishAndCheck waits for a quiescent, fully indexed cluster and compares the index with the
// simulator's corpus.
void FinishAndCheck(cli::Cluster& cluster, SimulatorAdmin& sim,
                    const std::map<IssueId, std::string>& corpus) {
  absl::Status crawled = cluster.WaitUntilCrawled(1, absl::Minutes(8));
  ASSERT_TRUE(crawled.ok()) << crawled;
  absl::Status indexed = cluster.WaitUntilIndexed(absl::Minutes(5));
  ASSERT_TRUE(indexed.ok()) << indexed;
  ExpectIndexEqualsCorpus(cluster, corpus);
  auto status = cluster.Status();
  ASSERT_TRUE(status.ok()) << status.status();
  for (const v1::RepositoryStatus& r : status->repositories()) {
    EXPECT_NE(r.phase(), v1::REPO_PHASE_FAILED) << r.repo_slug() << ": " << r.last_error();
  }
}

TEST(Chaos, RandomWorkerKillsDuringCrawl) {
  std::mt19937_64 rng(Seed("worker-kills"));
  const int kills = std::max(5, EnvInt("ISSUESCOPE_CHAOS_KILLS", 6));
  const std::string work = MakeTempDir("issuescope-chaos-kill");
  auto started = cli::Cluster::Start(Options(
      work, 3, {"--repos=20", "--issues-per-repo=150", "--comments-per-issue=3", "--seed=11"}));
  ASSERT_TRUE(started.ok()) << started.status();
  cli::Cluster& cluster = **started;
  SimulatorAdmin sim(cluster.simulator_url());
  const std::map<IssueId, std::string> corpus = sim.Corpus(nullptr, nullptr);
  ASSERT_EQ(corpus.size(), 3000u);
  ASSERT_TRUE(cluster.AddSimulatorRepositories().ok());

  std::set<int> dead;
  for (int k = 0; k < kills; ++k) {
    absl::SleepFor(absl::Milliseconds(std::uniform_int_distribution<int>(300, 1500)(rng)));
    // Kill a random live worker; keep at least one alive.
    std::vector<int> alive;
    for (int i = 0; i < cluster.num_workers(); ++i) {
      if (!dead.count(i)) alive.push_back(i);
    }
    if (alive.size() <= 1) {
      const int back = *dead.begin();
      ASSERT_TRUE(cluster.RestartWorker(back).ok());
      dead.erase(back);
      alive.push_back(back);
    }
    const int victim = alive[std::uniform_int_distribution<size_t>(0, alive.size() - 1)(rng)];
    cluster.worker(victim)->Signal(SIGKILL);
    ASSERT_TRUE(cluster.worker(victim)->Wait(absl::Seconds(10)));
    const bool restart = std::bernoulli_distribution(0.5)(rng);
    std::printf("[chaos] kill %d: SIGKILL worker-%d, %s\n", k + 1, victim,
                restart ? "restarted" : "left dead");
    if (restart) {
      ASSERT_TRUE(cluster.RestartWorker(victim).ok());
    } else {
      dead.insert(victim);
    }
    // A crawl that already finished gets a full re-crawl, so later kills still land mid-crawl.
    auto status = cluster.Status();
    if (status.ok() && status->quiescent()) {
      ASSERT_TRUE(cluster.TriggerCrawl(v1::CRAWL_MODE_FULL).ok());
    }
  }
  FinishAndCheck(cluster, sim, corpus);
  if (!HasFailure()) std::filesystem::remove_all(work);
}

TEST(Chaos, CoordinatorKilledTwiceMidCrawl) {
  std::mt19937_64 rng(Seed("coordinator-kills"));
  const std::string work = MakeTempDir("issuescope-chaos-coord");
  auto started = cli::Cluster::Start(Options(
      work, 2, {"--repos=20", "--issues-per-repo=200", "--comments-per-issue=3", "--seed=12"}));
  ASSERT_TRUE(started.ok()) << started.status();
  cli::Cluster& cluster = **started;
  SimulatorAdmin sim(cluster.simulator_url());
  const std::map<IssueId, std::string> corpus = sim.Corpus(nullptr, nullptr);
  ASSERT_TRUE(cluster.AddSimulatorRepositories().ok());
  for (int k = 0; k < 2; ++k) {
    absl::SleepFor(absl::Milliseconds(std::uniform_int_distribution<int>(500, 2000)(rng)));
    cluster.coordinator()->Signal(SIGKILL);
    ASSERT_TRUE(cluster.coordinator()->Wait(absl::Seconds(10)));
    std::printf("[chaos] SIGKILL coordinator (%d of 2), restarting\n", k + 1);
    ASSERT_TRUE(cluster.RestartCoordinator().ok());
  }
  FinishAndCheck(cluster, sim, corpus);
  if (!HasFailure()) std::filesystem::remove_all(work);
}

TEST(Chaos, PausedWorkerIsFencedAfterItsLeaseExpires) {
  Seed("paused-worker");
  const std::string work = MakeTempDir("issuescope-chaos-pause");
  // Large repositories, so a crawl is still running when the worker is paused.
  auto started = cli::Cluster::Start(Options(
      work, 2, {"--repos=4", "--issues-per-repo=2500", "--comments-per-issue=3", "--seed=13"}));
  ASSERT_TRUE(started.ok()) << started.status();
  cli::Cluster& cluster = **started;
  SimulatorAdmin sim(cluster.simulator_url());
  const std::map<IssueId, std::string> corpus = sim.Corpus(nullptr, nullptr);
  ASSERT_TRUE(cluster.AddSimulatorRepositories().ok());

  // Wait until worker-0 is crawling something, then freeze it.
  std::map<std::string, uint64_t> held;  // repo → epoch held by worker-0 when paused
  const absl::Time deadline = absl::Now() + absl::Minutes(2);
  while (held.empty() && absl::Now() < deadline) {
    auto status = cluster.Status();
    ASSERT_TRUE(status.ok()) << status.status();
    for (const v1::RepositoryStatus& r : status->repositories()) {
      if (r.worker_id() == cluster.worker_id(0) && r.phase() == v1::REPO_PHASE_CRAWLING) {
        held[r.repo_slug()] = r.epoch();
      }
    }
    if (held.empty()) absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_FALSE(held.empty()) << "worker-0 never held a lease";
  cluster.worker(0)->Signal(SIGSTOP);
  std::printf("[chaos] SIGSTOP worker-0 holding %zu lease(s)\n", held.size());

  // Its leases expire and move to worker-1 with a higher epoch.
  bool moved = false;
  const absl::Time move_deadline = absl::Now() + absl::Seconds(60);
  while (!moved && absl::Now() < move_deadline) {
    absl::SleepFor(absl::Milliseconds(200));
    auto status = cluster.Status();
    if (!status.ok()) continue;
    moved = true;
    for (const v1::RepositoryStatus& r : status->repositories()) {
      auto it = held.find(r.repo_slug());
      if (it == held.end()) continue;
      const bool taken_over = r.worker_id() == cluster.worker_id(1) && r.epoch() > it->second;
      const bool finished = r.crawls_completed() >= 1 && r.epoch() > it->second;
      if (!taken_over && !finished) moved = false;
    }
  }
  EXPECT_TRUE(moved) << "the paused worker's leases were not re-assigned with a higher epoch";
  // Let the new owner write, then wake the old one up: its late writes must be fenced off.
  absl::SleepFor(absl::Seconds(1));
  cluster.worker(0)->Signal(SIGCONT);
  FinishAndCheck(cluster, sim, corpus);
  // The woken worker noticed it lost the lease: its crawl was fenced or revoked, not completed.
  const std::string log = ReadFile(work + "/logs/" + cluster.worker_id(0) + ".log");
  bool noticed = false;
  for (const auto& [repo, epoch] : held) {
    if (log.find("crawl of " + repo + " fenced") != std::string::npos ||
        log.find("crawl of " + repo + " stopped") != std::string::npos) {
      noticed = true;
    }
  }
  EXPECT_TRUE(noticed) << "worker-0's log shows no fenced or stopped crawl of its old leases";
  if (!HasFailure()) std::filesystem::remove_all(work);
}

TEST(Chaos, IndexerKilledMidCommitIsExactlyOnce) {
  std::mt19937_64 rng(Seed("indexer-kills"));
  const std::string work = MakeTempDir("issuescope-chaos-indexer");
  auto started = cli::Cluster::Start(Options(
      work, 2, {"--repos=10", "--issues-per-repo=400", "--comments-per-issue=3", "--seed=14"}));
  ASSERT_TRUE(started.ok()) << started.status();
  cli::Cluster& cluster = **started;
  SimulatorAdmin sim(cluster.simulator_url());
  const std::map<IssueId, std::string> corpus = sim.Corpus(nullptr, nullptr);
  ASSERT_TRUE(cluster.AddSimulatorRepositories().ok());
  for (int k = 0; k < 4; ++k) {
    absl::SleepFor(absl::Milliseconds(std::uniform_int_distribution<int>(200, 1200)(rng)));
    cluster.indexer()->Signal(SIGKILL);
    ASSERT_TRUE(cluster.indexer()->Wait(absl::Seconds(10)));
    std::printf("[chaos] SIGKILL indexer (%d of 4), restarting\n", k + 1);
    ASSERT_TRUE(cluster.RestartIndexer().ok());
  }
  FinishAndCheck(cluster, sim, corpus);
  // Exactly once: as many documents as issues, and the feed positions equal the stores'.
  auto progress = cluster.IndexProgressNow();
  ASSERT_TRUE(progress.ok()) << progress.status();
  EXPECT_EQ(progress->documents, static_cast<int64_t>(corpus.size()));
  EXPECT_EQ(progress->indexed_seq, progress->stored_seq);
  if (!HasFailure()) std::filesystem::remove_all(work);
}

TEST(Chaos, AddingFourWorkersRebalancesAndMovesOnlyWhatMust) {
  Seed("rebalance");
  const std::string work = MakeTempDir("issuescope-chaos-rebalance");
  auto started = cli::Cluster::Start(Options(
      work, 2, {"--repos=60", "--issues-per-repo=20", "--comments-per-issue=1", "--seed=15"}));
  ASSERT_TRUE(started.ok()) << started.status();
  cli::Cluster& cluster = **started;
  SimulatorAdmin sim(cluster.simulator_url());
  const std::map<IssueId, std::string> corpus = sim.Corpus(nullptr, nullptr);
  ASSERT_TRUE(cluster.AddSimulatorRepositories().ok());
  ASSERT_TRUE(cluster.WaitUntilCrawled(1, absl::Minutes(5)).ok());
  auto before = cluster.Status();
  ASSERT_TRUE(before.ok()) << before.status();
  const std::map<std::string, std::string> old_owners = Owners(*before);

  for (int i = 0; i < 4; ++i) ASSERT_TRUE(cluster.AddWorker().ok());
  // A re-crawl of everything lets the coordinator hand each repository to its new owner.
  ASSERT_TRUE(cluster.TriggerCrawl(v1::CRAWL_MODE_INCREMENTAL).ok());
  ASSERT_TRUE(cluster.WaitUntilCrawled(2, absl::Minutes(5)).ok());
  auto after = cluster.Status();
  ASSERT_TRUE(after.ok()) << after.status();
  const std::map<std::string, std::string> new_owners = Owners(*after);

  // Load as the coordinator weighs it: each repository's estimated issues (at least 1).
  std::map<std::string, double> size;
  for (const v1::RepositoryStatus& r : after->repositories()) {
    size[r.repo_slug()] = static_cast<double>(std::max<int64_t>(1, r.issues_estimated()));
  }
  std::map<std::string, double> load;
  std::map<std::string, int> count;
  double total = 0;
  for (int i = 0; i < cluster.num_workers(); ++i) load[cluster.worker_id(i)] = 0;
  int moved = 0;
  for (const auto& [repo, owner] : new_owners) {
    load[owner] += size[repo];
    count[owner] += 1;
    total += size[repo];
    const std::string& old_owner = old_owners.at(repo);
    if (owner != old_owner) {
      ++moved;
      // Only moves to the new workers: no shuffling between the old ones.
      EXPECT_TRUE(owner != cluster.worker_id(0) && owner != cluster.worker_id(1))
          << repo << " moved from " << old_owner << " to " << owner;
    }
  }
  const double mean = total / cluster.num_workers();
  for (const auto& [worker, l] : load) {
    std::printf("[figures] %s: load %.0f (mean %.1f), %d repositories\n", worker.c_str(), l,
                mean, count[worker]);
    EXPECT_GE(l, 0.8 * mean) << worker;
    EXPECT_LE(l, 1.2 * mean) << worker;
  }
  std::printf("[figures] %d of %zu repositories changed owner\n", moved, new_owners.size());
  ASSERT_TRUE(cluster.WaitUntilIndexed(absl::Minutes(5)).ok());
  ExpectIndexEqualsCorpus(cluster, corpus);
  if (!HasFailure()) std::filesystem::remove_all(work);
}

}  // namespace
}  // namespace issuescope

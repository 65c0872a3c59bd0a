// Cluster benchmark (issue 4, docs/BENCHMARKS.md "Cluster scaling and failover"): real processes
// on loopback against a latency-bound tracker simulator.
//
//  1. Scaling: R repositories × I issues crawled by 1 worker, then (a fresh cluster) by 4
//     workers; prints the time from adding the repositories to the last completed crawl, and
//     the speed-up (target ≥ 3.5×).
//  2. Failover: a worker crawling a large repository is SIGKILLed; prints the time until another
//     worker holds the repository's lease (target: the worker timeout + 1 s; + the home grace,
//     3 × the timeout, if the killed worker's store had already set the repository's cursor).
//  3. Memory: the peak resident set (VmHWM) of every daemon after 3 workers crawled and the
//     indexer indexed ISSUESCOPE_BENCH_MEM_REPOS × ISSUESCOPE_BENCH_MEM_ISSUES issues (4 × 250;
//     docs/OPERATIONS.md sizes the deployment from 4 × 5000) and the search service answered
//     queries (the figures behind deploy/k8s's resource requests).
//
// Sizes come from the environment (defaults are the bounded form `ctest -L bench` runs):
//   ISSUESCOPE_BENCH_REPOS (40), ISSUESCOPE_BENCH_ISSUES (100), ISSUESCOPE_BENCH_LATENCY_MS (50).
// The full run of the issue: REPOS=200 ISSUES=500 LATENCY_MS=200 build/bin/cluster_bench_test.
// Figures are printed as `[figures]` lines; the test fails only when a crawl does not complete
// or the index misses issues, never on a timing.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "deploy/cli/cluster.h"
#include "tests/e2e/e2e_util.h"

namespace issuescope {
namespace {

int EnvInt(const char* name, int fallback) {
  const char* env = std::getenv(name);
  return env != nullptr && *env != '\0' ? std::atoi(env) : fallback;
}

struct Sizes {
  int repos = EnvInt("ISSUESCOPE_BENCH_REPOS", 40);
  int issues = EnvInt("ISSUESCOPE_BENCH_ISSUES", 100);
  int latency_ms = EnvInt("ISSUESCOPE_BENCH_LATENCY_MS", 50);
};

cli::ClusterOptions Options(const std::string& work, int workers, const Sizes& sizes,
                            int repos, int issues) {
  cli::ClusterOptions options;
  options.bin_dir = ISSUESCOPE_BIN_DIR;
  options.work_dir = work;
  options.workers = workers;
  options.worker_capacity = 2;
  options.lease_ttl_ms = 3000;
  options.heartbeat_ms = 300;
  options.worker_timeout_ms = 1500;
  options.log_level = "warn";
  options.simulator_args = {absl::StrCat("--repos=", repos),
                            absl::StrCat("--issues-per-repo=", issues), "--comments-per-issue=3",
                            "--seed=21", absl::StrCat("--latency-ms=", sizes.latency_ms),
                            "--threads=32"};
  return options;
}

// CrawlSeconds starts a cluster of `workers`, adds every simulated repository, and returns the
// seconds until every repository completed its first crawl (and checks the index).
double CrawlSeconds(int workers, const Sizes& sizes, int64_t* requests) {
  const std::string work = e2e::MakeTempDir(absl::StrCat("issuescope-bench-", workers, "w"));
  auto started = cli::Cluster::Start(Options(work, workers, sizes, sizes.repos, sizes.issues));
  EXPECT_TRUE(started.ok()) << started.status();
  if (!started.ok()) return 0;
  cli::Cluster& cluster = **started;
  e2e::SimulatorAdmin sim(cluster.simulator_url());
  const auto corpus = sim.Corpus(nullptr, nullptr);
  const absl::Time t0 = absl::Now();
  EXPECT_TRUE(cluster.AddSimulatorRepositories().ok());
  absl::Status crawled = cluster.WaitUntilCrawled(1, absl::Minutes(60));
  const double seconds = absl::ToDoubleSeconds(absl::Now() - t0);
  EXPECT_TRUE(crawled.ok()) << crawled;
  *requests = sim.Requests();
  EXPECT_TRUE(cluster.WaitUntilIndexed(absl::Minutes(10)).ok());
  e2e::ExpectIndexEqualsCorpus(cluster, corpus);
  cluster.Stop();
  std::filesystem::remove_all(work);
  return seconds;
}

TEST(ClusterBench, FourWorkersAgainstOne) {
  const Sizes sizes;
  int64_t requests_1 = 0, requests_4 = 0;
  const double one = CrawlSeconds(1, sizes, &requests_1);
  const double four = CrawlSeconds(4, sizes, &requests_4);
  std::printf("[figures] %d repos x %d issues, simulator latency %d ms, capacity 2 per worker\n",
              sizes.repos, sizes.issues, sizes.latency_ms);
  std::printf("[figures] 1 worker: %.1f s (%lld requests); 4 workers: %.1f s (%lld requests); "
              "speed-up %.2fx\n",
              one, static_cast<long long>(requests_1), four, static_cast<long long>(requests_4),
              four > 0 ? one / four : 0.0);
}

TEST(ClusterBench, TimeFromWorkerDeathToReassignment) {
  const Sizes sizes;
  const std::string work = e2e::MakeTempDir("issuescope-bench-failover");
  // Two large repositories, so the crawl is still running when its worker dies.
  auto started = cli::Cluster::Start(Options(work, 2, sizes, 2, 3000));
  ASSERT_TRUE(started.ok()) << started.status();
  cli::Cluster& cluster = **started;
  ASSERT_TRUE(cluster.AddSimulatorRepositories().ok());
  std::string repo, victim;
  uint64_t epoch = 0;
  const absl::Time deadline = absl::Now() + absl::Minutes(2);
  while (repo.empty() && absl::Now() < deadline) {
    auto status = cluster.Status();
    ASSERT_TRUE(status.ok()) << status.status();
    for (const v1::RepositoryStatus& r : status->repositories()) {
      if (r.phase() == v1::REPO_PHASE_CRAWLING && !r.worker_id().empty()) {
        repo = r.repo_slug();
        victim = r.worker_id();
        epoch = r.epoch();
        break;
      }
    }
    if (repo.empty()) absl::SleepFor(absl::Milliseconds(50));
  }
  ASSERT_FALSE(repo.empty());
  const int index = victim == cluster.worker_id(0) ? 0 : 1;
  cluster.worker(index)->Signal(SIGKILL);
  const absl::Time killed = absl::Now();
  double seconds = -1;
  while (absl::Now() < killed + absl::Minutes(1)) {
    auto status = cluster.Status();
    if (status.ok()) {
      for (const v1::RepositoryStatus& r : status->repositories()) {
        if (r.repo_slug() == repo && r.epoch() > epoch && r.worker_id() != victim) {
          seconds = absl::ToDoubleSeconds(absl::Now() - killed);
        }
      }
    }
    if (seconds >= 0) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_GE(seconds, 0) << "the dead worker's repository was never re-assigned";
  std::printf("[figures] worker death to re-assigned lease: %.2f s (worker timeout 1.5 s, lease "
              "ttl 3 s; target: timeout + 1 s)\n",
              seconds);
  cluster.Stop();
  std::filesystem::remove_all(work);
}

// PeakRssMiB is VmHWM of process `pid` in MiB (-1 when it cannot be read).
double PeakRssMiB(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    int64_t kib = 0;
    if (absl::StartsWith(line, "VmHWM:") &&
        absl::SimpleAtoi(absl::StripAsciiWhitespace(
                             absl::StripSuffix(absl::StripPrefix(line, "VmHWM:"), "kB")),
                         &kib)) {
      return static_cast<double>(kib) / 1024.0;
    }
  }
  return -1;
}

// DirMiB is the size of the files under `dir`, in MiB.
double DirMiB(const std::string& dir) {
  std::error_code ec;
  uintmax_t bytes = 0;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec)) bytes += it->file_size(ec);
  }
  return static_cast<double>(bytes) / (1024.0 * 1024.0);
}

TEST(ClusterBench, PeakMemoryOfEachDaemon) {
  Sizes sizes;
  sizes.latency_ms = 0;
  const int repos = EnvInt("ISSUESCOPE_BENCH_MEM_REPOS", 4);
  const int issues = EnvInt("ISSUESCOPE_BENCH_MEM_ISSUES", 250);
  const std::string work = e2e::MakeTempDir("issuescope-bench-memory");
  auto started = cli::Cluster::Start(Options(work, 3, sizes, repos, issues));
  ASSERT_TRUE(started.ok()) << started.status();
  cli::Cluster& cluster = **started;
  e2e::SimulatorAdmin sim(cluster.simulator_url());
  const auto corpus = sim.Corpus(nullptr, nullptr);
  ASSERT_TRUE(cluster.AddSimulatorRepositories().ok());
  ASSERT_TRUE(cluster.WaitUntilCrawled(1, absl::Minutes(60)).ok());
  ASSERT_TRUE(cluster.WaitUntilIndexed(absl::Minutes(60)).ok());
  e2e::ExpectIndexEqualsCorpus(cluster, corpus);  // searches every issue through the service
  std::printf("[figures] peak RSS (VmHWM) after %d repos x %d issues (3 workers):", repos, issues);
  std::printf(" coordinator %.0f MiB", PeakRssMiB(cluster.coordinator()->pid()));
  for (int i = 0; i < cluster.num_workers(); ++i) {
    std::printf(", worker-%d %.0f MiB", i, PeakRssMiB(cluster.worker(i)->pid()));
  }
  std::printf(", indexer %.0f MiB, search %.0f MiB\n", PeakRssMiB(cluster.indexer()->pid()),
              PeakRssMiB(cluster.search()->pid()));
  EXPECT_GT(PeakRssMiB(cluster.coordinator()->pid()), 0) << "VmHWM unreadable";
  cluster.Stop();
  std::printf("[figures] disk: coordinator %.1f MiB", DirMiB(work + "/data/coordinator"));
  for (int i = 0; i < cluster.num_workers(); ++i) {
    std::printf(", %s %.1f MiB", cluster.worker_id(i).c_str(),
                DirMiB(work + "/data/" + cluster.worker_id(i)));
  }
  std::printf(", index %.1f MiB\n", DirMiB(work + "/data/index"));
  std::filesystem::remove_all(work);
}

}  // namespace
}  // namespace issuescope

// Weighted, size-balanced, sticky assignment: the pure AssignRepositories function and the
// core's behaviour when 4 workers join a running 2-worker cluster.
#include <map>
#include <random>
#include <set>
#include <string>

#include "coordinator/assignment.h"
#include "gtest/gtest.h"
#include "tests/coordinator/core_fixture.h"

namespace issuescope::coordinator::testing {
namespace {

// MixedSizes returns `n` repositories with sizes from a few issues to tens of thousands
// (log-uniform, seeded).
std::vector<AssignableRepo> MixedSizes(int n) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> exponent(1.0, 4.5);
  std::vector<AssignableRepo> repos;
  for (int i = 0; i < n; ++i) {
    repos.push_back({"github:org/repo" + std::to_string(i),
                     static_cast<int64_t>(std::pow(10.0, exponent(rng))), ""});
  }
  return repos;
}

std::map<std::string, double> Loads(const std::vector<AssignableRepo>& repos,
                                    const std::map<std::string, std::string>& owners) {
  std::map<std::string, double> load;
  for (const auto& repo : repos) load[owners.at(repo.slug)] += static_cast<double>(repo.size);
  return load;
}

TEST(WeightedRendezvousTest, SharesFollowCapacity) {
  std::map<std::string, int> won;
  for (int i = 0; i < 20000; ++i) {
    const std::string slug = "github:o/r" + std::to_string(i);
    const double a = WeightedRendezvousScore("small", slug, 1);
    const double b = WeightedRendezvousScore("large", slug, 3);
    ++won[a > b ? "small" : "large"];
  }
  // Weight 3 against 1: three quarters.
  EXPECT_NEAR(won["large"] / 20000.0, 0.75, 0.02);
}

TEST(AssignRepositoriesTest, DeterministicAndOrderIndependent) {
  std::vector<AssignableRepo> repos = MixedSizes(50);
  std::vector<AssignableWorker> workers = {{"w1", 1}, {"w2", 2}, {"w3", 1}};
  auto first = AssignRepositories(workers, repos);
  std::reverse(repos.begin(), repos.end());
  std::reverse(workers.begin(), workers.end());
  EXPECT_EQ(AssignRepositories(workers, repos), first);
  EXPECT_TRUE(AssignRepositories({}, repos).empty());
}

TEST(AssignRepositoriesTest, WeightedLoadsWithinBound) {
  std::vector<AssignableRepo> repos = MixedSizes(300);
  std::vector<AssignableWorker> workers = {{"w1", 1}, {"w2", 2}, {"w3", 1}, {"w4", 4}};
  auto owners = AssignRepositories(workers, repos);
  double total = 0;
  for (const auto& r : repos) total += static_cast<double>(r.size);
  auto load = Loads(repos, owners);
  for (const auto& w : workers) {
    SCOPED_TRACE(w.id);
    const double share = total * w.weight / 8;
    EXPECT_LE(load[w.id], share * 1.2);
    EXPECT_GE(load[w.id], share * 0.8);
  }
}

TEST(AssignRepositoriesTest, UnevenSplitsStayPutInsteadOfFlapping) {
  // Three equal repositories on two equal workers cannot be split evenly; whichever worker holds
  // two keeps them, round after round (a move would cost a full crawl and fix nothing).
  std::vector<AssignableWorker> workers = {{"worker-0", 1}, {"worker-1", 1}};
  for (const std::string& doubled : {"worker-0", "worker-1"}) {
    const std::string single = doubled == "worker-0" ? "worker-1" : "worker-0";
    std::vector<AssignableRepo> repos = {
        {"github:o/a", 600, doubled}, {"github:o/b", 600, doubled}, {"github:o/c", 600, single}};
    auto owners = AssignRepositories(workers, repos);
    EXPECT_EQ(owners["github:o/a"], doubled);
    EXPECT_EQ(owners["github:o/b"], doubled);
    EXPECT_EQ(owners["github:o/c"], single);
  }
}

TEST(AssignRepositoriesTest, UnknownSizesWeighAsTheAverageKnownSize) {
  // b's estimate has not arrived: it must not count as empty, or a and c would both be put on
  // one worker's neighbour and moved back once b's estimate arrives.
  std::vector<AssignableWorker> workers = {{"worker-0", 1}, {"worker-1", 1}};
  std::vector<AssignableRepo> repos = {
      {"github:o/a", 600, "worker-0"}, {"github:o/b", 0, "worker-1"}, {"github:o/c", 600, "worker-0"}};
  auto owners = AssignRepositories(workers, repos);
  EXPECT_EQ(owners["github:o/a"], "worker-0");
  EXPECT_EQ(owners["github:o/b"], "worker-1");
  EXPECT_EQ(owners["github:o/c"], "worker-0");
}

TEST(AssignRepositoriesTest, JoiningWorkersTakeOnlyWhatMustMove) {
  std::vector<AssignableRepo> repos = MixedSizes(120);
  std::vector<AssignableWorker> two = {{"worker-0", 1}, {"worker-1", 1}};
  auto before = AssignRepositories(two, repos);
  for (auto& repo : repos) repo.owner = before[repo.slug];
  // Sticky: the same inputs with the current owners change nothing.
  EXPECT_EQ(AssignRepositories(two, repos), before);

  std::vector<AssignableWorker> six = two;
  for (int i = 2; i < 6; ++i) six.push_back({"worker-" + std::to_string(i), 1});
  auto after = AssignRepositories(six, repos);
  double total = 0;
  double moved = 0;
  for (const auto& repo : repos) {
    total += static_cast<double>(repo.size);
    if (after[repo.slug] == before[repo.slug]) continue;
    moved += static_cast<double>(repo.size);
    // Nothing moves between the two old workers: every move goes to a new one.
    EXPECT_TRUE(after[repo.slug] != "worker-0" && after[repo.slug] != "worker-1") << repo.slug;
  }
  // The new workers' fair share is 4/6 of the load; moving much more would be waste.
  EXPECT_LE(moved, total * 4 / 6 * 1.1);
  const double mean = total / 6;
  for (const auto& [worker, load] : Loads(repos, after)) {
    SCOPED_TRACE(worker);
    EXPECT_GE(load, mean * 0.8);
    EXPECT_LE(load, mean * 1.2);
  }
}

class RebalanceTest : public CoreTest {
 protected:
  // CrawlAll lets every worker acquire and finish what it owns, reporting `sizes` as estimates.
  std::map<std::string, std::string> CrawlAll(const std::vector<std::string>& workers,
                                              const std::map<std::string, int64_t>& sizes) {
    std::map<std::string, std::string> holders;
    for (const auto& worker : workers) {
      for (const auto& lease : Acquire(worker, 1000)) {
        holders[lease.repo_slug()] = worker;
        auto done = Report(worker, lease);
        done.set_issues_estimated(sizes.at(lease.repo_slug()));
        done.set_done(true);
        EXPECT_TRUE(core_->ReportProgress(done).ok());
      }
    }
    return holders;
  }
  void TriggerAll() { ASSERT_TRUE(core_->TriggerCrawl(v1::TriggerCrawlRequest()).ok()); }
};

TEST_F(RebalanceTest, FourWorkersJoinARunningTwoWorkerCluster) {
  std::map<std::string, int64_t> sizes;
  std::vector<v1::RepositorySpec> specs;
  for (const auto& repo : MixedSizes(120)) {
    const std::string name = repo.slug.substr(repo.slug.find('/') + 1);
    specs.push_back(Spec("org", name));
    sizes["github:org/" + name] = repo.size;
  }
  Add(specs);
  const std::vector<std::string> old_workers = {"worker-0", "worker-1"};
  for (const auto& w : old_workers) Register(w);
  CrawlAll(old_workers, sizes);  // learns the sizes
  TriggerAll();
  auto settled = CrawlAll(old_workers, sizes);  // balanced by size now
  ASSERT_EQ(settled.size(), 120u);
  TriggerAll();
  EXPECT_EQ(CrawlAll(old_workers, sizes), settled) << "re-crawls must stay on their workers";

  std::vector<std::string> all = old_workers;
  for (int i = 2; i < 6; ++i) {
    all.push_back("worker-" + std::to_string(i));
    Register(all.back());
  }
  TriggerAll();
  auto after = CrawlAll(all, sizes);
  ASSERT_EQ(after.size(), 120u);
  std::map<std::string, double> load;
  double total = 0;
  for (const auto& [slug, worker] : after) {
    load[worker] += static_cast<double>(sizes[slug]);
    total += static_cast<double>(sizes[slug]);
    if (worker != settled[slug]) {
      EXPECT_NE(worker, "worker-0") << slug << " moved between old workers";
      EXPECT_NE(worker, "worker-1") << slug << " moved between old workers";
    }
  }
  for (const auto& worker : all) {
    SCOPED_TRACE(worker);
    EXPECT_GE(load[worker], total / 6 * 0.8);
    EXPECT_LE(load[worker], total / 6 * 1.2);
  }
  // Status agrees: owners and per-worker load.
  v1::GetStatusResponse status = Status();
  for (const auto& w : status.workers()) {
    EXPECT_EQ(static_cast<double>(w.load()), load[w.worker_id()]) << w.worker_id();
  }
  for (const auto& r : status.repositories()) EXPECT_EQ(r.owner(), after[r.repo_slug()]);
}

TEST_F(RebalanceTest, CapacityWeighsTheShare) {
  std::vector<v1::RepositorySpec> specs;
  for (int i = 0; i < 200; ++i) specs.push_back(Spec("o", "r" + std::to_string(i)));
  Add(specs);
  Register("big", 6);
  Register("small", 2);
  std::map<std::string, int> owned;
  const v1::GetStatusResponse status = Status();
  for (const auto& w : status.workers()) owned[w.worker_id()] = w.repositories_owned();
  EXPECT_NEAR(owned["big"], 150, 15);
  EXPECT_NEAR(owned["small"], 50, 15);
}

}  // namespace
}  // namespace issuescope::coordinator::testing

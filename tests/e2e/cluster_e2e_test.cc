// End-to-end: the whole pipeline as real processes on loopback — tracker simulator, coordinator,
// two crawler workers, indexer, search service — checked against the simulator's ground truth.
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/subprocess.h"
#include "common/time_util.h"
#include "deploy/cli/cluster.h"
#include "tests/e2e/e2e_util.h"
#include "httplib.h"
#include "nlohmann/json.hpp"

namespace issuescope {
namespace {

using e2e::Counters;
using e2e::ExpectIndexEqualsCorpus;
using e2e::IssueId;
using e2e::MakeTempDir;
using e2e::SearchAll;
using e2e::SimulatorAdmin;

constexpr char kPhrase[] = "quokka lattice overflow";
constexpr int kPlanted = 7;

TEST(ClusterEndToEnd, CrawlIndexSearchAndIncrementalRecrawl) {
  const std::string work = MakeTempDir("issuescope-e2e");
  cli::ClusterOptions options;
  options.bin_dir = ISSUESCOPE_BIN_DIR;
  options.work_dir = work;
  options.workers = 2;
  options.simulator_args = {"--repos=3", "--issues-per-repo=600", "--comments-per-issue=3",
                            "--seed=2026", std::string("--plant-phrase=") + kPhrase,
                            absl::StrCat("--plant-count=", kPlanted)};
  auto started = cli::Cluster::Start(options);
  ASSERT_TRUE(started.ok()) << started.status();
  cli::Cluster& cluster = **started;
  SimulatorAdmin sim(cluster.simulator_url());

  std::map<std::string, std::pair<int64_t, int64_t>> counts;
  std::set<IssueId> planted;
  std::map<IssueId, std::string> corpus = sim.Corpus(&counts, &planted);
  int64_t comments = 0;
  for (const auto& [repo, c] : counts) comments += c.second;
  ASSERT_EQ(counts.size(), 3u);
  ASSERT_GE(corpus.size(), 1500u);
  ASSERT_GE(comments, 4000);
  ASSERT_EQ(planted.size(), static_cast<size_t>(kPlanted));

  // --- Full crawl by the cluster.
  const absl::Time t0 = absl::Now();
  auto added = cluster.AddSimulatorRepositories();
  ASSERT_TRUE(added.ok()) << added.status();
  ASSERT_TRUE(cluster.WaitUntilCrawled(1, absl::Minutes(10)).ok());
  ASSERT_TRUE(cluster.WaitUntilIndexed(absl::Minutes(5)).ok());
  const double full_seconds = absl::ToDoubleSeconds(absl::Now() - t0);

  // Invariant 4: at most ceil(issues/100) + ceil(comments/100) + a small constant per repo.
  const int64_t full_requests = sim.Requests();
  int64_t minimum = 0;
  for (const auto& [repo, c] : counts) minimum += (c.first + 99) / 100 + (c.second + 99) / 100;
  // The constant: the repository lookup, and one confirmation page per listing that learns the
  // ETag of the listing at the new cursor (so the next unchanged crawl costs only 304s).
  EXPECT_LE(full_requests, minimum + 3 * static_cast<int64_t>(counts.size()));
  std::printf("[figures] full crawl: %zu issues, %lld comments, %zu repos, %lld requests "
              "(minimum %lld), %.1fs until indexed\n",
              corpus.size(), static_cast<long long>(comments), counts.size(),
              static_cast<long long>(full_requests), static_cast<long long>(minimum),
              full_seconds);

  // Invariant 1: the index holds exactly the tracker's issues, each at its newest version.
  ExpectIndexEqualsCorpus(cluster, corpus);

  // A phrase planted in N known issues returns exactly those N.
  {
    int64_t total = 0;
    auto hits = SearchAll(cluster, absl::StrCat("\"", kPhrase, "\""), &total);
    std::set<IssueId> found;
    for (const auto& [id, hit] : hits) found.insert(id);
    EXPECT_EQ(found, planted);
    EXPECT_EQ(total, kPlanted);
    // The words alone match more issues than the phrase.
    auto words = SearchAll(cluster, kPhrase, &total);
    EXPECT_GE(words.size(), found.size());
  }
  // Qualifier-only queries list every matching issue.
  {
    const std::string repo = counts.begin()->first;
    int64_t total = 0;
    auto hits = SearchAll(cluster, "repo:" + repo, &total);
    EXPECT_EQ(static_cast<int64_t>(hits.size()), counts.begin()->second.first);
  }

  // --- The tracker changes; an incremental re-crawl picks up exactly the changes.
  nlohmann::json changed = sim.Post(
      "/_sim/mutate",
      R"({"seed":5,"new_issues":9,"edited_issues":15,"new_comments":30,"closed_issues":4})");
  std::map<std::string, int64_t> changed_per_repo;
  for (const auto& c : changed.at("changed_issues")) {
    changed_per_repo[c.at("repo").get<std::string>()] += 1;
  }
  ASSERT_FALSE(changed_per_repo.empty());
  corpus = sim.Corpus(nullptr, nullptr);
  const int64_t before = sim.Requests();
  ASSERT_TRUE(cluster.TriggerCrawl(v1::CRAWL_MODE_INCREMENTAL).ok());
  ASSERT_TRUE(cluster.WaitUntilCrawled(2, absl::Minutes(5)).ok());
  ASSERT_TRUE(cluster.WaitUntilIndexed(absl::Minutes(5)).ok());
  const int64_t recrawl_requests = sim.Requests() - before;
  for (const auto& [repo, c] : Counters(cluster)) {
    EXPECT_EQ(c.issues_stored(), changed_per_repo[repo]) << repo;
  }
  ExpectIndexEqualsCorpus(cluster, corpus);
  // Per repository: the repository lookup, one page of issues and one of comments, and one
  // confirmation page per listing whose cursor moved.
  EXPECT_LE(recrawl_requests, 5 * static_cast<int64_t>(counts.size()));
  std::printf("[figures] incremental re-crawl after %zu changed issues: %lld requests\n",
              changed.at("changed_issues").size(), static_cast<long long>(recrawl_requests));

  // --- Nothing changed: a re-crawl costs only conditional requests answered 304.
  const int64_t before_unchanged = sim.Requests();
  const int64_t not_modified_before = sim.NotModified();
  ASSERT_TRUE(cluster.TriggerCrawl(v1::CRAWL_MODE_INCREMENTAL).ok());
  ASSERT_TRUE(cluster.WaitUntilCrawled(3, absl::Minutes(5)).ok());
  const int64_t unchanged_requests = sim.Requests() - before_unchanged;
  const int64_t not_modified = sim.NotModified() - not_modified_before;
  EXPECT_EQ(not_modified, 3 * static_cast<int64_t>(counts.size()));
  EXPECT_EQ(unchanged_requests, 3 * static_cast<int64_t>(counts.size()));
  for (const auto& [repo, c] : Counters(cluster)) {
    EXPECT_EQ(c.issues_stored(), 0) << repo;
    EXPECT_EQ(c.comments_stored(), 0) << repo;
  }
  std::printf("[figures] re-crawl of unchanged trackers: %lld requests, %lld answered 304\n",
              static_cast<long long>(unchanged_requests), static_cast<long long>(not_modified));

  for (const std::string& line : cluster.Stop()) {
    EXPECT_TRUE(line.find("exit 0") != std::string::npos) << "unclean stop: " << line;
  }
  if (!HasFailure()) std::filesystem::remove_all(work);
}

}  // namespace
}  // namespace issuescope

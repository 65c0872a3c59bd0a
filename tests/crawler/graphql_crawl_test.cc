// The GitHub GraphQL crawl path (CrawlerOptions::github_graphql, crawler/graphql_lister.h)
// against the tracker simulator over real HTTP on loopback: a GraphQL crawl stores exactly what
// the REST crawl stores (issues, comments, long threads), costs a fraction of REST's budget
// units, re-crawls an unchanged repository for 0 budget, follows changes, adapts its queries
// to timeouts, hands over to REST when its budget runs out or /graphql is not served (then with
// REST's request counts exactly), and never spends beyond either budget.
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "crawler/curl_transport.h"
#include "crawler/repo_crawler.h"
#include "crawler/request_loop.h"
#include "gtest/gtest.h"
#include "tests/crawler/mem_store.h"
#include "tests/simulator/tracker_simulator.h"

namespace issuescope::crawler {
namespace {

constexpr char kToken[] = "graphql-test-token";

// StoreView is what a store holds for the repository: every issue and its comments, without
// the crawl's own fetch times.
std::map<int64_t, std::string> StoreView(const IssueStore& store) {
  std::map<int64_t, std::string> view;
  std::vector<int64_t> numbers;
  EXPECT_TRUE(store
                  .ScanRepository("github:pytorch/pytorch",
                                  [&](const v1::Issue& issue) {
                                    numbers.push_back(issue.number());
                                    return true;
                                  })
                  .ok());
  for (int64_t n : numbers) {
    auto got = store.GetIssue("github:pytorch/pytorch", n);
    EXPECT_TRUE(got.ok()) << got.status();
    if (!got.ok()) continue;
    v1::IssueWithComments copy = *got;
    copy.mutable_issue()->clear_fetched_at();
    for (v1::Comment& c : *copy.mutable_comments()) c.clear_fetched_at();
    view[n] = copy.SerializeAsString();
  }
  return view;
}

class GraphqlCrawlTest : public ::testing::Test {
 protected:
  void StartSimulator(sim::FaultConfig faults = sim::FaultConfig(), int issues = 300,
                      double long_threads = 0.02, int repos = 1) {
    sim::SimulatorOptions o;
    o.repos = repos;
    o.issues_per_repo = issues;
    o.comments_per_issue = 4;
    o.long_thread_fraction = long_threads;
    o.long_thread_max = 260;
    o.threads = 4;
    o.faults = faults;
    auto sim = sim::TrackerSimulator::Start(o);
    ASSERT_TRUE(sim.ok()) << sim.status();
    sim_ = *std::move(sim);
  }

  v1::Lease Lease(v1::CrawlMode mode, const v1::Cursor& cursor = v1::Cursor()) {
    v1::Lease lease;
    lease.set_repo_slug("github:pytorch/pytorch");
    lease.mutable_repo()->set_tracker(v1::TRACKER_GITHUB);
    lease.mutable_repo()->set_owner("pytorch");
    lease.mutable_repo()->set_name("pytorch");
    lease.mutable_repo()->set_api_url(sim_->base_url());
    lease.set_epoch(1);
    lease.set_mode(mode);
    *lease.mutable_cursor() = cursor;
    return lease;
  }

  // Crawl runs one lease into `store` and returns its final progress.
  CrawlProgress Crawl(IssueStore* store, bool graphql, v1::CrawlMode mode,
                      const v1::Cursor& cursor = v1::Cursor()) {
    CrawlerOptions options;
    options.token = kToken;
    options.github_graphql = graphql;
    options.initial_backoff = absl::Milliseconds(1);
    options.max_backoff = absl::Milliseconds(10);
    options.presence_sweep_interval = sweep_interval_;
    options.presence_sweep_budget = sweep_share_;
    RepoCrawler crawler(&transport_, store, Clock::Real(), options);
    auto result = crawler.Crawl(Lease(mode, cursor), [](const CrawlProgress&) {
      return absl::OkStatus();
    });
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : CrawlProgress();
  }

  // RestView crawls the simulator's current corpus over REST into a fresh store.
  std::map<int64_t, std::string> RestView() {
    std::unique_ptr<rocksdb::Env> env;
    std::unique_ptr<IssueStore> store;
    OpenMemStore(&env, &store);
    Crawl(store.get(), /*graphql=*/false, v1::CRAWL_MODE_FULL);
    return StoreView(*store);
  }

  // GraphqlCrawlStoresWhatRestStores crawls the simulator's corpus over REST, then over
  // GraphQL into a fresh store, expects the two stores equal, and returns the simulator's
  // counts of the GraphQL crawl alone.
  sim::SimStats GraphqlCrawlStoresWhatRestStores() {
    const std::map<int64_t, std::string> rest = RestView();
    sim_->ResetStats();
    std::unique_ptr<rocksdb::Env> env;
    std::unique_ptr<IssueStore> store;
    OpenMemStore(&env, &store);
    Crawl(store.get(), true, v1::CRAWL_MODE_FULL);
    const sim::SimStats stats = sim_->Stats();
    EXPECT_EQ(StoreView(*store), rest);
    return stats;
  }

  CurlTransport transport_;
  std::unique_ptr<sim::TrackerSimulator> sim_;
  absl::Duration sweep_interval_ = absl::Hours(24);
  double sweep_share_ = 0.25;
};

TEST_F(GraphqlCrawlTest, StoresExactlyWhatRestStoresForAFractionOfTheBudget) {
  StartSimulator();
  int64_t long_threads = 0;
  for (const sim::CorpusEntry& e : sim_->Corpus()) long_threads += e.comments > 100 ? 1 : 0;
  ASSERT_GT(long_threads, 0) << "the corpus should have threads longer than one nested page";

  const std::map<int64_t, std::string> rest = RestView();
  const sim::SimStats rest_stats = sim_->Stats();
  sim_->ResetStats();

  std::unique_ptr<rocksdb::Env> env;
  std::unique_ptr<IssueStore> store;
  OpenMemStore(&env, &store);
  CrawlProgress p = Crawl(store.get(), /*graphql=*/true, v1::CRAWL_MODE_FULL);
  const sim::SimStats stats = sim_->Stats();
  EXPECT_EQ(StoreView(*store), rest);
  EXPECT_GT(stats.graphql_requests, 0);
  EXPECT_EQ(p.counters.graphql_points(), stats.graphql_points);
  EXPECT_EQ(p.counters.graphql_requests(), stats.graphql_requests);
  EXPECT_EQ(p.counters.requests(), stats.requests - stats.graphql_requests);
  // REST: the repository, the issue listing (and its ETag round), the comment listing from the
  // new cursor; no comment pages.
  EXPECT_LE(stats.requests - stats.graphql_requests, rest_stats.by_endpoint.at("issues") + 3);
  EXPECT_LE(stats.by_endpoint.count("comments") ? stats.by_endpoint.at("comments") : 0, 2);
  const int64_t units = stats.requests - stats.graphql_requests + stats.graphql_points;
  // At this size REST's fixed requests weigh; the benchmark measures the ratio at 20k issues.
  EXPECT_LT(units * 10, rest_stats.requests * 6)
      << units << " budget units vs REST's " << rest_stats.requests;
  EXPECT_EQ(stats.over_budget, 0);
  EXPECT_EQ(stats.graphql_over_budget, 0);

  // Unchanged: the re-crawl costs nothing (304s only, no GraphQL).
  sim_->ResetStats();
  CrawlProgress again = Crawl(store.get(), true, v1::CRAWL_MODE_INCREMENTAL, *p.cursor);
  const sim::SimStats unchanged = sim_->Stats();
  EXPECT_EQ(unchanged.graphql_requests, 0);
  EXPECT_EQ(unchanged.requests, unchanged.not_modified);
  EXPECT_EQ(again.counters.issues_stored() + again.counters.comments_stored(), 0);

  // Changes: new issues, edits, new comments and closes are all followed.
  sim::MutationSpec spec;
  spec.new_issues = 12;
  spec.edited_issues = 9;
  spec.new_comments = 40;
  spec.closed_issues = 5;
  ASSERT_TRUE(sim_->Mutate(spec).ok());
  Crawl(store.get(), true, v1::CRAWL_MODE_INCREMENTAL, *again.cursor);
  EXPECT_EQ(StoreView(*store), RestView());
}

TEST_F(GraphqlCrawlTest, WithoutGraphqlTheCrawlIsRestsExactly) {
  sim::FaultConfig faults;
  faults.graphql = false;
  StartSimulator(faults, 150, 0);
  const std::map<int64_t, std::string> rest = RestView();
  const int64_t rest_requests = sim_->Stats().requests;
  sim_->ResetStats();
  std::unique_ptr<rocksdb::Env> env;
  std::unique_ptr<IssueStore> store;
  OpenMemStore(&env, &store);
  Crawl(store.get(), /*graphql=*/true, v1::CRAWL_MODE_FULL);
  const sim::SimStats stats = sim_->Stats();
  EXPECT_EQ(StoreView(*store), rest);
  EXPECT_EQ(stats.graphql_requests, 1);  // the one POST answered 404
  EXPECT_EQ(stats.requests - stats.graphql_requests, rest_requests);
}

TEST_F(GraphqlCrawlTest, TimeoutsShrinkTheQueriesAndNoPageIsLost) {
  sim::FaultConfig faults;
  // A query asks for each issue's comments as counted (4 on average here; a long thread's page
  // 100): more than 300 nodes times out, so the first queries (100 issues, some 500 nodes) do.
  faults.graphql_timeout_nodes = 300;
  StartSimulator(faults, 200, 0.02);
  const sim::SimStats stats = GraphqlCrawlStoresWhatRestStores();
  EXPECT_GE(stats.graphql_timeouts, 2);
  // Timeouts happen while the node cap comes down; it then stays below the limit (grows only
  // halfway to the cut-off after three answered queries, and each growth past it costs one).
  EXPECT_LT(stats.graphql_timeouts, stats.graphql_requests / 2);
}

TEST_F(GraphqlCrawlTest, FlakyAnswersAreAskedAgainAndNoCommentIsLost) {
  sim::FaultConfig faults;
  faults.seed = 1;
  // Answers that arrive broken: a quarter cut halfway or garbled (asked for again), and a tenth
  // of the queries answered 500/502/503 before they run (a 502 reads as a cut-off: the query is
  // sent again smaller; 500 and 503 are the request loop's retries).
  faults.truncated_rate = 0.1;
  faults.invalid_json_rate = 0.15;
  faults.error_rate = 0.1;
  StartSimulator(faults, 600, 0.02);
  const sim::SimStats stats = GraphqlCrawlStoresWhatRestStores();
  EXPECT_GT(stats.graphql_faults, 0) << "the dice should have hit some of the GraphQL queries";
  // The comments came over GraphQL: REST listed only the page from the new cursor (and its
  // retries), not the comments.
  const int64_t comment_pages = stats.by_endpoint.count("comments") ? stats.by_endpoint.at("comments") : 0;
  EXPECT_LE(comment_pages, 4);
  EXPECT_GT(stats.graphql_points, 0);
}

TEST_F(GraphqlCrawlTest, SpentGraphqlBudgetHandsOverToRestWithoutOverspending) {
  sim::FaultConfig faults;
  faults.graphql_budget = 2;  // two points: not enough for the comments, REST lists them
  StartSimulator(faults, 300, 0.02);
  const std::map<int64_t, std::string> rest = RestView();
  sim_->ResetStats();
  std::unique_ptr<rocksdb::Env> env;
  std::unique_ptr<IssueStore> store;
  OpenMemStore(&env, &store);
  CrawlProgress p = Crawl(store.get(), true, v1::CRAWL_MODE_FULL);
  const sim::SimStats stats = sim_->Stats();
  EXPECT_EQ(StoreView(*store), rest);
  EXPECT_LE(stats.graphql_points, 2);
  EXPECT_EQ(stats.graphql_over_budget, 0);
  EXPECT_EQ(stats.over_budget, 0);
  EXPECT_TRUE(p.done);
}

TEST_F(GraphqlCrawlTest, ASpentGraphqlBudgetNeverHoldsACrawlBackNorIsOverspent) {
  sim::FaultConfig faults;
  faults.graphql_budget = 0;
  StartSimulator(faults, 150, 0);
  const std::map<int64_t, std::string> rest = RestView();
  sim_->ResetStats();
  CrawlerOptions options;
  options.token = kToken;
  options.github_graphql = true;
  options.graphql_pool = OneTokenPool(v1::TRACKER_GITHUB, kToken, Clock::Real(), RequestLoopOptions());
  for (int round = 0; round < 2; ++round) {
    std::unique_ptr<rocksdb::Env> env;
    std::unique_ptr<IssueStore> store;
    OpenMemStore(&env, &store);
    RepoCrawler crawler(&transport_, store.get(), Clock::Real(), options);
    auto result = crawler.Crawl(Lease(v1::CRAWL_MODE_FULL),
                                [](const CrawlProgress&) { return absl::OkStatus(); });
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(StoreView(*store), rest) << "round " << round;
    // The first crawl asks for the budget (free) and finds it spent; the second, sharing the
    // pool, knows and sends nothing; neither waits for the reset an hour away.
    EXPECT_EQ(sim_->Stats().graphql_requests, 1) << "round " << round;
  }
  const sim::SimStats stats = sim_->Stats();
  EXPECT_EQ(stats.graphql_points, 0);
  EXPECT_EQ(stats.graphql_over_budget, 0);
  EXPECT_EQ(stats.over_budget, 0);
}

TEST_F(GraphqlCrawlTest, DeletedAndTransferredIssuesAreTombstonedInOneSweep) {
  StartSimulator(sim::FaultConfig(), 200, 0, /*repos=*/2);
  std::unique_ptr<rocksdb::Env> env;
  std::unique_ptr<IssueStore> store;
  OpenMemStore(&env, &store);
  CrawlProgress full = Crawl(store.get(), true, v1::CRAWL_MODE_FULL);
  EXPECT_EQ(full.counters.issues_gone(), 0);
  ASSERT_TRUE(full.cursor && full.cursor->has_swept_at()) << "a full pass sweeps for free";

  sim::MutationSpec spec;
  spec.repo = "pytorch/pytorch";
  spec.deleted_issues = 3;
  spec.transferred_issues = 3;
  auto changed = sim_->Mutate(spec);
  ASSERT_TRUE(changed.ok()) << changed.status();
  ASSERT_EQ(changed->deleted.size(), 3u);
  ASSERT_EQ(changed->transferred.size(), 3u);

  // Within the sweep interval the unchanged repository costs nothing and finds nothing...
  sim_->ResetStats();
  CrawlProgress quiet = Crawl(store.get(), true, v1::CRAWL_MODE_INCREMENTAL, *full.cursor);
  EXPECT_EQ(quiet.counters.issues_gone(), 0);
  EXPECT_EQ(sim_->Stats().graphql_requests, 0);
  // ...and the sweep, once due, finds every one.
  sweep_interval_ = absl::ZeroDuration();
  sim_->ResetStats();
  CrawlProgress swept = Crawl(store.get(), true, v1::CRAWL_MODE_INCREMENTAL, *quiet.cursor);
  EXPECT_EQ(swept.counters.issues_gone(), 6);
  const sim::SimStats stats = sim_->Stats();
  EXPECT_EQ(stats.graphql_points, 2);  // 200 issues, 100 numbers per point
  for (const sim::IssueRef& gone : changed->deleted) {
    auto got = store->GetIssue("github:pytorch/pytorch", gone.number);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(got->issue().deleted()) << gone.number;
    EXPECT_EQ(got->issue().transferred_to(), "");
  }
  for (const sim::IssueMove& moved : changed->transferred) {
    auto got = store->GetIssue("github:pytorch/pytorch", moved.from.number);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(got->issue().deleted()) << moved.from.number;
    EXPECT_EQ(got->issue().transferred_to(),
              absl::StrCat("github:", moved.to.repo, "#", moved.to.number));
  }
  // Nothing else was tombstoned.
  int64_t tombstones = 0;
  ASSERT_TRUE(store
                  ->ScanRepository("github:pytorch/pytorch",
                                   [&](const v1::Issue& issue) {
                                     tombstones += issue.deleted() ? 1 : 0;
                                     return true;
                                   })
                  .ok());
  EXPECT_EQ(tombstones, 6);
}

// A due sweep whose listing would cost more than its share of the GraphQL points left waits
// (nothing sent but the free budget question; still due), and runs once the share allows it.
TEST_F(GraphqlCrawlTest, SweepWaitsWhenItsListingExceedsItsShareOfTheBudget) {
  sim::FaultConfig faults;
  faults.graphql_budget = 12;  // points per token per window
  StartSimulator(faults, 200, 0, /*repos=*/2);
  std::unique_ptr<rocksdb::Env> env;
  std::unique_ptr<IssueStore> store;
  OpenMemStore(&env, &store);
  CrawlProgress full = Crawl(store.get(), true, v1::CRAWL_MODE_FULL);
  ASSERT_TRUE(full.cursor && full.cursor->has_swept_at());
  sim::MutationSpec spec;
  spec.repo = "pytorch/pytorch";
  spec.deleted_issues = 2;
  ASSERT_TRUE(sim_->Mutate(spec).ok());

  sweep_interval_ = absl::ZeroDuration();
  sweep_share_ = 0.1;  // 2 points to list 200 numbers > 10% of what is left
  sim_->ResetStats();
  CrawlProgress postponed = Crawl(store.get(), true, v1::CRAWL_MODE_INCREMENTAL, *full.cursor);
  EXPECT_EQ(postponed.counters.issues_gone(), 0);
  EXPECT_EQ(sim_->Stats().graphql_points, 0) << "only the free budget question was sent";
  ASSERT_TRUE(postponed.cursor);
  EXPECT_EQ(postponed.cursor->swept_at().seconds(), full.cursor->swept_at().seconds())
      << "a postponed sweep stays due";

  sweep_share_ = 1.0;
  CrawlProgress swept = Crawl(store.get(), true, v1::CRAWL_MODE_INCREMENTAL, *postponed.cursor);
  EXPECT_EQ(swept.counters.issues_gone(), 2);
}

}  // namespace
}  // namespace issuescope::crawler

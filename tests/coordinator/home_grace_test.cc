// Home grace (issue 16, item 13): a worker declared dead stays, for `home_grace`, the home of the
// repositories its store holds. A worker that comes back within the grace (same id, same store)
// gets them back and crawls them incrementally, and no other worker is granted them meanwhile;
// one that does not come back loses them when the grace ends; its old leases stay fenced; the
// grace survives a coordinator restart without being extended.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/time_util.h"
#include "coordinator/coordinator_core.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/core_fixture.h"

namespace issuescope::coordinator::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kSlug[] = "github:a/b";
constexpr int64_t kCursorS = 1600000000;

class HomeGraceTest : public CoreTest {
 protected:
  void RegisterWithStore(const std::string& worker, const std::string& store_id) {
    v1::RegisterWorkerRequest req;
    req.set_worker_id(worker);
    req.set_store_address("127.0.0.1:7000");
    req.set_store_id(store_id);
    req.set_capacity(100);
    auto resp = core_->RegisterWorker(req);
    ASSERT_TRUE(resp.ok()) << resp.status();
  }

  // Finish completes a crawl under `lease`, reporting the cursor kCursorS.
  void Finish(const std::string& worker, const v1::Lease& lease) {
    auto done = Report(worker, lease);
    *done.mutable_cursor()->mutable_issues_since() = ToProto(absl::FromUnixSeconds(kCursorS));
    done.mutable_cursor()->set_issues_etag(absl::StrCat("\"", worker, "\""));
    done.set_done(true);
    ASSERT_TRUE(core_->ReportProgress(done).ok()) << lease.repo_slug();
  }

  // CrawlAll lets `worker` acquire and finish everything it is granted; returns the slugs.
  std::set<std::string> CrawlAll(const std::string& worker) {
    std::set<std::string> slugs;
    for (const auto& lease : Acquire(worker)) {
      slugs.insert(lease.repo_slug());
      Finish(worker, lease);
    }
    return slugs;
  }

  void TriggerAll() {
    ASSERT_TRUE(core_->TriggerCrawl(v1::TriggerCrawlRequest()).ok());
  }

  // KeepAlive advances the clock by `seconds`, one second at a time, while `worker` heartbeats
  // and acquires (finishing what it gets); fails the test if it is granted one of `forbidden`.
  void KeepAlive(const std::string& worker, int seconds, const std::set<std::string>& forbidden) {
    for (int i = 0; i < seconds; ++i) {
      clock_.Advance(absl::Seconds(1));
      auto beat = Heartbeat(worker, {});
      ASSERT_TRUE(beat.ok()) << beat.status();
      ASSERT_TRUE(beat->known()) << worker;
      for (const auto& lease : Acquire(worker)) {
        EXPECT_EQ(forbidden.count(lease.repo_slug()), 0u)
            << lease.repo_slug() << " granted to " << worker << " while its home is away";
        Finish(worker, lease);
      }
    }
  }

  std::string OwnerOf(const std::string& slug) { return RepoStatus(slug).owner(); }
};

TEST_F(HomeGraceTest, ReturningWorkerGetsItsRepositoriesBackIncrementally) {
  std::vector<v1::RepositorySpec> specs;
  for (int i = 0; i < 12; ++i) specs.push_back(Spec("o", "r" + std::to_string(i)));
  Add(specs);
  RegisterWithStore("wa", "store-a");
  RegisterWithStore("wb", "store-b");
  const std::set<std::string> of_a = CrawlAll("wa");
  const std::set<std::string> of_b = CrawlAll("wb");
  ASSERT_FALSE(of_a.empty());
  ASSERT_FALSE(of_b.empty());
  ASSERT_EQ(of_a.size() + of_b.size(), 12u);
  TriggerAll();  // everything is due now

  // A is silent for 39 s: dead after 10 s, within its grace (default 3 × 10 s) until 40 s. B
  // keeps crawling its own repositories and is granted none of A's.
  ASSERT_NO_FATAL_FAILURE(KeepAlive("wb", 39, of_a));
  const v1::GetStatusResponse status = Status();
  for (const auto& w : status.workers()) {
    if (w.worker_id() == "wa") {
      EXPECT_FALSE(w.alive());
      EXPECT_EQ(w.repositories_owned(), static_cast<int>(of_a.size()));
    }
  }
  for (const std::string& slug : of_a) {
    EXPECT_EQ(OwnerOf(slug), "wa") << slug;
    EXPECT_EQ(RepoStatus(slug).phase(), v1::REPO_PHASE_PENDING) << slug;
  }

  // A comes back: told it is unknown, it registers again with the same store.
  auto beat = Heartbeat("wa", {});
  ASSERT_TRUE(beat.ok());
  EXPECT_FALSE(beat->known());
  RegisterWithStore("wa", "store-a");
  std::set<std::string> regained;
  for (const auto& lease : Acquire("wa")) {
    regained.insert(lease.repo_slug());
    EXPECT_EQ(lease.mode(), v1::CRAWL_MODE_INCREMENTAL) << lease.repo_slug();
    EXPECT_EQ(FromProto(lease.cursor().issues_since()), absl::FromUnixSeconds(kCursorS));
    EXPECT_EQ(lease.cursor().issues_etag(), "\"wa\"");
    EXPECT_EQ(lease.epoch(), 2u);
  }
  EXPECT_EQ(regained, of_a);
  // The grace's end passes: nothing of A's moves any more.
  ASSERT_NO_FATAL_FAILURE(KeepAlive("wb", 5, of_a));
}

TEST_F(HomeGraceTest, WorkerThatDoesNotComeBackLosesItsRepositoriesAfterTheGrace) {
  struct Case {
    const char* name;
    std::optional<absl::Duration> home_grace;
    int moves_after_s;  // silence (from the last call) after which another worker gets it
  };
  const Case cases[] = {
      {"default: 3 x worker_timeout", std::nullopt, 40},
      {"5 s", absl::Seconds(5), 15},
      {"off: moves at worker_timeout", absl::ZeroDuration(), 10},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    core_.reset();
    options_.home_grace = c.home_grace;
    SetUp();  // a fresh in-memory state per case
    Add({Spec("a", "b")});
    RegisterWithStore("wa", "store-a");
    RegisterWithStore("wb", "store-b");
    ASSERT_EQ(CrawlAll("wa").size() + CrawlAll("wb").size(), 1u);
    const std::string home = OwnerOf(kSlug);
    const std::string other = home == "wa" ? "wb" : "wa";
    TriggerAll();
    ASSERT_NO_FATAL_FAILURE(KeepAlive(other, c.moves_after_s - 1, {kSlug}));
    clock_.Advance(absl::Seconds(1));
    auto leases = Acquire(other);
    ASSERT_EQ(leases.size(), 1u) << "not granted after " << c.moves_after_s << " s";
    EXPECT_EQ(leases[0].mode(), v1::CRAWL_MODE_FULL);  // the new store lacks the data
    EXPECT_EQ(leases[0].epoch(), 2u);
  }
}

// The store of a worker that stays dead past its grace is lost: what it had not yet fed to the
// indexer exists nowhere else. Its repositories are crawled again at once (FULL on the other
// store), not at their next re-crawl, which a catalog without intervals never has. The same
// worker returning later with its store intact resumes incrementally.
TEST_F(HomeGraceTest, RepositoriesOfALostStoreAreCrawledAgainAtOnce) {
  for (const bool returns : {false, true}) {
    SCOPED_TRACE(returns ? "the worker returns after its grace" : "another worker takes over");
    core_.reset();
    SetUp();
    Add({Spec("a", "b")});
    RegisterWithStore("wa", "store-a");
    RegisterWithStore("wb", "store-b");
    ASSERT_EQ(CrawlAll("wa").size() + CrawlAll("wb").size(), 1u);
    const std::string home = OwnerOf(kSlug);
    const std::string other = home == "wa" ? "wb" : "wa";
    EXPECT_EQ(RepoStatus(kSlug).phase(), v1::REPO_PHASE_IDLE);
    // Within the grace (default 40 s of silence) nothing moves and nothing is due.
    ASSERT_NO_FATAL_FAILURE(KeepAlive(other, 39, {kSlug}));
    EXPECT_EQ(RepoStatus(kSlug).phase(), v1::REPO_PHASE_IDLE);
    clock_.Advance(absl::Seconds(1));
    EXPECT_EQ(RepoStatus(kSlug).phase(), v1::REPO_PHASE_PENDING) << "the lost store's repository";
    const std::string taker = returns ? home : other;
    if (returns) {
      RegisterWithStore(home, "store-" + std::string(home == "wa" ? "a" : "b"));
    } else {
      ASSERT_TRUE(Heartbeat(other, {}).ok());
    }
    auto leases = Acquire(taker);
    ASSERT_EQ(leases.size(), 1u) << "the repository of the lost store was not crawled again";
    EXPECT_EQ(leases[0].repo_slug(), kSlug);
    EXPECT_EQ(leases[0].mode(), returns ? v1::CRAWL_MODE_INCREMENTAL : v1::CRAWL_MODE_FULL);
    Finish(taker, leases[0]);
    EXPECT_EQ(RepoStatus(kSlug).phase(), v1::REPO_PHASE_IDLE);
    EXPECT_TRUE(Acquire(taker).empty());
  }
}

TEST_F(HomeGraceTest, DrainingAnAwayWorkerEndsItsGrace) {
  Add({Spec("a", "b")});
  RegisterWithStore("wa", "store-a");
  ASSERT_EQ(CrawlAll("wa").size(), 1u);
  RegisterWithStore("wb", "store-b");
  TriggerAll();
  ASSERT_NO_FATAL_FAILURE(KeepAlive("wb", 12, {kSlug}));
  v1::DrainWorkerRequest drain;
  drain.set_worker_id("wa");
  ASSERT_TRUE(core_->DrainWorker(drain).ok());
  auto leases = Acquire("wb");
  ASSERT_EQ(leases.size(), 1u);
  EXPECT_EQ(leases[0].repo_slug(), kSlug);
}

TEST_F(HomeGraceTest, ReturningWorkersOldLeaseIsFenced) {
  Add({Spec("a", "b")});
  RegisterWithStore("wa", "store-a");
  auto first = Acquire("wa");
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].epoch(), 1u);
  // Mid-crawl: A has stored everything up to a cursor (FULL crawl, page limit) and reported it.
  auto progress = Report("wa", first[0]);
  *progress.mutable_cursor()->mutable_issues_since() = ToProto(absl::FromUnixSeconds(kCursorS));
  ASSERT_TRUE(core_->ReportProgress(progress).ok());
  RegisterWithStore("wb", "store-b");

  // A is silent for 15 s: dead, its lease ended; B is not granted the repository.
  ASSERT_NO_FATAL_FAILURE(KeepAlive("wb", 15, {kSlug}));
  auto late = core_->ReportProgress(Report("wa", first[0])).status();
  EXPECT_EQ(late.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(late.message(), HasSubstr("stale lease epoch 1 for github:a/b (current 1); the "
                                        "lease expired or was released"));
  v1::AcquireLeasesRequest acquire;
  acquire.set_worker_id("wa");
  EXPECT_EQ(core_->AcquireLeases(acquire).status().code(),
            absl::StatusCode::kFailedPrecondition);  // dead: it must register again
  auto beat = Heartbeat("wa", first);
  ASSERT_TRUE(beat.ok());
  EXPECT_FALSE(beat->known());
  ASSERT_EQ(beat->revoked_size(), 1);
  EXPECT_EQ(beat->revoked(0).epoch(), 1u);

  // A registers again and gets the repository back under a new epoch, continuing from its
  // cursor; everything under the old epoch stays refused.
  RegisterWithStore("wa", "store-a");
  auto again = Acquire("wa");
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].epoch(), 2u);
  EXPECT_EQ(again[0].mode(), v1::CRAWL_MODE_INCREMENTAL);
  EXPECT_EQ(FromProto(again[0].cursor().issues_since()), absl::FromUnixSeconds(kCursorS));
  auto stale = core_->ReportProgress(Report("wa", first[0])).status();
  EXPECT_EQ(stale.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(stale.message(), HasSubstr("stale lease epoch 1 for github:a/b (current 2)"));
  auto both = Heartbeat("wa", {first[0], again[0]});
  ASSERT_TRUE(both.ok());
  EXPECT_TRUE(both->known());
  ASSERT_EQ(both->revoked_size(), 1);
  EXPECT_EQ(both->revoked(0).epoch(), 1u);
  v1::ReleaseLeaseRequest release;
  release.set_worker_id("wa");
  release.mutable_lease()->set_repo(kSlug);
  release.mutable_lease()->set_epoch(1);
  ASSERT_TRUE(core_->ReleaseLease(release).ok());  // a no-op: the lease of epoch 2 runs on
  EXPECT_EQ(RepoStatus(kSlug).worker_id(), "wa");
  EXPECT_EQ(RepoStatus(kSlug).epoch(), 2u);
  EXPECT_TRUE(core_->ReportProgress(Report("wa", again[0])).ok());
}

TEST_F(HomeGraceTest, RestartNeitherExtendsNorForgetsTheGrace) {
  Add({Spec("a", "b")});
  RegisterWithStore("wa", "store-a");
  ASSERT_EQ(CrawlAll("wa").size(), 1u);
  RegisterWithStore("wb", "store-b");
  TriggerAll();
  // A dies (declared at 10 s, grace until 40 s); the coordinator restarts at 20 s.
  ASSERT_NO_FATAL_FAILURE(KeepAlive("wb", 20, {kSlug}));
  Reopen();
  RegisterWithStore("wb", "store-b");  // B was told known=false and registers again
  ASSERT_NO_FATAL_FAILURE(KeepAlive("wb", 19, {kSlug}));
  clock_.Advance(absl::Seconds(1));
  auto leases = Acquire("wb");
  ASSERT_EQ(leases.size(), 1u) << "the grace outlived its end across the restart";
  EXPECT_EQ(leases[0].mode(), v1::CRAWL_MODE_FULL);
}

TEST_F(HomeGraceTest, WorkersAliveAtARestartKeepTheirRepositories) {
  std::vector<v1::RepositorySpec> specs;
  for (int i = 0; i < 6; ++i) specs.push_back(Spec("o", "r" + std::to_string(i)));
  Add(specs);
  RegisterWithStore("wa", "store-a");
  RegisterWithStore("wb", "store-b");
  const std::set<std::string> of_a = CrawlAll("wa");
  const std::set<std::string> of_b = CrawlAll("wb");
  ASSERT_FALSE(of_a.empty());
  // Both idle and heartbeating for a minute, then the coordinator is down for a second.
  for (int i = 0; i < 30; ++i) {
    clock_.Advance(absl::Seconds(2));
    ASSERT_TRUE(Heartbeat("wa", {})->known());
    ASSERT_TRUE(Heartbeat("wb", {})->known());
  }
  TriggerAll();
  Reopen();
  clock_.Advance(absl::Seconds(1));
  // B happens to register again first: it gets its own repositories, none of A's.
  RegisterWithStore("wb", "store-b");
  std::set<std::string> to_b;
  for (const auto& lease : Acquire("wb")) to_b.insert(lease.repo_slug());
  EXPECT_EQ(to_b, of_b);
  RegisterWithStore("wa", "store-a");
  std::set<std::string> to_a;
  for (const auto& lease : Acquire("wa")) {
    to_a.insert(lease.repo_slug());
    EXPECT_EQ(lease.mode(), v1::CRAWL_MODE_INCREMENTAL) << lease.repo_slug();
  }
  EXPECT_EQ(to_a, of_a);
}

TEST_F(HomeGraceTest, OptionDefaultAndValidation) {
  EXPECT_EQ(core_->options().home_grace, absl::Seconds(30));  // 3 × worker_timeout
  core_.reset();
  const std::pair<absl::Duration, bool> cases[] = {
      {absl::ZeroDuration(), true},
      {absl::Minutes(5), true},
      {absl::Seconds(-1), false},
      {absl::InfiniteDuration(), false},
  };
  for (const auto& [grace, ok] : cases) {
    SCOPED_TRACE(absl::FormatDuration(grace));
    CoordinatorOptions options = options_;
    options.home_grace = grace;
    auto core = CoordinatorCore::Open("/coord", options, &clock_);
    EXPECT_EQ(core.ok(), ok) << core.status();
    if (!ok) {
      EXPECT_EQ(core.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(core.status().message(), HasSubstr("home_grace"));
    }
  }
}

}  // namespace
}  // namespace issuescope::coordinator::testing

// Schedules: full re-crawl intervals, triggered full crawls, pause/resume, and a bulk add of 500
// repositories in one synced write.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/coordinator/core_fixture.h"

namespace issuescope::coordinator::testing {
namespace {

class ScheduleTest : public CoreTest {
 protected:
  void Finish(const std::string& worker, const v1::Lease& lease) {
    auto done = Report(worker, lease);
    done.set_done(true);
    ASSERT_TRUE(core_->ReportProgress(done).ok());
  }
  // CrawlOnce acquires the single repository (expecting `mode`) and finishes it.
  void CrawlOnce(v1::CrawlMode mode) {
    auto leases = Acquire("w");
    ASSERT_EQ(leases.size(), 1u);
    EXPECT_EQ(leases[0].mode(), mode);
    Finish("w", leases[0]);
  }
};

TEST_F(ScheduleTest, FullAndIncrementalIntervals) {
  v1::RepositorySpec spec = Spec("o", "r", /*recrawl_s=*/60);
  spec.set_full_recrawl_interval_s(300);
  Add({spec});
  Register("w");
  CrawlOnce(v1::CRAWL_MODE_FULL);  // the first crawl
  v1::RepositoryStatus status = RepoStatus("github:o/r");
  EXPECT_EQ(status.next_mode(), v1::CRAWL_MODE_INCREMENTAL);
  EXPECT_EQ(status.next_crawl_at().seconds(), absl::ToUnixSeconds(clock_.Now()) + 60);
  for (int i = 0; i < 4; ++i) {
    clock_.Advance(absl::Seconds(60));
    Register("w");
    CrawlOnce(v1::CRAWL_MODE_INCREMENTAL);
  }
  clock_.Advance(absl::Seconds(60));  // 300 s since the full crawl: the full one is due
  Register("w");
  CrawlOnce(v1::CRAWL_MODE_FULL);
  EXPECT_TRUE(Acquire("w").empty());
}

TEST_F(ScheduleTest, AFullCrawlStoppedByThePageLimitContinuesFromItsCursor) {
  v1::RepositorySpec spec = Spec("o", "r");
  spec.set_full_recrawl_interval_s(3600);
  Add({spec});
  Register("w");
  auto first = Acquire("w");
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].mode(), v1::CRAWL_MODE_FULL);
  // The worker stores 50 pages, reports its cursor without `done`, and hands the lease back.
  auto partial = Report("w", first[0]);
  partial.mutable_cursor()->mutable_issues_since()->set_seconds(1700000000);
  ASSERT_TRUE(core_->ReportProgress(partial).ok());
  v1::ReleaseLeaseRequest release;
  release.set_worker_id("w");
  release.mutable_lease()->set_repo(first[0].repo_slug());
  release.mutable_lease()->set_epoch(first[0].epoch());
  ASSERT_TRUE(core_->ReleaseLease(release).ok());
  // The next lease continues from the cursor instead of starting the full crawl over.
  auto second = Acquire("w");
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].mode(), v1::CRAWL_MODE_INCREMENTAL);
  EXPECT_EQ(second[0].cursor().issues_since().seconds(), 1700000000);
  Finish("w", second[0]);
  // Its completion completes the full crawl: the next full one is an interval away.
  EXPECT_EQ(RepoStatus("github:o/r").crawls_completed(), 1);
  EXPECT_TRUE(Acquire("w").empty());
  clock_.Advance(absl::Seconds(3600));
  Register("w");
  auto due = Acquire("w");
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].mode(), v1::CRAWL_MODE_FULL);
}

TEST_F(ScheduleTest, TriggeredFullCrawlWinsOverIncremental) {
  Add({Spec("o", "r")});
  Register("w");
  CrawlOnce(v1::CRAWL_MODE_FULL);
  v1::TriggerCrawlRequest incremental;
  incremental.add_repo_slugs("github:o/r");
  ASSERT_TRUE(core_->TriggerCrawl(incremental).ok());
  v1::TriggerCrawlRequest full = incremental;
  full.set_mode(v1::CRAWL_MODE_FULL);
  ASSERT_TRUE(core_->TriggerCrawl(full).ok());
  CrawlOnce(v1::CRAWL_MODE_FULL);
  EXPECT_TRUE(Acquire("w").empty());
}

TEST_F(ScheduleTest, PausedRepositoriesGetNoLeasesUntilResumed) {
  Add({Spec("o", "a"), Spec("o", "b")});
  Register("w");
  auto leases = Acquire("w", 1);
  ASSERT_EQ(leases.size(), 1u);
  const std::string running = leases[0].repo_slug();
  v1::PauseRepositoriesRequest pause;  // all
  auto paused = core_->PauseRepositories(pause);
  ASSERT_TRUE(paused.ok()) << paused.status();
  EXPECT_EQ(paused->paused_size(), 2);
  // The running lease is revoked; nothing is granted; status says paused and quiescent.
  auto beat = Heartbeat("w", leases);
  ASSERT_TRUE(beat.ok());
  EXPECT_EQ(beat->revoked_size(), 1);
  EXPECT_EQ(core_->ReportProgress(Report("w", leases[0])).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Acquire("w").empty());
  v1::GetStatusResponse status = Status();
  for (const auto& r : status.repositories()) {
    EXPECT_EQ(r.phase(), v1::REPO_PHASE_PAUSED);
    EXPECT_TRUE(r.paused());
  }
  EXPECT_TRUE(status.quiescent());
  // Survives a restart.
  Reopen();
  Register("w");
  EXPECT_TRUE(Acquire("w").empty());

  v1::ResumeRepositoriesRequest resume;
  resume.add_repo_slugs(running);
  auto resumed = core_->ResumeRepositories(resume);
  ASSERT_TRUE(resumed.ok());
  ASSERT_EQ(resumed->resumed_size(), 1);
  auto again = Acquire("w");
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].repo_slug(), running);
  EXPECT_EQ(again[0].mode(), v1::CRAWL_MODE_FULL) << "the interrupted crawl is still due";

  v1::ResumeRepositoriesRequest unknown;
  unknown.add_repo_slugs("github:no/such");
  EXPECT_EQ(core_->ResumeRepositories(unknown).status().code(), absl::StatusCode::kNotFound);
  v1::PauseRepositoriesRequest bad;
  bad.add_repo_slugs("not a slug");
  EXPECT_EQ(core_->PauseRepositories(bad).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(ScheduleTest, FiveHundredRepositoriesInOneSyncedWrite) {
  v1::AddRepositoriesRequest req;
  for (int i = 0; i < 500; ++i) {
    v1::RepositorySpec* spec = req.add_repositories();
    *spec = Spec("study", "repo" + std::to_string(i), 3600);
    spec->set_full_recrawl_interval_s(7 * 24 * 3600);
  }
  const uint64_t before = core_->Counters().state_commits;
  auto added = core_->AddRepositories(req);
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(added->added_size(), 500);
  EXPECT_EQ(core_->Counters().state_commits, before + 1);
  Reopen();
  EXPECT_EQ(Status().repositories_size(), 500);
  // One bad entry rejects the whole request: nothing is written.
  req.mutable_repositories(499)->set_full_recrawl_interval_s(-1);
  const uint64_t commits = core_->Counters().state_commits;
  auto rejected = core_->AddRepositories(req);
  EXPECT_EQ(rejected.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(rejected.status().message()).find("repositories[499]"), std::string::npos);
  EXPECT_EQ(core_->Counters().state_commits, commits);
}

}  // namespace
}  // namespace issuescope::coordinator::testing

// CoordinatorCore: membership, catalog, leases with fencing epochs, progress and expiry.
#include "coordinator/coordinator_core.h"

#include "common/time_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/core_fixture.h"

namespace issuescope::coordinator::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST_F(CoreTest, RegisterHeartbeatAndAliveness) {
  v1::RegisterWorkerRequest req;
  req.set_worker_id("worker-0");
  req.set_store_address("127.0.0.1:7001");
  req.set_store_id("s0");
  auto resp = core_->RegisterWorker(req);
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->heartbeat_interval_ms(), 2000);
  EXPECT_EQ(resp->lease_ttl_ms(), 15000);

  auto status = Status();
  ASSERT_EQ(status.workers_size(), 1);
  EXPECT_EQ(status.workers(0).worker_id(), "worker-0");
  EXPECT_EQ(status.workers(0).store_address(), "127.0.0.1:7001");
  EXPECT_EQ(status.workers(0).capacity(), 1);  // 0 means 1
  EXPECT_TRUE(status.workers(0).alive());

  clock_.Advance(absl::Seconds(8));
  auto beat = Heartbeat("worker-0", {});
  ASSERT_TRUE(beat.ok());
  EXPECT_TRUE(beat->known());
  clock_.Advance(absl::Seconds(8));  // 8 s since the heartbeat: still alive
  EXPECT_TRUE(Status().workers(0).alive());
  clock_.Advance(absl::Seconds(3));  // 11 s of silence: dead
  EXPECT_FALSE(Status().workers(0).alive());
  beat = Heartbeat("worker-0", {});
  ASSERT_TRUE(beat.ok());
  EXPECT_FALSE(beat->known());  // must re-register
  EXPECT_FALSE(Heartbeat("nobody", {})->known());
  Register("worker-0");
  EXPECT_TRUE(Status().workers(0).alive());
}

TEST_F(CoreTest, AddedRepositoryGetsFullCrawlAndEpochOne) {
  auto added = Add({Spec("PyTorch", "PyTorch")});
  EXPECT_THAT(added.added(), ElementsAre("github:pytorch/pytorch"));
  EXPECT_EQ(RepoStatus("github:pytorch/pytorch").phase(), v1::REPO_PHASE_PENDING);
  EXPECT_FALSE(Status().quiescent());

  Register("w");
  auto leases = Acquire("w");
  ASSERT_EQ(leases.size(), 1u);
  EXPECT_EQ(leases[0].repo_slug(), "github:pytorch/pytorch");
  EXPECT_EQ(leases[0].repo().owner(), "PyTorch");
  EXPECT_EQ(leases[0].epoch(), 1u);
  EXPECT_EQ(leases[0].mode(), v1::CRAWL_MODE_FULL);
  EXPECT_FALSE(leases[0].cursor().has_issues_since());
  EXPECT_TRUE(leases[0].include_pull_requests());
  EXPECT_EQ(FromProto(leases[0].expires_at()), clock_.Now() + absl::Seconds(15));
  auto repo = RepoStatus("github:pytorch/pytorch");
  EXPECT_EQ(repo.phase(), v1::REPO_PHASE_CRAWLING);
  EXPECT_EQ(repo.worker_id(), "w");
  EXPECT_EQ(Status().workers(0).leases(), 1);
  EXPECT_THAT(Acquire("w"), IsEmpty());  // already leased
}

TEST_F(CoreTest, ProgressThenDoneLeavesIdleWithCursor) {
  Add({Spec("a", "b")});
  Register("w");
  auto leases = Acquire("w");
  ASSERT_EQ(leases.size(), 1u);

  auto req = Report("w", leases[0]);
  req.mutable_counters()->set_issues_fetched(100);
  req.mutable_cursor()->set_issues_etag("\"e1\"");
  *req.mutable_cursor()->mutable_issues_since() = ToProto(absl::FromUnixSeconds(1600000000));
  req.set_issues_estimated(250);
  ASSERT_TRUE(core_->ReportProgress(req).ok());
  auto repo = RepoStatus("github:a/b");
  EXPECT_EQ(repo.phase(), v1::REPO_PHASE_CRAWLING);
  EXPECT_EQ(repo.counters().issues_fetched(), 100);
  EXPECT_EQ(repo.issues_estimated(), 250);
  EXPECT_EQ(repo.cursor().issues_etag(), "\"e1\"");

  clock_.Advance(absl::Seconds(5));
  auto done = Report("w", leases[0]);
  done.mutable_counters()->set_issues_fetched(250);
  done.set_done(true);  // no cursor: the stored one is kept
  ASSERT_TRUE(core_->ReportProgress(done).ok());
  repo = RepoStatus("github:a/b");
  EXPECT_EQ(repo.phase(), v1::REPO_PHASE_IDLE);
  EXPECT_EQ(repo.worker_id(), "");
  EXPECT_EQ(repo.crawls_completed(), 1);
  EXPECT_EQ(repo.counters().issues_fetched(), 250);
  EXPECT_EQ(repo.cursor().issues_etag(), "\"e1\"");
  EXPECT_EQ(FromProto(repo.last_completed_at()), clock_.Now());
  EXPECT_TRUE(Status().quiescent());
  EXPECT_THAT(Acquire("w"), IsEmpty());

  // The worker releases after done: a no-op.
  v1::ReleaseLeaseRequest release;
  release.set_worker_id("w");
  *release.mutable_lease() = req.lease();
  EXPECT_TRUE(core_->ReleaseLease(release).ok());
}

TEST_F(CoreTest, StaleEpochIsFailedPrecondition) {
  Add({Spec("a", "b")});
  Register("w");
  auto leases = Acquire("w");
  ASSERT_EQ(leases.size(), 1u);
  v1::Lease stale = leases[0];
  stale.set_epoch(7);
  auto status = core_->ReportProgress(Report("w", stale)).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("stale lease epoch 7 for github:a/b (current 1)"));
}

TEST_F(CoreTest, DeadWorkerLosesLeaseToAnotherWorker) {
  Add({Spec("a", "b")});
  Register("w1");
  auto first = Acquire("w1");
  ASSERT_EQ(first.size(), 1u);
  Register("w2");

  // w1 goes silent; w2 keeps heartbeating.
  for (int i = 0; i < 6; ++i) {
    clock_.Advance(absl::Seconds(2));
    ASSERT_TRUE(Heartbeat("w2", {})->known());
  }
  auto second = Acquire("w2");
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].epoch(), 2u);
  EXPECT_EQ(second[0].mode(), v1::CRAWL_MODE_FULL);  // the full crawl never completed

  auto report = core_->ReportProgress(Report("w1", first[0])).status();
  EXPECT_EQ(report.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(report.message(), HasSubstr("stale lease epoch 1 for github:a/b (current 2)"));
  auto beat = Heartbeat("w1", first);
  ASSERT_TRUE(beat.ok());
  EXPECT_FALSE(beat->known());
  ASSERT_EQ(beat->revoked_size(), 1);
  EXPECT_EQ(beat->revoked(0).repo(), "github:a/b");
  EXPECT_EQ(beat->revoked(0).epoch(), 1u);
}

TEST_F(CoreTest, HeartbeatRenewsAndUnrenewedLeaseExpires) {
  options_.worker_timeout = absl::Seconds(60);  // isolate lease expiry from worker death
  Reopen();
  Add({Spec("a", "b"), Spec("c", "d")});
  Register("w");
  auto leases = Acquire("w");
  ASSERT_EQ(leases.size(), 2u);
  for (int i = 0; i < 3; ++i) {  // renew only the first lease
    clock_.Advance(absl::Seconds(10));
    auto beat = Heartbeat("w", {leases[0]});
    ASSERT_TRUE(beat.ok());
    EXPECT_THAT(beat->revoked(), IsEmpty());
  }
  EXPECT_EQ(RepoStatus("github:a/b").phase(), v1::REPO_PHASE_CRAWLING);
  EXPECT_EQ(RepoStatus("github:c/d").phase(), v1::REPO_PHASE_PENDING);
  auto beat = Heartbeat("w", leases);
  ASSERT_TRUE(beat.ok());
  EXPECT_TRUE(beat->known());
  ASSERT_EQ(beat->revoked_size(), 1);
  EXPECT_EQ(beat->revoked(0).repo(), "github:c/d");
  auto again = Acquire("w");
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].epoch(), 2u);
}

TEST_F(CoreTest, ErrorFailsThenRetriesAfterBackoff) {
  Add({Spec("a", "b")});
  Register("w");
  auto leases = Acquire("w");
  auto req = Report("w", leases[0]);
  req.set_error("GET /repos/a/b/issues: HTTP 500");
  ASSERT_TRUE(core_->ReportProgress(req).ok());
  auto repo = RepoStatus("github:a/b");
  EXPECT_EQ(repo.phase(), v1::REPO_PHASE_FAILED);
  EXPECT_EQ(repo.last_error(), "GET /repos/a/b/issues: HTTP 500");
  EXPECT_TRUE(Status().quiescent());  // FAILED waiting for its retry is quiescent
  EXPECT_THAT(Acquire("w"), IsEmpty());
  clock_.Advance(absl::Seconds(31));
  Register("w");
  EXPECT_EQ(RepoStatus("github:a/b").phase(), v1::REPO_PHASE_PENDING);
  auto retry = Acquire("w");
  ASSERT_EQ(retry.size(), 1u);
  EXPECT_EQ(retry[0].epoch(), 2u);
  EXPECT_EQ(retry[0].mode(), v1::CRAWL_MODE_FULL);
}

TEST_F(CoreTest, TriggerFullAndIncremental) {
  Add({Spec("a", "b"), Spec("c", "d")});
  Register("w");
  for (const auto& lease : Acquire("w")) {
    auto done = Report("w", lease);
    done.mutable_cursor()->set_issues_etag("etag");
    done.set_done(true);
    ASSERT_TRUE(core_->ReportProgress(done).ok());
  }
  v1::TriggerCrawlRequest trigger;
  trigger.add_repo_slugs("github:A/B");
  auto scheduled = core_->TriggerCrawl(trigger);  // UNSPECIFIED means INCREMENTAL
  ASSERT_TRUE(scheduled.ok()) << scheduled.status();
  EXPECT_THAT(scheduled->scheduled(), ElementsAre("github:a/b"));
  auto leases = Acquire("w");
  ASSERT_EQ(leases.size(), 1u);
  EXPECT_EQ(leases[0].mode(), v1::CRAWL_MODE_INCREMENTAL);
  EXPECT_EQ(leases[0].cursor().issues_etag(), "etag");

  // A trigger during a crawl waits for it; FULL wins over INCREMENTAL.
  v1::TriggerCrawlRequest all;
  all.set_mode(v1::CRAWL_MODE_FULL);
  scheduled = core_->TriggerCrawl(all);
  ASSERT_TRUE(scheduled.ok());
  EXPECT_THAT(scheduled->scheduled(), ElementsAre("github:a/b", "github:c/d"));
  auto next = Acquire("w");
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].repo_slug(), "github:c/d");
  EXPECT_EQ(next[0].mode(), v1::CRAWL_MODE_FULL);
  auto done = Report("w", leases[0]);
  done.set_done(true);
  ASSERT_TRUE(core_->ReportProgress(done).ok());
  auto after = Acquire("w");
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].repo_slug(), "github:a/b");
  EXPECT_EQ(after[0].mode(), v1::CRAWL_MODE_FULL);

  trigger.set_repo_slugs(0, "github:no/such");
  EXPECT_EQ(core_->TriggerCrawl(trigger).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(CoreTest, ReAddKeepsCursorAndSchedulesIncremental) {
  Add({Spec("a", "b")});
  Register("w");
  auto leases = Acquire("w");
  auto done = Report("w", leases[0]);
  done.mutable_cursor()->set_comments_etag("c1");
  done.set_done(true);
  ASSERT_TRUE(core_->ReportProgress(done).ok());
  auto again = Add({Spec("a", "b", 3600)});
  EXPECT_THAT(again.existing(), ElementsAre("github:a/b"));
  EXPECT_THAT(again.added(), IsEmpty());
  auto next = Acquire("w");
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].mode(), v1::CRAWL_MODE_INCREMENTAL);
  EXPECT_EQ(next[0].epoch(), 2u);
  EXPECT_EQ(next[0].cursor().comments_etag(), "c1");
}

TEST_F(CoreTest, RecrawlIntervalMakesRepositoryDue) {
  Add({Spec("a", "b", 3600)});
  Register("w");
  auto done = Report("w", Acquire("w")[0]);
  done.set_done(true);
  ASSERT_TRUE(core_->ReportProgress(done).ok());
  clock_.Advance(absl::Minutes(59));
  Register("w");
  EXPECT_EQ(RepoStatus("github:a/b").phase(), v1::REPO_PHASE_IDLE);
  clock_.Advance(absl::Minutes(1));
  EXPECT_EQ(RepoStatus("github:a/b").phase(), v1::REPO_PHASE_PENDING);
  Register("w");  // silent for a minute: dead, so it registers again
  auto leases = Acquire("w");
  ASSERT_EQ(leases.size(), 1u);
  EXPECT_EQ(leases[0].mode(), v1::CRAWL_MODE_INCREMENTAL);
}

TEST_F(CoreTest, RemoveRevokesLeaseAndEpochsAreNotReused) {
  Add({Spec("a", "b")});
  Register("w");
  auto leases = Acquire("w");
  v1::RemoveRepositoriesRequest remove;
  remove.add_repo_slugs("github:a/b");
  remove.add_repo_slugs("github:not/there");
  auto removed = core_->RemoveRepositories(remove);
  ASSERT_TRUE(removed.ok());
  EXPECT_THAT(removed->removed(), ElementsAre("github:a/b"));
  auto beat = Heartbeat("w", leases);
  ASSERT_EQ(beat->revoked_size(), 1);
  auto report = core_->ReportProgress(Report("w", leases[0])).status();
  EXPECT_EQ(report.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(report.message(), HasSubstr("not in the catalog"));
  EXPECT_THAT(Status().repositories(), IsEmpty());

  Add({Spec("a", "b")});
  auto fresh = Acquire("w");
  ASSERT_EQ(fresh.size(), 1u);
  EXPECT_EQ(fresh[0].epoch(), 2u);  // continues after the removed repository's epoch 1
}

TEST_F(CoreTest, BulkAddOfFiveHundredIsOneQuickCall) {
  std::vector<v1::RepositorySpec> specs;
  for (int i = 0; i < 500; ++i) specs.push_back(Spec("org", "repo" + std::to_string(i)));
  absl::Time start = absl::Now();
  auto resp = Add(specs);
  absl::Duration took = absl::Now() - start;
  EXPECT_EQ(resp.added_size(), 500);
  EXPECT_LT(took, absl::Seconds(2));
  EXPECT_EQ(Status().repositories_size(), 500);
  Reopen();
  EXPECT_EQ(Status().repositories_size(), 500);
}

TEST_F(CoreTest, MaxLeasesZeroMeansFreeCapacity) {
  std::vector<v1::RepositorySpec> specs;
  for (int i = 0; i < 10; ++i) specs.push_back(Spec("o", "r" + std::to_string(i)));
  Add(specs);
  Register("w", 3);
  EXPECT_EQ(Acquire("w", 0).size(), 3u);
  EXPECT_EQ(Acquire("w", 0).size(), 0u);
  EXPECT_EQ(Acquire("w", 2).size(), 2u);
}

TEST_F(CoreTest, MovedRepositoryIsGoneAndNewNameAdded) {
  Add({Spec("old", "name")});
  Register("w");
  auto req = Report("w", Acquire("w")[0]);
  req.set_moved_to("new/name");
  ASSERT_TRUE(core_->ReportProgress(req).ok());
  EXPECT_EQ(RepoStatus("github:old/name").phase(), v1::REPO_PHASE_GONE);
  EXPECT_EQ(RepoStatus("github:new/name").phase(), v1::REPO_PHASE_PENDING);
  auto leases = Acquire("w");
  ASSERT_EQ(leases.size(), 1u);
  EXPECT_EQ(leases[0].repo_slug(), "github:new/name");
}

TEST_F(CoreTest, UnknownOrDeadWorkerCannotAcquire) {
  Add({Spec("a", "b")});
  v1::AcquireLeasesRequest req;
  req.set_worker_id("ghost");
  EXPECT_EQ(core_->AcquireLeases(req).status().code(), absl::StatusCode::kNotFound);
  Register("ghost");
  clock_.Advance(absl::Seconds(30));
  EXPECT_EQ(core_->AcquireLeases(req).status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace issuescope::coordinator::testing

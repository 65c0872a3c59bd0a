// Reopening the coordinator's state from disk (as after kill -9): catalog, epochs, cursors,
// progress and held leases survive.
#include <unistd.h>

#include <filesystem>

#include "common/clock.h"
#include "common/time_util.h"
#include "coordinator/coordinator_core.h"
#include "gtest/gtest.h"

namespace issuescope::coordinator {
namespace {

class ReopenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("coord-reopen-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<CoordinatorCore> Open() {
    auto core = CoordinatorCore::Open(dir_.string(), CoordinatorOptions(), &clock_);
    EXPECT_TRUE(core.ok()) << core.status();
    return core.ok() ? std::move(*core) : nullptr;
  }

  std::filesystem::path dir_;
  FakeClock clock_;
};

v1::ReportProgressRequest Report(const v1::Lease& lease) {
  v1::ReportProgressRequest req;
  req.set_worker_id("w");
  req.mutable_lease()->set_repo(lease.repo_slug());
  req.mutable_lease()->set_epoch(lease.epoch());
  return req;
}

TEST_F(ReopenTest, StateSurvivesReopen) {
  v1::Lease held;
  {
    auto core = Open();
    ASSERT_NE(core, nullptr);
    v1::AddRepositoriesRequest add;
    for (const char* name : {"one", "two"}) {
      auto* spec = add.add_repositories();
      spec->mutable_repo()->set_tracker(v1::TRACKER_GITHUB);
      spec->mutable_repo()->set_owner("o");
      spec->mutable_repo()->set_name(name);
    }
    ASSERT_TRUE(core->AddRepositories(add).ok());
    v1::RegisterWorkerRequest reg;
    reg.set_worker_id("w");
    reg.set_store_address("127.0.0.1:9");
    reg.set_capacity(2);
    ASSERT_TRUE(core->RegisterWorker(reg).ok());
    v1::AcquireLeasesRequest acquire;
    acquire.set_worker_id("w");
    acquire.set_max_leases(2);
    auto leases = core->AcquireLeases(acquire);
    ASSERT_TRUE(leases.ok());
    ASSERT_EQ(leases->leases_size(), 2);
    auto done = Report(leases->leases(0));  // github:o/one
    *done.mutable_cursor()->mutable_issues_since() = ToProto(absl::FromUnixSeconds(1650000000));
    done.mutable_counters()->set_requests(12);
    done.set_done(true);
    ASSERT_TRUE(core->ReportProgress(done).ok());
    held = leases->leases(1);  // github:o/two, still crawling at the "crash"
    // The core is dropped without any shutdown step, as a crash would.
  }
  clock_.Advance(absl::Minutes(5));  // the coordinator was down longer than the lease TTL
  auto core = Open();
  ASSERT_NE(core, nullptr);
  auto status = core->GetStatus(v1::GetStatusRequest());
  ASSERT_TRUE(status.ok());
  ASSERT_EQ(status->repositories_size(), 2);
  const auto& one = status->repositories(0);
  EXPECT_EQ(one.repo_slug(), "github:o/one");
  EXPECT_EQ(one.phase(), v1::REPO_PHASE_IDLE);
  EXPECT_EQ(one.epoch(), 1u);
  EXPECT_EQ(FromProto(one.cursor().issues_since()), absl::FromUnixSeconds(1650000000));
  EXPECT_EQ(one.counters().requests(), 12);
  EXPECT_EQ(one.crawls_completed(), 1);
  const auto& two = status->repositories(1);
  EXPECT_EQ(two.phase(), v1::REPO_PHASE_CRAWLING);
  EXPECT_EQ(two.worker_id(), "w");
  EXPECT_TRUE(status->workers(0).alive());  // holders get a window to reconnect

  // The worker reconnects: its lease is still valid and renewable.
  v1::HeartbeatRequest beat;
  beat.set_worker_id("w");
  beat.add_held()->set_repo(held.repo_slug());
  beat.mutable_held(0)->set_epoch(held.epoch());
  auto renewed = core->Heartbeat(beat);
  ASSERT_TRUE(renewed.ok());
  EXPECT_TRUE(renewed->known());
  EXPECT_EQ(renewed->revoked_size(), 0);
  EXPECT_TRUE(core->ReportProgress(Report(held)).ok());

  // Epochs are never reused: after expiry the next grant is epoch+1.
  clock_.Advance(absl::Seconds(20));
  v1::RegisterWorkerRequest reg;
  reg.set_worker_id("w");
  ASSERT_TRUE(core->RegisterWorker(reg).ok());
  v1::AcquireLeasesRequest acquire;
  acquire.set_worker_id("w");
  acquire.set_max_leases(5);
  auto again = core->AcquireLeases(acquire);
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->leases_size(), 1);
  EXPECT_EQ(again->leases(0).repo_slug(), "github:o/two");
  EXPECT_EQ(again->leases(0).epoch(), held.epoch() + 1);
}

TEST_F(ReopenTest, UnwritableDirectoryIsAClearError) {
  auto core = CoordinatorCore::Open("/proc/no-such-dir/state", CoordinatorOptions(), &clock_);
  ASSERT_FALSE(core.ok());
  EXPECT_NE(core.status().message().find("/proc/no-such-dir/state"), absl::string_view::npos)
      << core.status();
}

TEST_F(ReopenTest, NonPositiveOptionIsRejected) {
  CoordinatorOptions options;
  options.lease_ttl = absl::ZeroDuration();
  auto core = CoordinatorCore::Open(dir_.string(), options, &clock_);
  ASSERT_FALSE(core.ok());
  EXPECT_EQ(core.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(core.status().message().find("lease_ttl"), absl::string_view::npos);
}

}  // namespace
}  // namespace issuescope::coordinator

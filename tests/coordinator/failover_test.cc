// CoordinatorCore: a cursor belongs to the store it was reported for. A repository granted to a
// worker whose store did not set the cursor (failover, or a re-registration with a wiped store)
// gets a FULL crawl, so that store ends up holding the whole repository; a grant back to the
// store that set the cursor stays INCREMENTAL.
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

constexpr char kSlug[] = "github:a/b";

class FailoverTest : public CoreTest {
 protected:
  // RegisterWithStore registers `worker` with an explicit store id.
  void RegisterWithStore(const std::string& worker, const std::string& store_id) {
    v1::RegisterWorkerRequest req;
    req.set_worker_id(worker);
    req.set_store_address("127.0.0.1:7000");
    req.set_store_id(store_id);
    req.set_capacity(4);
    auto resp = core_->RegisterWorker(req);
    ASSERT_TRUE(resp.ok()) << resp.status();
  }

  // TriggerIncremental schedules an incremental re-crawl of kSlug.
  void TriggerIncremental() {
    v1::TriggerCrawlRequest req;
    req.add_repo_slugs(kSlug);
    req.set_mode(v1::CRAWL_MODE_INCREMENTAL);
    auto resp = core_->TriggerCrawl(req);
    ASSERT_TRUE(resp.ok()) << resp.status();
  }

  // Crawl acquires kSlug for `worker`, checks the granted mode, and completes the crawl,
  // reporting `issues_since` (seconds) as the new cursor when it is non-zero.
  void Crawl(const std::string& worker, v1::CrawlMode want_mode, int64_t issues_since,
             v1::Lease* granted = nullptr) {
    auto leases = Acquire(worker);
    ASSERT_EQ(leases.size(), 1u) << worker << " got no lease";
    EXPECT_EQ(leases[0].repo_slug(), kSlug);
    EXPECT_EQ(v1::CrawlMode_Name(leases[0].mode()), v1::CrawlMode_Name(want_mode))
        << "grant to " << worker << " (epoch " << leases[0].epoch() << ")";
    if (granted != nullptr) *granted = leases[0];
    auto done = Report(worker, leases[0]);
    if (issues_since != 0) {
      *done.mutable_cursor()->mutable_issues_since() =
          ToProto(absl::FromUnixSeconds(issues_since));
      done.mutable_cursor()->set_issues_etag(absl::StrCat("\"", worker, issues_since, "\""));
    }
    done.set_done(true);
    ASSERT_TRUE(core_->ReportProgress(done).ok());
  }

  // OutliveOthers advances the clock past worker_timeout and the home grace that follows it
  // (10 s + 30 s by default: until then a dead worker's repositories wait for it) while only
  // `survivor` heartbeats.
  void OutliveOthers(const std::string& survivor) {
    for (int i = 0; i < 21; ++i) {
      clock_.Advance(absl::Seconds(2));
      auto beat = Heartbeat(survivor, {});
      ASSERT_TRUE(beat.ok()) << beat.status();
      ASSERT_TRUE(beat->known()) << survivor;
    }
  }
};

TEST_F(FailoverTest, NewOwnerStoreGetsFullCrawlThenIncremental) {
  Add({Spec("a", "b")});
  RegisterWithStore("wa", "store-a");
  ASSERT_NO_FATAL_FAILURE(Crawl("wa", v1::CRAWL_MODE_FULL, 1600000000));

  // A dies; B is the only live worker. Its store has never seen the repository.
  RegisterWithStore("wb", "store-b");
  ASSERT_NO_FATAL_FAILURE(OutliveOthers("wb"));
  ASSERT_NO_FATAL_FAILURE(TriggerIncremental());
  v1::Lease to_b;
  ASSERT_NO_FATAL_FAILURE(Crawl("wb", v1::CRAWL_MODE_FULL, 1700000000, &to_b));
  EXPECT_EQ(to_b.epoch(), 2u);

  // The store id of the cursor is durable: after a restart B's next grant is INCREMENTAL from
  // its own cursor.
  Reopen();
  RegisterWithStore("wb", "store-b");
  ASSERT_NO_FATAL_FAILURE(TriggerIncremental());
  v1::Lease again;
  ASSERT_NO_FATAL_FAILURE(Crawl("wb", v1::CRAWL_MODE_INCREMENTAL, 0, &again));
  EXPECT_EQ(FromProto(again.cursor().issues_since()), absl::FromUnixSeconds(1700000000));
  EXPECT_EQ(again.cursor().issues_etag(), "\"wb1700000000\"");

  // A comes back with a wiped store (new store id) and B dies: A gets the repository back and,
  // its store being empty, crawls it in full.
  RegisterWithStore("wa", "store-a2");
  ASSERT_NO_FATAL_FAILURE(OutliveOthers("wa"));
  ASSERT_NO_FATAL_FAILURE(TriggerIncremental());
  ASSERT_NO_FATAL_FAILURE(Crawl("wa", v1::CRAWL_MODE_FULL, 1700000100));
  // From then on A's new store owns the cursor.
  ASSERT_NO_FATAL_FAILURE(TriggerIncremental());
  ASSERT_NO_FATAL_FAILURE(Crawl("wa", v1::CRAWL_MODE_INCREMENTAL, 0));
}

TEST_F(FailoverTest, ReRegistrationKeepsIncrementalOnlyWithTheSameStore) {
  struct Case {
    const char* name;
    const char* store_after;
    v1::CrawlMode want;
  };
  const Case cases[] = {
      {"same store (process restart)", "store-a", v1::CRAWL_MODE_INCREMENTAL},
      {"new store (store wiped)", "store-a-new", v1::CRAWL_MODE_FULL},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    core_.reset();
    SetUp();  // a fresh in-memory state per case
    Add({Spec("a", "b")});
    RegisterWithStore("wa", "store-a");
    ASSERT_NO_FATAL_FAILURE(Crawl("wa", v1::CRAWL_MODE_FULL, 1600000000));
    RegisterWithStore("wa", c.store_after);
    ASSERT_NO_FATAL_FAILURE(TriggerIncremental());
    ASSERT_NO_FATAL_FAILURE(Crawl("wa", c.want, 0));
  }
}

TEST_F(FailoverTest, FailoverDuringCrawlAndRecrawlIntervalAlsoGoFull) {
  // A recrawl made due by the interval (not a trigger) follows the same rule, and so does a
  // crawl whose worker died mid-way after reporting a cursor.
  Add({Spec("a", "b", 3600)});
  RegisterWithStore("wa", "store-a");
  ASSERT_NO_FATAL_FAILURE(Crawl("wa", v1::CRAWL_MODE_FULL, 1600000000));
  clock_.Advance(absl::Hours(1));
  RegisterWithStore("wa", "store-a");  // silent for an hour: it re-registers, same store
  auto leases = Acquire("wa");
  ASSERT_EQ(leases.size(), 1u);
  EXPECT_EQ(leases[0].mode(), v1::CRAWL_MODE_INCREMENTAL);
  auto progress = Report("wa", leases[0]);
  *progress.mutable_cursor()->mutable_issues_since() = ToProto(absl::FromUnixSeconds(1650000000));
  ASSERT_TRUE(core_->ReportProgress(progress).ok());

  RegisterWithStore("wb", "store-b");
  ASSERT_NO_FATAL_FAILURE(OutliveOthers("wb"));  // A dies holding the lease
  auto taken = Acquire("wb");
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(taken[0].mode(), v1::CRAWL_MODE_FULL);
  EXPECT_EQ(taken[0].epoch(), 3u);
  // B fails before reporting any cursor: the cursor is still A's, so the retry is FULL too.
  auto failed = Report("wb", taken[0]);
  failed.set_error("tracker unreachable");
  ASSERT_TRUE(core_->ReportProgress(failed).ok());
  for (int i = 0; i < 3; ++i) ASSERT_NO_FATAL_FAILURE(OutliveOthers("wb"));  // back-off passes
  auto retry = Acquire("wb");
  ASSERT_EQ(retry.size(), 1u);
  EXPECT_EQ(retry[0].mode(), v1::CRAWL_MODE_FULL);
}

}  // namespace
}  // namespace issuescope::coordinator::testing

// IssueStore after a corrupt write-ahead log (issue 16, defect 10): RocksDB's point-in-time
// recovery cuts the log at the damage, so the store opens with an earlier state. That loss must
// not be silent: the store reports DATA_LOSS, keeps what was before the damage, and takes a new
// store id, so the coordinator grants its repositories a FULL crawl (no cursor, no ETag 304s)
// and what was lost is fetched again.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/time_util.h"
#include "coordinator/coordinator_core.h"
#include "crawler/issue_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rocksdb/env.h"

namespace issuescope::crawler {
namespace {

using ::testing::HasSubstr;

constexpr char kStorePath[] = "/store";
const char* const kRepos[] = {"github:octo/demo", "github:octo/other"};
constexpr int kPages = 30;  // per repository, each one synced WriteBatch
constexpr int kPerPage = 10;

v1::Issue MakeIssue(int64_t number, int64_t updated_s) {
  v1::Issue issue;
  issue.mutable_repo()->set_tracker(v1::TRACKER_GITHUB);
  issue.mutable_repo()->set_owner("octo");
  issue.mutable_repo()->set_name("demo");
  issue.set_number(number);
  issue.set_key(absl::StrCat(number));
  issue.set_title(absl::StrCat("issue ", number, " with a title long enough to fill the log"));
  issue.mutable_updated_at()->set_seconds(updated_s);
  return issue;
}

v1::Comment MakeComment(int64_t issue, int64_t id, int64_t created_s) {
  v1::Comment comment;
  comment.set_issue_number(issue);
  comment.set_id(id);
  comment.set_body(absl::StrCat("comment ", id, " on issue ", issue));
  comment.mutable_created_at()->set_seconds(created_s);
  comment.mutable_updated_at()->set_seconds(created_s);
  return comment;
}

class IssueStoreRecoveryTest : public ::testing::Test {
 protected:
  absl::StatusOr<std::unique_ptr<IssueStore>> Open() {
    StoreOptions options;
    options.env = env_.get();
    return IssueStore::Open(kStorePath, options);
  }

  // Fill writes kPages pages of issues and of comments for each repository, one batch each.
  void Fill(IssueStore* store) {
    for (int page = 0; page < kPages; ++page) {
      for (const char* repo : kRepos) {
        std::vector<v1::Issue> issues;
        std::vector<v1::Comment> comments;
        for (int i = 0; i < kPerPage; ++i) {
          const int64_t number = page * kPerPage + i + 1;
          issues.push_back(MakeIssue(number, 1000 + number));
          comments.push_back(MakeComment(number, number * 10, 1000 + number));
        }
        ASSERT_TRUE(store->ApplyIssues(repo, 1, issues).ok());
        ASSERT_TRUE(store->ApplyComments(repo, 1, comments).ok());
      }
    }
  }

  // CorruptWal flips 16 bytes in the middle of the largest write-ahead log file.
  void CorruptWal() {
    std::vector<std::string> children;
    ASSERT_TRUE(env_->GetChildren(kStorePath, &children).ok());
    std::string wal;
    uint64_t wal_size = 0;
    for (const std::string& name : children) {
      if (!absl::EndsWith(name, ".log")) continue;
      uint64_t size = 0;
      ASSERT_TRUE(env_->GetFileSize(absl::StrCat(kStorePath, "/", name), &size).ok());
      if (size > wal_size) {
        wal = absl::StrCat(kStorePath, "/", name);
        wal_size = size;
      }
    }
    ASSERT_FALSE(wal.empty()) << "no write-ahead log in the store";
    ASSERT_GT(wal_size, 4096u);
    std::string data;
    ASSERT_TRUE(rocksdb::ReadFileToString(env_.get(), wal, &data).ok());
    for (size_t i = data.size() / 2; i < data.size() / 2 + 16; ++i) data[i] ^= 0x5a;
    ASSERT_TRUE(rocksdb::WriteStringToFile(env_.get(), data, wal, /*should_sync=*/true).ok());
  }

  std::unique_ptr<rocksdb::Env> env_{rocksdb::NewMemEnv(rocksdb::Env::Default())};
};

TEST_F(IssueStoreRecoveryTest, CleanReopenReportsNoLoss) {
  std::string id;
  {
    auto store = Open();
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_NO_FATAL_FAILURE(Fill(store->get()));
    id = (*store)->store_id();
  }
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_TRUE((*store)->data_loss().ok()) << (*store)->data_loss();
  EXPECT_FALSE((*store)->data_loss_at_open());
  EXPECT_EQ((*store)->store_id(), id);
  EXPECT_EQ((*store)->Info().issues(), 2 * kPages * kPerPage);
}

TEST_F(IssueStoreRecoveryTest, CorruptWalIsReportedAndForcesFullCrawl) {
  std::string old_id;
  {
    auto store = Open();
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_NO_FATAL_FAILURE(Fill(store->get()));
    old_id = (*store)->store_id();
  }
  ASSERT_NO_FATAL_FAILURE(CorruptWal());

  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status();
  // The loss is reported, naming the log and the store ids.
  EXPECT_TRUE((*store)->data_loss_at_open());
  EXPECT_EQ((*store)->data_loss().code(), absl::StatusCode::kDataLoss) << (*store)->data_loss();
  EXPECT_THAT((*store)->data_loss().message(), HasSubstr("write-ahead log"));
  EXPECT_THAT((*store)->data_loss().message(), HasSubstr(old_id));
  EXPECT_THAT((*store)->data_loss().message(), HasSubstr((*store)->store_id()));
  // A new store id: the coordinator's cursors (and ETags) of the old id no longer apply here.
  EXPECT_NE((*store)->store_id(), old_id);

  // What came before the damage is kept, consistently: counts, records and change log agree.
  v1::StoreInfo info = (*store)->Info();
  EXPECT_GT(info.issues(), 0);
  EXPECT_LT(info.issues(), 2 * kPages * kPerPage) << "the corruption lost nothing?";
  int64_t scanned = 0;
  for (const char* repo : kRepos) {
    ASSERT_TRUE((*store)
                    ->ScanRepository(repo,
                                     [&](const v1::Issue&) {
                                       ++scanned;
                                       return true;
                                     })
                    .ok());
  }
  EXPECT_EQ(scanned, info.issues());
  auto first = (*store)->GetIssue(kRepos[0], 1);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->comments_size(), 1);
  EXPECT_GT(info.last_seq(), 0u);

  // The indexer reads the new id's feed from seq 0: every kept record is in it.
  uint64_t from = 0;
  int64_t events = 0;
  while (true) {
    auto batch = (*store)->ReadChanges(from, 1000);
    ASSERT_TRUE(batch.ok()) << batch.status();
    if (batch->last_seq() == from) break;
    EXPECT_EQ(batch->store_id(), (*store)->store_id());
    events += batch->events_size();
    from = batch->last_seq();
  }
  EXPECT_EQ(events, info.issues());

  // New writes continue the log, and a later open keeps the new id and the report.
  ASSERT_TRUE((*store)->ApplyIssues(kRepos[0], 2, {MakeIssue(9999, 9999)}).ok());
  const std::string new_id = (*store)->store_id();
  store->reset();
  auto again = Open();
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->store_id(), new_id);
  EXPECT_FALSE((*again)->data_loss_at_open());
  EXPECT_EQ((*again)->data_loss().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT((*again)->data_loss().message(), HasSubstr(old_id));
}

// The whole path: a repository crawled into the store, its WAL corrupted, the worker back with
// the store's new id, and the next re-crawl — incremental as scheduled — granted FULL.
TEST_F(IssueStoreRecoveryTest, RepositoriesOfALossyStoreAreCrawledInFull) {
  FakeClock clock;
  coordinator::CoordinatorOptions coordinator_options;
  coordinator_options.env = env_.get();
  auto core = coordinator::CoordinatorCore::Open("/coord", coordinator_options, &clock);
  ASSERT_TRUE(core.ok()) << core.status();
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status();

  auto register_worker = [&](const std::string& store_id) {
    v1::RegisterWorkerRequest req;
    req.set_worker_id("w");
    req.set_store_address("127.0.0.1:7000");
    req.set_store_id(store_id);
    req.set_capacity(4);
    ASSERT_TRUE((*core)->RegisterWorker(req).ok());
  };
  // crawl takes the lease, checks its mode, and reports the crawl done with a cursor and ETags.
  auto crawl = [&](v1::CrawlMode want) {
    v1::AcquireLeasesRequest acquire;
    acquire.set_worker_id("w");
    acquire.set_max_leases(10);
    auto leases = (*core)->AcquireLeases(acquire);
    ASSERT_TRUE(leases.ok()) << leases.status();
    ASSERT_EQ(leases->leases_size(), 1);
    EXPECT_EQ(v1::CrawlMode_Name(leases->leases(0).mode()), v1::CrawlMode_Name(want));
    v1::ReportProgressRequest done;
    done.set_worker_id("w");
    done.mutable_lease()->set_repo(leases->leases(0).repo_slug());
    done.mutable_lease()->set_epoch(leases->leases(0).epoch());
    *done.mutable_cursor()->mutable_issues_since() = ToProto(absl::FromUnixSeconds(1600000000));
    done.mutable_cursor()->set_issues_etag("\"etag\"");
    done.set_done(true);
    ASSERT_TRUE((*core)->ReportProgress(done).ok());
  };
  auto trigger_incremental = [&]() {
    v1::TriggerCrawlRequest req;
    req.add_repo_slugs(kRepos[0]);
    req.set_mode(v1::CRAWL_MODE_INCREMENTAL);
    ASSERT_TRUE((*core)->TriggerCrawl(req).ok());
  };

  v1::AddRepositoriesRequest add;
  v1::RepositorySpec* spec = add.add_repositories();
  spec->mutable_repo()->set_tracker(v1::TRACKER_GITHUB);
  spec->mutable_repo()->set_owner("octo");
  spec->mutable_repo()->set_name("demo");
  ASSERT_TRUE((*core)->AddRepositories(add).ok());
  ASSERT_NO_FATAL_FAILURE(register_worker((*store)->store_id()));
  ASSERT_NO_FATAL_FAILURE(Fill(store->get()));
  ASSERT_NO_FATAL_FAILURE(crawl(v1::CRAWL_MODE_FULL));
  // Without a loss, the re-crawl is incremental (from the cursor, with its ETags).
  ASSERT_NO_FATAL_FAILURE(trigger_incremental());
  ASSERT_NO_FATAL_FAILURE(crawl(v1::CRAWL_MODE_INCREMENTAL));

  // The worker restarts on a corrupt log and registers its store again.
  store->reset();
  ASSERT_NO_FATAL_FAILURE(CorruptWal());
  store = Open();
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_EQ((*store)->data_loss().code(), absl::StatusCode::kDataLoss);
  ASSERT_NO_FATAL_FAILURE(register_worker((*store)->store_id()));
  ASSERT_NO_FATAL_FAILURE(trigger_incremental());
  ASSERT_NO_FATAL_FAILURE(crawl(v1::CRAWL_MODE_FULL));
}

}  // namespace
}  // namespace issuescope::crawler

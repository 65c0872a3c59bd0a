// Tests of the crawler's IssueStore: idempotent versioned writes, comments, fencing, the change
// log (coalescing, bounds, positions), tombstones, recovery on reopen and corrupt data.
#include "crawler/issue_store.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "rocksdb/db.h"
#include "rocksdb/env.h"

namespace issuescope::crawler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kRepo[] = "github:octo/demo";
constexpr char kOtherRepo[] = "github:octo/other";

v1::Issue MakeIssue(int64_t number, int64_t updated_s, const std::string& title) {
  v1::Issue issue;
  issue.mutable_repo()->set_tracker(v1::TRACKER_GITHUB);
  issue.mutable_repo()->set_owner("octo");
  issue.mutable_repo()->set_name("demo");
  issue.set_number(number);
  issue.set_key(absl::StrCat(number));
  issue.set_title(title);
  issue.mutable_updated_at()->set_seconds(updated_s);
  issue.mutable_fetched_at()->set_seconds(updated_s + 5);
  return issue;
}

v1::Comment MakeComment(int64_t issue, int64_t id, int64_t created_s, const std::string& body) {
  v1::Comment comment;
  comment.set_issue_number(issue);
  comment.set_id(id);
  comment.set_body(body);
  comment.mutable_created_at()->set_seconds(created_s);
  comment.mutable_updated_at()->set_seconds(created_s);
  return comment;
}

std::string BE64(uint64_t v) {
  std::string out;
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
  return out;
}

std::vector<int64_t> EventNumbers(const v1::ChangeBatch& batch) {
  std::vector<int64_t> numbers;
  for (const auto& e : batch.events()) numbers.push_back(e.number());
  return numbers;
}

std::vector<uint64_t> EventSeqs(const v1::ChangeBatch& batch) {
  std::vector<uint64_t> seqs;
  for (const auto& e : batch.events()) seqs.push_back(e.seq());
  return seqs;
}

class IssueStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }

  void Reopen() {
    store_.reset();
    StoreOptions options;
    options.env = env_.get();
    auto store = IssueStore::Open("/store", options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  StoreWriteCounts Apply(const std::vector<v1::Issue>& issues, uint64_t epoch = 1) {
    auto result = store_->ApplyIssues(kRepo, epoch, issues);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : StoreWriteCounts{};
  }

  // Corrupt closes the store, writes `value` at `key` of column family `family` directly, and
  // reopens the store.
  void Corrupt(const std::string& family, const std::string& key, const std::string& value) {
    store_.reset();
    rocksdb::DBOptions options;
    options.env = env_.get();
    std::vector<rocksdb::ColumnFamilyDescriptor> families;
    for (const char* name : {"default", "issues", "comments", "changes", "meta", "raw"}) {
      families.emplace_back(name, rocksdb::ColumnFamilyOptions());
    }
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(options, "/store", families, &handles, &db).ok());
    int index = 0;
    for (size_t i = 0; i < families.size(); ++i) {
      if (families[i].name == family) index = static_cast<int>(i);
    }
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), handles[index], key, value).ok());
    for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
    delete db;
    Reopen();
  }

  std::unique_ptr<rocksdb::Env> env_{rocksdb::NewMemEnv(rocksdb::Env::Default())};
  std::unique_ptr<IssueStore> store_;
};

TEST_F(IssueStoreTest, NewIssueIsStoredWithOneChange) {
  EXPECT_EQ(store_->last_seq(), 0u);
  StoreWriteCounts r = Apply({MakeIssue(7, 100, "crash in matmul")});
  EXPECT_EQ(r.stored, 1);
  EXPECT_EQ(r.unchanged, 0);
  EXPECT_EQ(store_->last_seq(), 1u);
  auto got = store_->GetIssue(kRepo, 7);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->issue().title(), "crash in matmul");
  auto batch = store_->ReadChanges(0, 10);
  ASSERT_TRUE(batch.ok()) << batch.status();
  ASSERT_EQ(batch->events_size(), 1);
  EXPECT_EQ(batch->events(0).kind(), v1::CHANGE_KIND_UPSERT);
  EXPECT_EQ(batch->events(0).repo_slug(), kRepo);
  EXPECT_EQ(batch->events(0).current().issue().title(), "crash in matmul");
  EXPECT_EQ(batch->store_id(), store_->store_id());
  EXPECT_GE(store_->store_id().size(), 16u);
}

TEST_F(IssueStoreTest, SamePageTwiceChangesNothing) {
  std::vector<v1::Issue> page = {MakeIssue(1, 100, "a"), MakeIssue(2, 100, "b")};
  EXPECT_EQ(Apply(page).stored, 2);
  EXPECT_EQ(store_->last_seq(), 2u);
  // A re-fetch differs only in fetched_at: still no change.
  for (auto& issue : page) issue.mutable_fetched_at()->set_seconds(999);
  StoreWriteCounts again = Apply(page);
  EXPECT_EQ(again.stored, 0);
  EXPECT_EQ(again.unchanged, 2);
  EXPECT_EQ(store_->last_seq(), 2u);
  EXPECT_EQ(store_->Info().issues(), 2);
}

TEST_F(IssueStoreTest, VersionRules) {
  struct Case {
    const char* name;
    int64_t incoming_updated;
    const char* incoming_title;
    bool stored;
    const char* final_title;
  };
  const Case cases[] = {
      {"older never overwrites", 50, "old", false, "current"},
      {"newer overwrites", 150, "new", true, "new"},
      {"equal and identical is skipped", 100, "current", false, "current"},
      {"equal with other content: later fetch wins", 100, "edited", true, "edited"},
  };
  int64_t number = 1;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Apply({MakeIssue(number, 100, "current")});
    uint64_t before = store_->last_seq();
    StoreWriteCounts r = Apply({MakeIssue(number, c.incoming_updated, c.incoming_title)});
    EXPECT_EQ(r.stored, c.stored ? 1 : 0);
    EXPECT_EQ(store_->last_seq(), before + (c.stored ? 1 : 0));
    EXPECT_EQ(store_->GetIssue(kRepo, number)->issue().title(), c.final_title);
    ++number;
  }
}

TEST_F(IssueStoreTest, DuplicatesWithinOnePageCompareAgainstEachOther) {
  StoreWriteCounts r = Apply({MakeIssue(1, 200, "newer"), MakeIssue(1, 100, "older"),
                         MakeIssue(1, 300, "newest")});
  EXPECT_EQ(r.stored, 2);
  EXPECT_EQ(r.unchanged, 1);
  EXPECT_EQ(store_->GetIssue(kRepo, 1)->issue().title(), "newest");
  EXPECT_EQ(store_->Info().issues(), 1);
}

TEST_F(IssueStoreTest, CommentsAreKeyedAndAttachedOldestFirst) {
  Apply({MakeIssue(1, 100, "a"), MakeIssue(2, 100, "b")});
  // Ids out of creation order, and a comment of another issue and another repository.
  auto r = store_->ApplyComments(kRepo, 1,
                                 {MakeComment(1, 30, 300, "third"), MakeComment(1, 10, 100, "first"),
                                  MakeComment(1, 50, 200, "second"), MakeComment(2, 20, 100, "x")});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->stored, 4);
  ASSERT_TRUE(store_->ApplyComments(kOtherRepo, 1, {MakeComment(1, 99, 1, "elsewhere")}).ok());
  auto got = store_->GetIssue(kRepo, 1);
  ASSERT_TRUE(got.ok()) << got.status();
  std::vector<std::string> bodies;
  for (const auto& c : got->comments()) bodies.push_back(c.body());
  EXPECT_THAT(bodies, ElementsAre("first", "second", "third"));
  EXPECT_EQ(store_->GetIssue(kRepo, 2)->comments_size(), 1);
  EXPECT_EQ(store_->Info().comments(), 5);

  // Comments follow the same version rules: edited wins, a replay changes nothing.
  auto edit = store_->ApplyComments(kRepo, 1, {MakeComment(1, 30, 300, "third, edited"),
                                               MakeComment(1, 10, 100, "first")});
  ASSERT_TRUE(edit.ok());
  EXPECT_EQ(edit->stored, 1);
  EXPECT_EQ(edit->unchanged, 1);
  EXPECT_EQ(store_->GetIssue(kRepo, 1)->comments(2).body(), "third, edited");
}

TEST_F(IssueStoreTest, CommentChangeNamesItsIssue) {
  Apply({MakeIssue(4, 100, "a")});
  ASSERT_TRUE(store_->ApplyComments(kRepo, 1, {MakeComment(4, 1, 100, "hi")}).ok());
  auto batch = store_->ReadChanges(1, 10);
  ASSERT_TRUE(batch.ok());
  ASSERT_EQ(batch->events_size(), 1);
  EXPECT_EQ(batch->events(0).number(), 4);
  EXPECT_EQ(batch->events(0).current().issue().title(), "a");
  EXPECT_EQ(batch->events(0).current().comments_size(), 1);
}

TEST_F(IssueStoreTest, CommentsBeforeTheirIssueStillAdvanceTheFeed) {
  ASSERT_TRUE(store_->ApplyComments(kRepo, 1, {MakeComment(9, 1, 100, "early")}).ok());
  auto batch = store_->ReadChanges(0, 10);
  ASSERT_TRUE(batch.ok());
  ASSERT_EQ(batch->events_size(), 1);
  EXPECT_FALSE(batch->events(0).current().has_issue());
  EXPECT_EQ(batch->events(0).current().comments_size(), 1);
  EXPECT_EQ(batch->last_seq(), 1u);
  EXPECT_EQ(store_->GetIssue(kRepo, 9).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(IssueStoreTest, FencingRejectsStaleEpochsAndWritesNothing) {
  ASSERT_TRUE(store_->ApplyIssues(kRepo, 5, {MakeIssue(1, 100, "v1")}).ok());
  uint64_t seq = store_->last_seq();
  auto stale = store_->ApplyIssues(kRepo, 4, {MakeIssue(1, 200, "stale"), MakeIssue(2, 1, "n")});
  EXPECT_EQ(stale.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(stale.status().message()), HasSubstr("epoch 4"));
  EXPECT_EQ(store_->ApplyComments(kRepo, 4, {MakeComment(1, 1, 1, "c")}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->MarkDeleted(kRepo, 4, 1).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->last_seq(), seq);
  EXPECT_EQ(store_->GetIssue(kRepo, 1)->issue().title(), "v1");
  EXPECT_EQ(store_->GetIssue(kRepo, 2).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(store_->GetIssue(kRepo, 1)->comments().empty());

  // Equal epoch is accepted; a higher one raises the fence even when nothing changes.
  EXPECT_TRUE(store_->ApplyIssues(kRepo, 5, {MakeIssue(1, 100, "v1")}).ok());
  EXPECT_TRUE(store_->ApplyIssues(kRepo, 6, {}).ok());
  EXPECT_EQ(store_->ApplyIssues(kRepo, 5, {}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  // Epochs are per repository.
  EXPECT_TRUE(store_->ApplyIssues(kOtherRepo, 1, {MakeIssue(1, 1, "o")}).ok());
  // The fence survives a reopen.
  Reopen();
  EXPECT_EQ(store_->ApplyIssues(kRepo, 5, {}).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(IssueStoreTest, ReadChangesCoalescesPerIssue) {
  Apply({MakeIssue(1, 100, "a")});  // seq 1
  Apply({MakeIssue(2, 100, "b")});  // seq 2
  Apply({MakeIssue(1, 200, "a2")});  // seq 3
  ASSERT_TRUE(store_->ApplyComments(kRepo, 1, {MakeComment(2, 5, 1, "c")}).ok());  // seq 4
  auto batch = store_->ReadChanges(0, 10);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_THAT(EventNumbers(*batch), ElementsAre(1, 2));
  EXPECT_THAT(EventSeqs(*batch), ElementsAre(3u, 4u));
  EXPECT_EQ(batch->last_seq(), 4u);
  EXPECT_EQ(batch->events(0).current().issue().title(), "a2");
  EXPECT_EQ(batch->events(1).current().comments_size(), 1);
}

TEST_F(IssueStoreTest, ReadChangesBoundsAndPositions) {
  Apply({MakeIssue(1, 100, "a")});  // seq 1
  Apply({MakeIssue(1, 200, "a")});  // seq 2
  Apply({MakeIssue(2, 100, "b")});  // seq 3
  Apply({MakeIssue(3, 100, "c")});  // seq 4
  Apply({MakeIssue(1, 300, "a")});  // seq 5
  struct Case {
    uint64_t from;
    int max;
    std::vector<int64_t> numbers;
    std::vector<uint64_t> seqs;
    uint64_t last;
  };
  const Case cases[] = {
      {0, 2, {1, 2}, {2, 3}, 3},        // stops before the third distinct issue
      {3, 2, {3, 1}, {4, 5}, 5},        // resumes where the previous batch ended
      {0, 1, {1}, {2}, 2},              // coalescing within a single-event batch
      {0, 100, {2, 3, 1}, {3, 4, 5}, 5},  // events ordered by their highest seq
      {5, 10, {}, {}, 5},               // nothing new: last_seq == from_seq
      {42, 10, {}, {}, 42},             // beyond the end
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat("from=", c.from, " max=", c.max));
    auto batch = store_->ReadChanges(c.from, c.max);
    ASSERT_TRUE(batch.ok()) << batch.status();
    EXPECT_EQ(EventNumbers(*batch), c.numbers);
    EXPECT_EQ(EventSeqs(*batch), c.seqs);
    EXPECT_EQ(batch->last_seq(), c.last);
  }
  EXPECT_EQ(store_->ReadChanges(0, 0).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(IssueStoreTest, TombstonesAreKeptAndEmittedAsDeletes) {
  Apply({MakeIssue(1, 100, "doomed")});
  ASSERT_TRUE(store_->ApplyComments(kRepo, 1, {MakeComment(1, 1, 1, "c")}).ok());
  ASSERT_TRUE(store_->MarkDeleted(kRepo, 1, 1).ok());
  uint64_t seq = store_->last_seq();
  EXPECT_EQ(seq, 3u);
  auto got = store_->GetIssue(kRepo, 1);
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->issue().deleted());
  EXPECT_EQ(got->issue().title(), "doomed");
  // Stamped when it was seen gone: the indexer weighs later copies against that time.
  const int64_t now = absl::ToUnixSeconds(absl::Now());
  EXPECT_GE(got->issue().fetched_at().seconds(), now - 60);
  EXPECT_LE(got->issue().fetched_at().seconds(), now + 1);
  auto batch = store_->ReadChanges(0, 10);
  ASSERT_TRUE(batch.ok());
  ASSERT_EQ(batch->events_size(), 1);
  EXPECT_EQ(batch->events(0).kind(), v1::CHANGE_KIND_DELETE);
  EXPECT_TRUE(batch->events(0).current().issue().deleted());

  // Deleting again is a no-op; an equal-version re-fetch does not resurrect; a newer one does.
  ASSERT_TRUE(store_->MarkDeleted(kRepo, 1, 1).ok());
  EXPECT_EQ(store_->last_seq(), seq);
  EXPECT_EQ(Apply({MakeIssue(1, 100, "doomed")}).stored, 0);
  EXPECT_TRUE(store_->GetIssue(kRepo, 1)->issue().deleted());
  EXPECT_EQ(Apply({MakeIssue(1, 101, "back")}).stored, 1);
  EXPECT_FALSE(store_->GetIssue(kRepo, 1)->issue().deleted());
  auto after = store_->ReadChanges(seq, 10);
  ASSERT_EQ(after->events_size(), 1);
  EXPECT_EQ(after->events(0).kind(), v1::CHANGE_KIND_UPSERT);

  // An issue never stored gets a bare tombstone.
  ASSERT_TRUE(store_->MarkDeleted(kRepo, 1, 77).ok());
  auto bare = store_->GetIssue(kRepo, 77);
  ASSERT_TRUE(bare.ok());
  EXPECT_TRUE(bare->issue().deleted());
  EXPECT_EQ(bare->issue().repo().owner(), "octo");
  EXPECT_EQ(store_->Info().issues(), 2);
}

TEST_F(IssueStoreTest, ScanRepositoryInNumberOrderAndStopsEarly) {
  Apply({MakeIssue(300, 1, "c"), MakeIssue(2, 1, "a"), MakeIssue(10, 1, "b")});
  ASSERT_TRUE(store_->ApplyIssues(kOtherRepo, 1, {MakeIssue(5, 1, "x")}).ok());
  std::vector<int64_t> numbers;
  ASSERT_TRUE(store_->ScanRepository(kRepo, [&](const v1::Issue& i) {
    numbers.push_back(i.number());
    return true;
  }).ok());
  EXPECT_THAT(numbers, ElementsAre(2, 10, 300));
  numbers.clear();
  ASSERT_TRUE(store_->ScanRepository(kRepo, [&](const v1::Issue& i) {
    numbers.push_back(i.number());
    return false;
  }).ok());
  EXPECT_THAT(numbers, ElementsAre(2));
}

TEST_F(IssueStoreTest, BadArgumentsAreRejected) {
  EXPECT_EQ(store_->ApplyIssues("", 1, {MakeIssue(1, 1, "a")}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->ApplyIssues(kRepo, 1, {MakeIssue(1, 1, "a"), MakeIssue(0, 1, "zero")})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->ApplyComments(kRepo, 1, {MakeComment(1, -3, 1, "c")}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->GetIssue(kRepo, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->MarkDeleted(std::string("a\0b", 3), 1, 1).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->last_seq(), 0u);
}

TEST_F(IssueStoreTest, ReopenInMemoryRecoversSeqIdAndCounts) {
  Apply({MakeIssue(1, 1, "a"), MakeIssue(2, 1, "b")});
  ASSERT_TRUE(store_->ApplyComments(kRepo, 1, {MakeComment(1, 1, 1, "c")}).ok());
  std::string id = store_->store_id();
  Reopen();
  EXPECT_EQ(store_->store_id(), id);
  v1::StoreInfo info = store_->Info();
  EXPECT_EQ(info.last_seq(), 3u);
  EXPECT_EQ(info.issues(), 2);
  EXPECT_EQ(info.comments(), 1);
  Apply({MakeIssue(3, 1, "c")});
  EXPECT_EQ(store_->last_seq(), 4u);
}

TEST(IssueStoreDiskTest, ReopenOnDiskRecoversEverything) {
  std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                              absl::StrCat("issue_store_test_", ::getpid());
  std::filesystem::remove_all(dir);
  std::string id;
  {
    auto store = IssueStore::Open(dir.string());
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE((*store)->ApplyIssues(kRepo, 3, {MakeIssue(1, 1, "a")}).ok());
    ASSERT_TRUE((*store)->MarkDeleted(kRepo, 3, 1).ok());
    id = (*store)->store_id();
  }
  {
    auto store = IssueStore::Open(dir.string());
    ASSERT_TRUE(store.ok()) << store.status();
    EXPECT_EQ((*store)->store_id(), id);
    EXPECT_EQ((*store)->last_seq(), 2u);
    EXPECT_TRUE((*store)->GetIssue(kRepo, 1)->issue().deleted());
    EXPECT_EQ((*store)->ApplyIssues(kRepo, 2, {}).status().code(),
              absl::StatusCode::kFailedPrecondition);
  }
  // A missing store is not created when create_if_missing is false.
  StoreOptions no_create;
  no_create.create_if_missing = false;
  EXPECT_FALSE(IssueStore::Open((dir / "absent").string(), no_create).ok());
  std::filesystem::remove_all(dir);
}

TEST_F(IssueStoreTest, CorruptIssueValueIsDataLoss) {
  Apply({MakeIssue(1, 1, "a")});
  Corrupt("issues", std::string(kRepo) + std::string(1, '\0') + BE64(1), "\xff\xff garbage");
  auto got = store_->GetIssue(kRepo, 1);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("github:octo/demo#1"));
  EXPECT_EQ(store_->ReadChanges(0, 10).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(store_->ApplyIssues(kRepo, 1, {MakeIssue(1, 2, "b")}).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(store_->ScanRepository(kRepo, [](const v1::Issue&) { return true; }).code(),
            absl::StatusCode::kDataLoss);
}

TEST_F(IssueStoreTest, CorruptCommentChangeAndEpochAreDataLoss) {
  Apply({MakeIssue(1, 1, "a")});
  Corrupt("comments", std::string(kRepo) + std::string(1, '\0') + BE64(1) + BE64(5), "\xff\x01");
  EXPECT_EQ(store_->GetIssue(kRepo, 1).status().code(), absl::StatusCode::kDataLoss);

  Corrupt("changes", BE64(2), "x");
  auto batch = store_->ReadChanges(1, 10);
  EXPECT_EQ(batch.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(batch.status().message()), HasSubstr("seq 2"));

  Corrupt("meta", std::string("epoch/") + kOtherRepo, "short");
  auto apply = store_->ApplyIssues(kOtherRepo, 1, {MakeIssue(1, 1, "a")});
  EXPECT_EQ(apply.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(apply.status().message()), HasSubstr(kOtherRepo));
}

TEST_F(IssueStoreTest, WaitForChangesWakesOnCommitAndTimesOut) {
  EXPECT_EQ(store_->WaitForChanges(0, absl::ZeroDuration()), 0u);
  uint64_t seen = 0;
  std::thread waiter([&] { seen = store_->WaitForChanges(0, absl::Seconds(30)); });
  Apply({MakeIssue(1, 1, "a")});
  waiter.join();
  EXPECT_EQ(seen, 1u);
}

TEST_F(IssueStoreTest, ConcurrentWritersGetDenseSequenceNumbers) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::string slug = absl::StrCat("github:octo/repo", t);
      for (int i = 1; i <= kPerThread; ++i) {
        EXPECT_TRUE(store_->ApplyIssues(slug, 1, {MakeIssue(i, 1, "x")}).ok());
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(store_->last_seq(), static_cast<uint64_t>(kThreads * kPerThread));
  auto batch = store_->ReadChanges(0, 1000);
  ASSERT_TRUE(batch.ok());
  ASSERT_EQ(batch->events_size(), kThreads * kPerThread);
  for (int i = 0; i < batch->events_size(); ++i) {
    EXPECT_EQ(batch->events(i).seq(), static_cast<uint64_t>(i + 1));
  }
}

}  // namespace
}  // namespace issuescope::crawler

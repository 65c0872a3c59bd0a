// PageIngest (crawler/page_ingest.h) on a real RocksDB store (in-memory Env): future-dated items
// set aside with their reason, quarantine and raw pages with redacted URLs, fenced writes that
// count, and when an issue's comments must be listed again.
#include "crawler/page_ingest.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/crawler/mem_store.h"

namespace issuescope::crawler {
namespace {

using ::testing::HasSubstr;

constexpr char kSlug[] = "github:o/r";

v1::Issue Issue(int64_t number, absl::Time updated, int comments) {
  v1::Issue issue;
  issue.mutable_repo()->set_tracker(v1::TRACKER_GITHUB);
  issue.mutable_repo()->set_owner("o");
  issue.mutable_repo()->set_name("r");
  issue.set_number(number);
  issue.set_key(std::to_string(number));
  issue.set_title("t");
  *issue.mutable_created_at() = ToProto(updated);
  *issue.mutable_updated_at() = ToProto(updated);
  issue.set_comment_count(comments);
  return issue;
}

v1::Comment Comment(int64_t issue, int64_t id, absl::Time updated) {
  v1::Comment c;
  c.mutable_repo()->set_tracker(v1::TRACKER_GITHUB);
  c.mutable_repo()->set_owner("o");
  c.mutable_repo()->set_name("r");
  c.set_issue_number(issue);
  c.set_id(id);
  c.set_body("b");
  *c.mutable_created_at() = ToProto(updated);
  *c.mutable_updated_at() = ToProto(updated);
  return c;
}

class PageIngestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(OpenMemStore(&env_, &store_));
    v1::RepositoryRef repo;
    repo.set_tracker(v1::TRACKER_GITHUB);
    repo.set_owner("o");
    repo.set_name("r");
    ingest_ = std::make_unique<PageIngest>(store_.get(), repo, kSlug, /*epoch=*/1,
                                           absl::Minutes(5), /*keep_raw_pages=*/true,
                                           /*include_prs=*/false, &counters_);
  }

  const absl::Time t0_ = absl::FromUnixSeconds(1700000000);
  std::unique_ptr<rocksdb::Env> env_;
  std::unique_ptr<IssueStore> store_;
  v1::CrawlCounters counters_;
  std::unique_ptr<PageIngest> ingest_;
};

TEST_F(PageIngestTest, FutureItemsAreSetAsideWithTheReason) {
  std::vector<v1::Issue> page = {Issue(1, t0_, 0), Issue(2, t0_ + absl::Hours(1), 0),
                                 Issue(3, t0_ + absl::Minutes(4), 0)};
  std::vector<BadItem> bad;
  ingest_->DropFutureItems(t0_, &page, &bad);
  ASSERT_EQ(page.size(), 2u);
  EXPECT_EQ(page[0].number(), 1);
  EXPECT_EQ(page[1].number(), 3);  // within the allowed skew
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].index, 1);
  EXPECT_EQ(bad[0].key, "number 2");
  EXPECT_THAT(bad[0].error, HasSubstr("is after the tracker's clock"));
  EXPECT_THAT(bad[0].raw, HasSubstr("\"number\""));
  std::vector<v1::Comment> comments = {Comment(1, 77, t0_ + absl::Hours(2))};
  ingest_->DropFutureItems(t0_, &comments, &bad);
  EXPECT_TRUE(comments.empty());
  EXPECT_EQ(bad.back().key, "id 77");
}

TEST_F(PageIngestTest, QuarantineAndRawPagesStoreRedactedUrlsAndCount) {
  BadItem b;
  b.index = 4;
  b.key = "number 9";
  b.error = "field 'title' is null";
  b.raw = "{}";
  const std::string url = "https://api.test/repos/o/r/issues?access_token=SECRET&page=2";
  ASSERT_TRUE(ingest_->Quarantine("issues", url, t0_, {b}).ok());
  EXPECT_EQ(counters_.items_quarantined(), 1);
  ASSERT_TRUE(ingest_
                  ->KeepRawPage("issues", url, "[]", t0_, nullptr, {IssueStore::RawIssueItem(9)})
                  .ok());
  std::vector<QuarantinedItem> quarantined;
  ASSERT_TRUE(store_
                  ->ScanQuarantined(kSlug,
                                    [&](const std::string&, const QuarantinedItem& item) {
                                      quarantined.push_back(item);
                                      return true;
                                    })
                  .ok());
  ASSERT_EQ(quarantined.size(), 1u);
  EXPECT_EQ(quarantined[0].error, "field 'title' is null");
  EXPECT_EQ(quarantined[0].key, "number 9");
  EXPECT_EQ(quarantined[0].url.find("SECRET"), std::string::npos);
  EXPECT_EQ(*store_->RawPageCount(kSlug), 1);
}

TEST_F(PageIngestTest, StoresUnderTheEpochAndSaysWhichCommentsToList) {
  // New: list its comments.
  EXPECT_TRUE(*ingest_->NeedsComments(Issue(5, t0_, 1)));
  ASSERT_TRUE(ingest_->StoreIssues({Issue(5, t0_, 1)}).ok());
  EXPECT_EQ(counters_.issues_fetched(), 1);
  EXPECT_EQ(counters_.issues_stored(), 1);
  // Stored, but its one comment is not: still list them.
  EXPECT_TRUE(*ingest_->NeedsComments(Issue(5, t0_, 1)));
  ASSERT_TRUE(ingest_->StoreComments({Comment(5, 1, t0_)}).ok());
  EXPECT_EQ(counters_.comments_stored(), 1);
  EXPECT_FALSE(*ingest_->NeedsComments(Issue(5, t0_, 1)));
  // Changed since, or counting more comments: list them again.
  EXPECT_TRUE(*ingest_->NeedsComments(Issue(5, t0_ + absl::Seconds(1), 1)));
  EXPECT_TRUE(*ingest_->NeedsComments(Issue(5, t0_, 2)));
  // A tombstone is listed again too (the tracker lists the number again).
  ASSERT_TRUE(ingest_->MarkDeleted(5).ok());
  EXPECT_TRUE(*ingest_->NeedsComments(Issue(5, t0_, 1)));
  // A stale lease's writes are fenced.
  ASSERT_TRUE(store_->ApplyIssues(kSlug, 2, {Issue(6, t0_, 0)}).ok());
  EXPECT_FALSE(ingest_->StoreIssues({Issue(6, t0_ + absl::Seconds(5), 0)}).ok());
}

}  // namespace
}  // namespace issuescope::crawler

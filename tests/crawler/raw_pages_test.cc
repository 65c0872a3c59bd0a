// Raw pages and reparse: every parsed listing page is kept (compressed) in the store; pages whose
// items all have newer copies elsewhere are dropped; Reparse re-derives the records and changes
// only those that differ.
#include <memory>

#include "crawler/repo_crawler.h"
#include "crawler/reparse.h"
#include "gtest/gtest.h"
#include "tests/crawler/crawl_test_util.h"
#include "tests/crawler/fake_transport.h"
#include "tests/crawler/mem_store.h"

namespace issuescope::crawler {
namespace {

using namespace testing;  // NOLINT: test helpers

constexpr char kSlug[] = "github:octo/hello";

class RawPagesTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(OpenMemStore(&env_, &store_)); }

  RawPage Page(absl::string_view listing, int second, std::string body = "[]") {
    RawPage p;
    p.repo.set_tracker(v1::TRACKER_GITHUB);
    p.repo.set_owner("octo");
    p.repo.set_name("hello");
    p.listing = std::string(listing);
    p.url = "https://api.test/x";
    p.fetched_at = absl::FromUnixSeconds(1700000000 + second);
    p.body = std::move(body);
    return p;
  }

  void CrawlOnce() {
    http_.Respond(kTestRepoUrl, 200, R"({"full_name": "octo/hello"})");
    http_.Respond(kTestIssues, 200, TestPage({TestIssue(1, 1), TestIssue(2, 2)}));
    http_.Respond(std::string(kTestIssues) + SinceParam(2), 200, TestPage({TestIssue(2, 2)}));
    http_.Respond(kTestComments, 200, TestPage({TestComment(7, 1, 3), TestComment(8, 2, 4)}));
    http_.Respond(std::string(kTestComments) + SinceParam(4), 200,
                  TestPage({TestComment(8, 2, 4)}));
    RepoCrawler crawler(&http_, store_.get(), &clock_, CrawlerOptions{});
    auto result =
        crawler.Crawl(TestLease(), [](const CrawlProgress&) { return absl::OkStatus(); });
    ASSERT_TRUE(result.ok()) << result.status();
    ASSERT_EQ(http_.Pending(), 0u);
  }

  std::unique_ptr<rocksdb::Env> env_;
  std::unique_ptr<IssueStore> store_;
  FakeClock clock_;
  FakeTransport http_{&clock_};
};

TEST_F(RawPagesTest, ColumnFamilyIsZstdCompressed) { EXPECT_EQ(store_->raw_compression(), "zstd"); }

TEST_F(RawPagesTest, PageIsDroppedOnceEveryItemHasANewerCopy) {
  const std::string i1 = IssueStore::RawIssueItem(1), i2 = IssueStore::RawIssueItem(2);
  ASSERT_TRUE(store_->PutRawPage(kSlug, Page("issues", 1), {i1, i2}).ok());
  ASSERT_TRUE(store_->PutRawPage(kSlug, Page("issues", 2), {i1}).ok());
  EXPECT_EQ(*store_->RawPageCount(kSlug), 2);  // page 1 still holds issue 2's newest copy
  ASSERT_TRUE(store_->PutRawPage(kSlug, Page("issues", 3), {i2}).ok());
  EXPECT_EQ(*store_->RawPageCount(kSlug), 2);  // page 1 is gone
  ASSERT_TRUE(store_->PutRawPage(kSlug, Page("issues", 4), {}).ok());
  EXPECT_EQ(*store_->RawPageCount(kSlug), 2);  // an empty page is not kept
  std::vector<absl::Time> kept;
  ASSERT_TRUE(store_
                  ->ScanRawPages(kSlug,
                                 [&](const std::string& slug, const RawPage& p) {
                                   EXPECT_EQ(slug, kSlug);
                                   kept.push_back(p.fetched_at);
                                   return true;
                                 })
                  .ok());
  EXPECT_EQ(kept, (std::vector<absl::Time>{absl::FromUnixSeconds(1700000002),
                                           absl::FromUnixSeconds(1700000003)}));
  EXPECT_EQ(*store_->RawPageCount("github:other/repo"), 0);
}

TEST_F(RawPagesTest, RoundTripsEveryField) {
  RawPage p = Page("notes", 5, "[{\"id\": 1}]\n\x01 binary");
  p.repo.set_tracker(v1::TRACKER_GITLAB);
  p.include_pull_requests = false;
  p.issue_number = 12;
  p.issue_key = "12";
  p.issue_url = "https://gitlab.test/g/p/-/issues/12";
  ASSERT_TRUE(store_->PutRawPage("gitlab:octo/hello", p, {IssueStore::RawCommentItem(12, 1)}).ok());
  int seen = 0;
  ASSERT_TRUE(store_
                  ->ScanRawPages("", [&](const std::string& slug, const RawPage& got) {
                    ++seen;
                    EXPECT_EQ(slug, "gitlab:octo/hello");
                    EXPECT_EQ(got.repo.tracker(), v1::TRACKER_GITLAB);
                    EXPECT_EQ(got.listing, "notes");
                    EXPECT_EQ(got.body, p.body);
                    EXPECT_EQ(got.fetched_at, p.fetched_at);
                    EXPECT_FALSE(got.include_pull_requests);
                    EXPECT_EQ(got.issue_number, 12);
                    EXPECT_EQ(got.issue_url, p.issue_url);
                    return true;
                  })
                  .ok());
  EXPECT_EQ(seen, 1);
}

TEST_F(RawPagesTest, CrawlKeepsItsPagesAndReparseOfAnUnchangedStoreChangesNothing) {
  ASSERT_NO_FATAL_FAILURE(CrawlOnce());
  // The confirmation rounds re-listed issue 2 and comment 8; their first pages still hold
  // issue 1 and comment 7.
  EXPECT_EQ(*store_->RawPageCount(kSlug), 4);
  const uint64_t seq = store_->last_seq();
  auto r = Reparse(store_.get(), kSlug);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->pages, 4);
  EXPECT_EQ(r->bad_pages, 0);
  EXPECT_EQ(r->issues_parsed, 3);
  EXPECT_EQ(r->comments_parsed, 3);
  EXPECT_EQ(r->issues_changed, 0);
  EXPECT_EQ(r->comments_changed, 0);
  EXPECT_EQ(store_->last_seq(), seq);  // nothing reaches the feed
}

TEST_F(RawPagesTest, ReparseRepairsARecordAnOlderParserGotWrong) {
  ASSERT_NO_FATAL_FAILURE(CrawlOnce());
  // What an older parser might have stored: same version, wrong title.
  auto stored = store_->GetIssue(kSlug, 1);
  ASSERT_TRUE(stored.ok());
  v1::Issue wrong = stored->issue();
  wrong.set_title("mangled");
  ASSERT_TRUE(store_->ApplyIssues(kSlug, 1, {wrong}).ok());
  const uint64_t seq = store_->last_seq();
  auto r = Reparse(store_.get(), "");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->issues_changed, 1);
  EXPECT_EQ(r->comments_changed, 0);
  EXPECT_EQ(store_->last_seq(), seq + 1);  // one change in the feed: issue 1
  EXPECT_EQ(store_->GetIssue(kSlug, 1)->issue().title(), "issue 1");
}

TEST_F(RawPagesTest, UnparsablePagesAreCountedAndLeaveRecordsAlone) {
  ASSERT_TRUE(store_
                  ->PutRawPage(kSlug, Page("issues", 1, "[{\"number\": 1,"),
                               {IssueStore::RawIssueItem(1)})
                  .ok());
  auto r = Reparse(store_.get(), kSlug);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->bad_pages, 1);
  EXPECT_NE(r->first_error.find("https://api.test/x"), std::string::npos);
  EXPECT_EQ(store_->last_seq(), 0u);
}

// A bad item on a kept page (the crawl quarantined it) is left out; the page's other items are
// re-derived.
TEST_F(RawPagesTest, BadItemsAreCountedAndLeftOut) {
  nlohmann::json bad = TestIssue(2, 2);
  bad["number"] = "x";
  ASSERT_TRUE(store_
                  ->PutRawPage(kSlug, Page("issues", 1, TestPage({TestIssue(1, 1), bad})),
                               {IssueStore::RawIssueItem(1)})
                  .ok());
  auto r = Reparse(store_.get(), kSlug);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->bad_pages, 0);
  EXPECT_EQ(r->bad_items, 1);
  EXPECT_EQ(r->issues_changed, 1);
  EXPECT_TRUE(store_->GetIssue(kSlug, 1).ok());
}

TEST_F(RawPagesTest, RawPagesCanBeTurnedOff) {
  http_.Respond(kTestRepoUrl, 200, R"({"full_name": "octo/hello"})");
  http_.Respond(kTestIssues, 200, TestPage({TestIssue(1, 1)}));
  http_.Respond(std::string(kTestIssues) + SinceParam(1), 200, TestPage({TestIssue(1, 1)}));
  http_.Respond(kTestComments, 200, "[]");
  CrawlerOptions options;
  options.keep_raw_pages = false;
  RepoCrawler crawler(&http_, store_.get(), &clock_, options);
  ASSERT_TRUE(crawler.Crawl(TestLease(), [](const CrawlProgress&) { return absl::OkStatus(); })
                  .ok());
  EXPECT_EQ(*store_->RawPageCount(""), 0);
}

}  // namespace
}  // namespace issuescope::crawler

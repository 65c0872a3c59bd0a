// Lister (crawler/lister.h) on its own, against a scripted FakeTransport, a FakeClock and a real
// IssueStore on RocksDB's in-memory Env: one listing pass page after page, bodies that do not
// parse, pipelined pages, the page budget, next pages that leave the host or loop, and the
// errors a pass returns. The rounds around passes (cursors, ETags, shift repair) are
// repo_crawler_test's.
#include "crawler/lister.h"

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/time_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "rocksdb/env.h"
#include "tests/crawler/crawl_test_util.h"
#include "tests/crawler/fake_transport.h"
#include "tests/crawler/mem_store.h"

namespace issuescope::crawler {
namespace {

using testing::At;
using testing::FakeTransport;
using testing::kTestBase;
using testing::kTestComments;
using testing::kTestIssues;
using testing::TestComment;
using testing::TestIssue;
using testing::TestPage;
using Headers = std::vector<std::pair<std::string, std::string>>;

constexpr char kSlug[] = "github:octo/hello";
constexpr char kToken[] = "ghp_sekrit_token_123";
constexpr char kBadBody[] = "[{\"id\": 1, \"number\": 1, \"updated_at\": ";
constexpr const char* kIssues = kTestIssues;

// PullRequest marks an issue of the listing as a pull request.
nlohmann::json PullRequest(nlohmann::json issue) {
  issue["pull_request"] = {{"url", "x"}};
  return issue;
}

Headers NextIs(const std::string& url) { return {{"Link", "<" + url + ">; rel=\"next\""}}; }

class ListerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(OpenMemStore(&env_, &store_));
    auto tracker = MakeTracker(v1::TRACKER_GITHUB);
    ASSERT_TRUE(tracker.ok()) << tracker.status();
    tracker_ = *std::move(tracker);
    repo_.set_tracker(v1::TRACKER_GITHUB);
    repo_.set_owner("octo");
    repo_.set_name("hello");
    loop_options_.max_retries = 2;
    options_.max_retries = 2;
  }

  // Pass runs one pass of the lease's Lister (made at the first pass, so later passes share
  // its page budget and what it learnt), keeping its counts in members. `on_report` runs at
  // each report, before report_status_ is returned.
  absl::StatusOr<PassResult> Pass(Listing kind, std::function<void()> on_report = nullptr,
                                  const std::string& etag = "") {
    if (lister_ == nullptr) {
      loop_ = std::make_unique<RequestLoop>(
          &http_, tracker_.get(), &clock_, loop_options_,
          OneTokenPool(v1::TRACKER_GITHUB, kToken, &clock_, loop_options_), kSlug,
          [] { return false; });
      ingest_ = std::make_unique<PageIngest>(store_.get(), repo_, kSlug, /*epoch=*/1,
                                             absl::Minutes(5), /*keep_raw_pages=*/false,
                                             options_.include_pull_requests, &counters_);
      lister_ = std::make_unique<Lister>(
          tracker_.get(), TrackerRepo{kTestBase, "octo", "hello"}, repo_, kSlug, loop_.get(),
          ingest_.get(), &clock_, options_, ListerProgress{&counters_, &estimated_, [this] {
            ++reports_;
            if (on_report_) on_report_();
            return report_status_;
          }});
    }
    on_report_ = std::move(on_report);
    absl::StatusOr<PassResult> result = lister_->Pass(kind, std::nullopt, etag);
    requests_ = loop_->requests();
    retries_ = loop_->retries();
    pages_ = lister_->pages();
    return result;
  }

  bool Stored(int number) { return store_->GetIssue(kSlug, number).ok(); }

  std::unique_ptr<rocksdb::Env> env_;
  std::unique_ptr<IssueStore> store_;
  std::unique_ptr<Tracker> tracker_;
  v1::RepositoryRef repo_;
  FakeClock clock_;
  FakeTransport http_{&clock_};
  RequestLoopOptions loop_options_;
  ListerOptions options_;
  v1::CrawlCounters counters_;
  int64_t estimated_ = 0;
  int reports_ = 0;
  absl::Status report_status_;
  int64_t requests_ = 0;
  int64_t retries_ = 0;
  int pages_ = 0;
  std::function<void()> on_report_;
  std::unique_ptr<RequestLoop> loop_;
  std::unique_ptr<PageIngest> ingest_;
  std::unique_ptr<Lister> lister_;
};

TEST_F(ListerTest, PassFollowsNextLinksAndRecordsEveryPage) {
  const std::string p2 = std::string(kIssues) + "&page=2";
  http_.Respond(kIssues, 200, TestPage({TestIssue(1, 1), TestIssue(2, 3)}), NextIs(p2));
  http_.Respond(p2, 200, TestPage({TestIssue(3, 2)}));
  auto pass = Pass(Listing::kIssues);
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ(http_.Urls(), (std::vector<std::string>{kIssues, p2}));
  EXPECT_EQ(pass->pages.size(), 2u);
  EXPECT_EQ(pass->updated.size(), 3u);
  ASSERT_TRUE(pass->max_updated.has_value());
  EXPECT_EQ(FormatRfc3339(*pass->max_updated), At(3));
  EXPECT_FALSE(pass->truncated);
  EXPECT_EQ(pages_, 2);
  EXPECT_EQ(reports_, 2);
  EXPECT_EQ(counters_.issues_stored(), 3);
  EXPECT_TRUE(Stored(1) && Stored(2) && Stored(3));
}

TEST_F(ListerTest, PullRequestsAreSkippedAndTheirCommentsToo) {
  http_.Respond(kIssues, 200, TestPage({TestIssue(1, 1), PullRequest(TestIssue(2, 2))}));
  http_.Respond(kTestComments, 200, TestPage({TestComment(7, 1, 3), TestComment(8, 2, 4)}));
  auto issues = Pass(Listing::kIssues);
  ASSERT_TRUE(issues.ok()) << issues.status();
  auto comments = Pass(Listing::kComments);
  ASSERT_TRUE(comments.ok()) << comments.status();
  EXPECT_TRUE(Stored(1));
  EXPECT_FALSE(Stored(2));
  EXPECT_EQ(counters_.comments_stored(), 1);
  // Both listed items still count for shift repair and the cursor.
  EXPECT_EQ(comments->updated.size(), 2u);
}

TEST_F(ListerTest, PageBudgetTruncatesBeforeThePageItDoesNotAllow) {
  options_.max_pages_per_lease = 1;
  options_.pipeline_pages = true;
  const std::string p2 = std::string(kIssues) + "&page=2";
  http_.Respond(kIssues, 200, TestPage({TestIssue(1, 1)}), NextIs(p2));
  http_.Respond(p2, 200, TestPage({TestIssue(2, 2)}));
  auto pass = Pass(Listing::kIssues);
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_TRUE(pass->truncated);
  EXPECT_EQ(http_.Urls(), std::vector<std::string>{kIssues});  // no prefetch past the budget
  EXPECT_EQ(pages_, 1);
  EXPECT_TRUE(Stored(1));
  EXPECT_FALSE(Stored(2));
}

TEST_F(ListerTest, FirstPage304IsNotModifiedAndStoresNothing) {
  http_.Respond(kIssues, 304, "");
  auto pass = Pass(Listing::kIssues, nullptr, "\"etag-1\"");
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_TRUE(pass->not_modified);
  EXPECT_EQ(counters_.not_modified(), 1);
  EXPECT_EQ(store_->last_seq(), 0u);
  ASSERT_EQ(http_.Requests().size(), 1u);
  EXPECT_EQ(http_.Requests()[0].request.headers.Get("If-None-Match"), "\"etag-1\"");
}

TEST_F(ListerTest, InvalidJsonIsFetchedAgainThenStored) {
  http_.Respond(kIssues, 200, kBadBody);
  http_.Respond(kIssues, 200, TestPage({TestIssue(1, 1)}));
  auto pass = Pass(Listing::kIssues);
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ(retries_, 1);
  EXPECT_EQ(requests_, 2);
  EXPECT_TRUE(Stored(1));
}

TEST_F(ListerTest, InvalidJsonStoresNothingAndNamesTheUrl) {
  for (int i = 0; i <= options_.max_retries; ++i) http_.Respond(kIssues, 200, kBadBody);
  auto pass = Pass(Listing::kIssues);
  ASSERT_FALSE(pass.ok());
  EXPECT_EQ(pass.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(pass.status().message().find(kIssues), absl::string_view::npos) << pass.status();
  EXPECT_NE(pass.status().message().find("invalid JSON"), absl::string_view::npos);
  EXPECT_EQ(http_.Pending(), 0u);  // max_retries re-fetches, then the error
  EXPECT_EQ(store_->last_seq(), 0u);
}

TEST_F(ListerTest, ReportErrorStopsThePassAtOnce) {
  report_status_ = absl::FailedPreconditionError("lease epoch 1 is stale");
  const std::string p2 = std::string(kIssues) + "&page=2";
  http_.Respond(kIssues, 200, TestPage({TestIssue(1, 1)}), NextIs(p2));
  http_.Respond(p2, 200, TestPage({TestIssue(2, 2)}));
  auto pass = Pass(Listing::kIssues);
  ASSERT_FALSE(pass.ok());
  EXPECT_EQ(pass.status().code(), absl::StatusCode::kFailedPrecondition);
  // Page 2 may already be in flight (pipelining) while page 1 is stored and reported: it is
  // dropped, never stored, and nothing is requested after it.
  EXPECT_GE(http_.Requests().size(), 1u);
  EXPECT_LE(http_.Requests().size(), 2u);
  EXPECT_EQ(reports_, 1);
  EXPECT_FALSE(Stored(2));
}

TEST_F(ListerTest, NextPageIsRequestedWhileThePageBeforeIsStored) {
  const std::string p2 = std::string(kIssues) + "&page=2";
  http_.Respond(kIssues, 200, TestPage({TestIssue(1, 1)}), NextIs(p2));
  http_.Respond(p2, 200, TestPage({TestIssue(2, 2)}));
  bool page2_in_flight = false;
  bool page2_stored_early = true;
  auto pass = Pass(Listing::kIssues, [&] {
    if (reports_ != 1) return;
    // Page 1 is stored; page 2 was requested meanwhile (on the prefetch thread), not stored yet.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (http_.Requests().size() < 2 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
    page2_in_flight = http_.Urls().size() == 2 && http_.Urls()[1] == p2;
    page2_stored_early = Stored(2);
  });
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_TRUE(page2_in_flight);
  EXPECT_FALSE(page2_stored_early);
  // Pipelining changes when requests are sent, not which.
  EXPECT_EQ(http_.Urls(), (std::vector<std::string>{kIssues, p2}));
  EXPECT_EQ(counters_.issues_stored(), 2);
}

TEST_F(ListerTest, FailedPrefetchedPageLeavesThePageBeforeStoredAndReported) {
  loop_options_.max_retries = 1;
  const std::string p2 = std::string(kIssues) + "&page=2";
  http_.Respond(kIssues, 200, TestPage({TestIssue(1, 1)}), NextIs(p2));
  http_.Respond(p2, 500, "oops");
  http_.Respond(p2, 500, "oops");
  auto pass = Pass(Listing::kIssues);
  ASSERT_FALSE(pass.ok());
  EXPECT_EQ(pass.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(pass.status().message().find(p2), std::string::npos) << pass.status();
  EXPECT_EQ(http_.Pending(), 0u);
  EXPECT_TRUE(Stored(1));
  EXPECT_EQ(store_->last_seq(), 1u);  // page 1 only
  EXPECT_EQ(reports_, 1);
}

TEST_F(ListerTest, BadBodyIsFetchedAgainWhileTheNextPageIsAlreadyIn) {
  const std::string p2 = std::string(kIssues) + "&page=2";
  http_.Respond(kIssues, 200, kBadBody, NextIs(p2));
  http_.Respond(kIssues, 200, TestPage({TestIssue(1, 1)}), NextIs(p2));
  http_.Respond(p2, 200, TestPage({TestIssue(2, 2)}));
  auto pass = Pass(Listing::kIssues);
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ(http_.Pending(), 0u);
  EXPECT_EQ(requests_, 3);  // page 2 once, though it was in before page 1
  EXPECT_EQ(retries_, 1);
  EXPECT_EQ(counters_.issues_stored(), 2);
}

TEST_F(ListerTest, WithoutPipeliningAStoppedPassSendsNoFurtherRequest) {
  options_.pipeline_pages = false;
  report_status_ = absl::FailedPreconditionError("lease epoch 1 is stale");
  const std::string p2 = std::string(kIssues) + "&page=2";
  http_.Respond(kIssues, 200, TestPage({TestIssue(1, 1)}), NextIs(p2));
  http_.Respond(p2, 200, TestPage({TestIssue(2, 2)}));
  auto pass = Pass(Listing::kIssues);
  ASSERT_FALSE(pass.ok());
  EXPECT_EQ(pass.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(http_.Requests().size(), 1u);  // page 2 never fetched
  EXPECT_EQ(reports_, 1);
}

TEST_F(ListerTest, TokensInUrlsAreRedacted) {
  const std::string p2 = "https://api.test/x?page=2&access_token=" + std::string(kToken);
  http_.Respond(kIssues, 200, TestPage({TestIssue(1, 1)}), NextIs(p2));
  // (A 422 there would restart the listing from the since cursor: see deep_page_test.)
  http_.Respond(p2, 404, R"({"message": "Not Found"})");
  auto pass = Pass(Listing::kIssues);
  ASSERT_FALSE(pass.ok());
  EXPECT_EQ(pass.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(pass.status().message().find(kToken), absl::string_view::npos) << pass.status();
  EXPECT_NE(pass.status().message().find("REDACTED"), absl::string_view::npos);
}

TEST_F(ListerTest, NextLinkToAnotherHostIsRefused) {
  http_.Respond(kIssues, 200, TestPage({TestIssue(1, 1)}),
                NextIs("https://evil.example/steal?page=2"));
  auto pass = Pass(Listing::kIssues);
  ASSERT_FALSE(pass.ok());
  EXPECT_EQ(pass.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(http_.Requests().size(), 1u);
}

TEST_F(ListerTest, NextLinkThatRepeatsAPageStopsInsteadOfLooping) {
  const std::string p2 = std::string(kIssues) + "&page=2";
  http_.Respond(kIssues, 200, TestPage({TestIssue(1, 1)}), NextIs(p2));
  http_.Respond(p2, 200, TestPage({TestIssue(2, 2)}), NextIs(kIssues));
  auto pass = Pass(Listing::kIssues);
  ASSERT_FALSE(pass.ok());
  EXPECT_EQ(pass.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(pass.status().message().find("repeats a page"), std::string::npos) << pass.status();
  EXPECT_EQ(http_.Urls(), (std::vector<std::string>{kIssues, p2}));
  EXPECT_TRUE(Stored(2));  // what was listed is kept
}

}  // namespace
}  // namespace issuescope::crawler

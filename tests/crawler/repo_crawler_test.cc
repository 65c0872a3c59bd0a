// RepoCrawler against a scripted FakeTransport, a FakeClock and a real IssueStore on RocksDB's
// in-memory Env: request economy, cursors and ETags, shift repair, rate limits, retries, the
// repository request, and errors. One pass's pages (bad bodies, pipelining, next links) are
// lister_test's.
#include "crawler/repo_crawler.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/time_util.h"
#include "crawler/request_loop.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "rocksdb/env.h"
#include "tests/crawler/fake_transport.h"
#include "tests/crawler/mem_store.h"

namespace issuescope::crawler {
namespace {

using testing::FakeTransport;
using Headers = std::vector<std::pair<std::string, std::string>>;

constexpr char kBase[] = "https://api.test";
constexpr char kRepoUrl[] = "https://api.test/repos/octo/hello";
constexpr char kIssues[] =
    "https://api.test/repos/octo/hello/issues?state=all&sort=updated&direction=asc&per_page=100";
constexpr char kComments[] =
    "https://api.test/repos/octo/hello/issues/comments?sort=updated&direction=asc&per_page=100";
constexpr char kToken[] = "ghp_sekrit_token_123";

std::string T(int second) {
  return FormatRfc3339(absl::FromUnixSeconds(1672531200 + second));  // 2023-01-01T00:00:00Z + s
}

nlohmann::json IssueJson(int number, const std::string& updated, bool pr = false) {
  nlohmann::json j = {{"id", 1000 + number},
                      {"number", number},
                      {"title", absl::StrCat("issue ", number)},
                      {"state", "open"},
                      {"created_at", T(0)},
                      {"updated_at", updated},
                      {"html_url", absl::StrCat("https://github.com/octo/hello/issues/", number)}};
  if (pr) j["pull_request"] = {{"url", "x"}};
  return j;
}

nlohmann::json CommentJson(int id, int issue, const std::string& updated, bool pr = false) {
  return {{"id", id},
          {"body", "c"},
          {"updated_at", updated},
          {"issue_url", absl::StrCat("https://api.test/repos/octo/hello/issues/", issue)},
          {"html_url", absl::StrCat("https://github.com/octo/hello/", pr ? "pull/" : "issues/",
                                    issue, "#issuecomment-", id)}};
}

std::string Page(std::vector<nlohmann::json> items) { return nlohmann::json(items).dump(); }

// SinceAt is the `&since=` query suffix the crawler appends for `t`.
std::string SinceAt(absl::Time t) {
  std::string out;
  for (char c : FormatRfc3339(t)) out += c == ':' ? std::string("%3A") : std::string(1, c);
  return absl::StrCat("&since=", out);
}

std::string Since(int second) { return SinceAt(absl::FromUnixSeconds(1672531200 + second)); }

class RepoCrawlerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(OpenMemStore(&env_, &store_));
    options_.token = kToken;
  }

  v1::Lease Lease(v1::CrawlMode mode = v1::CRAWL_MODE_FULL) {
    v1::Lease lease;
    lease.set_repo_slug("github:octo/hello");
    lease.mutable_repo()->set_tracker(v1::TRACKER_GITHUB);
    lease.mutable_repo()->set_owner("octo");
    lease.mutable_repo()->set_name("hello");
    lease.mutable_repo()->set_api_url(std::string(kBase) + "/");
    lease.set_epoch(1);
    lease.set_mode(mode);
    return lease;
  }

  void ScriptRepo(Headers h = {}) {
    http_.Respond(kRepoUrl, 200, R"({"full_name": "octo/hello", "open_issues_count": 3})", h);
  }

  absl::StatusOr<CrawlProgress> Crawl(const v1::Lease& lease) {
    RepoCrawler crawler(&http_, store_.get(), &clock_, options_);
    reports_.clear();
    return crawler.Crawl(lease, [&](const CrawlProgress& p) {
      reports_.push_back(p);
      return progress_status_;
    });
  }

  std::unique_ptr<rocksdb::Env> env_;
  std::unique_ptr<IssueStore> store_;
  FakeClock clock_;
  FakeTransport http_{&clock_};
  CrawlerOptions options_;
  std::vector<CrawlProgress> reports_;
  absl::Status progress_status_;
};

TEST_F(RepoCrawlerTest, FullCrawlFollowsOnlyNextAndCostsTheMinimum) {
  ScriptRepo({{"ETag", "\"r\""}});
  const std::string p2 = "https://api.test/repositories/9/issues?page=2&per_page=100";
  const std::string p3 = "https://api.test/repositories/9/issues?page=3&per_page=100";
  http_.Respond(kIssues, 200, Page({IssueJson(1, T(1)), IssueJson(2, T(2))}),
                {{"Link", absl::StrCat("<", p2, ">; rel=\"next\", <", p3, ">; rel=\"last\"")},
                 {"ETag", "\"e1\""}});
  http_.Respond(p2, 200, Page({IssueJson(3, T(3))}),
                {{"Link", absl::StrCat("<", p3, ">; rel=\"next\", <", kIssues,
                                       ">; rel=\"first\", <", kIssues, ">; rel=\"prev\"")}});
  http_.Respond(p3, 200, Page({IssueJson(4, T(4))}),
                {{"Link", absl::StrCat("<", kIssues, ">; rel=\"first\"")}});
  // Both cursors move, so each listing gets one confirmation page from its new cursor: the
  // items at the cursor again (no-ops), and the ETag the next crawl's URL will match.
  http_.Respond(kIssues + Since(4), 200, Page({IssueJson(4, T(4))}), {{"ETag", "\"ci\""}});
  http_.Respond(kComments, 200, Page({CommentJson(50, 1, T(5)), CommentJson(51, 3, T(6))}),
                {{"ETag", "\"c0\""}});
  http_.Respond(kComments + Since(6), 200, Page({CommentJson(51, 3, T(6))}),
                {{"ETag", "\"cc\""}});

  auto result = Crawl(Lease());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(http_.Urls(),
            (std::vector<std::string>{kRepoUrl, kIssues, p2, p3, kIssues + Since(4), kComments,
                                      kComments + Since(6)}));
  EXPECT_EQ(result->counters.requests(), 7);  // repo + 3 pages + 1 page + 2 confirmations
  EXPECT_EQ(result->counters.issues_fetched(), 5);  // issue 4 twice
  EXPECT_EQ(result->counters.issues_stored(), 4);
  EXPECT_EQ(result->counters.comments_fetched(), 3);  // comment 51 twice
  EXPECT_EQ(result->counters.comments_stored(), 2);
  EXPECT_EQ(result->counters.not_modified(), 0);
  EXPECT_EQ(result->issues_estimated, 300);  // rel="last" is page 3 of 100: at most 300
  EXPECT_TRUE(result->done);
  ASSERT_TRUE(result->cursor.has_value());
  EXPECT_EQ(FormatRfc3339(FromProto(result->cursor->issues_since())), T(4));
  EXPECT_EQ(FormatRfc3339(FromProto(result->cursor->comments_since())), T(6));
  // The etags are the confirmation pages' (the URLs at the stored cursors), never the first
  // pass's ("e1", "c0"), which belong to no since.
  EXPECT_EQ(result->cursor->issues_etag(), "\"ci\"");
  EXPECT_EQ(result->cursor->comments_etag(), "\"cc\"");
  EXPECT_EQ(result->cursor->repo_etag(), "\"r\"");
  EXPECT_EQ(store_->last_seq(), 6u);  // 4 issues + 2 comments; the confirmations changed nothing
  ASSERT_EQ(reports_.size(), 7u);     // 4 listing pages + 2 confirmations + the final report
  EXPECT_TRUE(reports_.back().done);
  EXPECT_FALSE(reports_.front().done);
  for (const auto& r : http_.Requests()) {
    EXPECT_EQ(r.request.headers.Get("Authorization"), absl::StrCat("Bearer ", kToken));
    EXPECT_FALSE(r.request.headers.Has("If-None-Match"));
    EXPECT_FALSE(r.request.headers.Get("User-Agent").empty());
  }
  auto issue = store_->GetIssue("github:octo/hello", 3);
  ASSERT_TRUE(issue.ok()) << issue.status();
  EXPECT_EQ(issue->comments_size(), 1);
  EXPECT_EQ(FromProto(issue->issue().fetched_at()), clock_.Now());
}

TEST_F(RepoCrawlerTest, IncrementalSendsSinceAndIfNoneMatchAnd304KeepsTheCursor) {
  v1::Lease lease = Lease(v1::CRAWL_MODE_INCREMENTAL);
  *lease.mutable_cursor()->mutable_issues_since() = ToProto(*ParseRfc3339(T(10)));
  *lease.mutable_cursor()->mutable_comments_since() = ToProto(*ParseRfc3339(T(20)));
  lease.mutable_cursor()->set_issues_etag("\"ei\"");
  lease.mutable_cursor()->set_comments_etag("\"ec\"");
  ScriptRepo();
  http_.Respond(kIssues + Since(10), 304, "");
  http_.Respond(kComments + Since(20), 304, "");

  auto result = Crawl(lease);
  ASSERT_TRUE(result.ok()) << result.status();
  const auto reqs = http_.Requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[1].request.headers.Get("If-None-Match"), "\"ei\"");
  EXPECT_EQ(reqs[2].request.headers.Get("If-None-Match"), "\"ec\"");
  EXPECT_EQ(result->counters.not_modified(), 2);
  EXPECT_EQ(result->cursor->SerializeAsString(), lease.cursor().SerializeAsString());
  EXPECT_EQ(store_->last_seq(), 0u);
}

TEST_F(RepoCrawlerTest, ItemsAtTheCursorAreNoOpsAndTheNewEtagIsKept) {
  v1::Lease lease = Lease(v1::CRAWL_MODE_INCREMENTAL);
  *lease.mutable_cursor()->mutable_issues_since() = ToProto(*ParseRfc3339(T(10)));
  lease.mutable_cursor()->set_issues_etag("\"old\"");
  ASSERT_TRUE(store_->ApplyIssues("github:octo/hello", 1, {}).ok());
  ScriptRepo();
  http_.Respond(kIssues + Since(10), 200, Page({IssueJson(5, T(10))}), {{"ETag", "\"new\""}});
  http_.Respond(kComments, 200, "[]", {{"ETag", "\"c\""}});
  auto first = Crawl(lease);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->counters.issues_stored(), 1);
  EXPECT_EQ(first->cursor->issues_etag(), "\"new\"");  // the cursor did not move
  EXPECT_EQ(FormatRfc3339(FromProto(first->cursor->issues_since())), T(10));
  EXPECT_EQ(first->cursor->comments_etag(), "\"c\"");
  EXPECT_FALSE(first->cursor->has_comments_since());
  EXPECT_EQ(http_.Requests()[1].request.headers.Get("If-None-Match"), "\"old\"");
  EXPECT_FALSE(http_.Requests()[2].request.headers.Has("If-None-Match"));
}

TEST_F(RepoCrawlerTest, ReCrawlIsIdempotent) {
  for (int round = 0; round < 2; ++round) {
    ScriptRepo();
    http_.Respond(kIssues, 200, Page({IssueJson(1, T(1)), IssueJson(2, T(2))}));
    http_.Respond(kIssues + Since(2), 200, Page({IssueJson(2, T(2))}), {{"ETag", "\"i\""}});
    http_.Respond(kComments, 200, Page({CommentJson(7, 1, T(3))}));
    http_.Respond(kComments + Since(3), 200, Page({CommentJson(7, 1, T(3))}),
                  {{"ETag", "\"c\""}});
  }
  auto first = Crawl(Lease());
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->counters.requests(), 5);
  EXPECT_EQ(first->counters.issues_fetched(), 3);
  EXPECT_EQ(first->counters.issues_stored(), 2);
  EXPECT_EQ(first->counters.comments_stored(), 1);
  const uint64_t seq = store_->last_seq();
  EXPECT_EQ(seq, 3u);  // the confirmation pages re-applied issue 2 and comment 7 as no-ops
  auto second = Crawl(Lease());
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->counters.requests(), 5);
  EXPECT_EQ(second->counters.issues_fetched(), 3);
  EXPECT_EQ(second->counters.issues_stored(), 0);
  EXPECT_EQ(second->counters.comments_stored(), 0);
  EXPECT_EQ(store_->last_seq(), seq);
  EXPECT_EQ(second->cursor->SerializeAsString(), first->cursor->SerializeAsString());
  EXPECT_EQ(http_.Pending(), 0u);
}

TEST_F(RepoCrawlerTest, ShiftRepairFindsTheSkippedItem) {
  // Page 1 lists issues 1 and 2; then issue 2 is updated and moves to the end, so issue 3 moves
  // onto page 1 and page 2 lists 4 and 2 only: issue 3 is skipped by offset pagination.
  options_.per_page = 2;
  const std::string issues =
      "https://api.test/repos/octo/hello/issues?state=all&sort=updated&direction=asc&per_page=2";
  const std::string comments =
      "https://api.test/repos/octo/hello/issues/comments?sort=updated&direction=asc&per_page=2";
  const absl::Time d0 = clock_.Now();
  auto date = [](absl::Time t) {
    return absl::FormatTime("%a, %d %b %Y %H:%M:%S GMT", t, absl::UTCTimeZone());
  };
  const std::string moved = FormatRfc3339(d0 + absl::Seconds(5));
  const std::string p2 = issues + "&page=2";
  ScriptRepo();
  http_.Respond(issues, 200, Page({IssueJson(1, T(1)), IssueJson(2, T(2))}),
                {{"Date", date(d0)}, {"Link", "<" + p2 + ">; rel=\"next\""}});
  http_.Respond(p2, 200, Page({IssueJson(4, T(4)), IssueJson(2, moved)}),
                {{"Date", date(d0 + absl::Seconds(10))}});
  // Repair pass from the last updated_at before page 2 (issue 2's old T(2)).
  http_.Respond(issues + Since(2), 200,
                Page({IssueJson(3, T(3)), IssueJson(4, T(4)), IssueJson(2, moved)}),
                {{"Date", date(d0 + absl::Seconds(20))}});
  // The repaired listing is stable and its cursor moved to issue 2's new updated_at: one
  // confirmation page from there.
  const std::string confirm = issues + SinceAt(d0 + absl::Seconds(5));
  http_.Respond(confirm, 200, Page({IssueJson(2, moved)}),
                {{"Date", date(d0 + absl::Seconds(21))}, {"ETag", "\"ci\""}});
  http_.Respond(comments, 200, "[]", {{"ETag", "\"c\""}});

  auto result = Crawl(Lease());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(store_->GetIssue("github:octo/hello", 3).ok());
  EXPECT_EQ(http_.Urls(),
            (std::vector<std::string>{kRepoUrl, issues, p2, issues + Since(2), confirm, comments}));
  EXPECT_EQ(result->counters.requests(), 6);
  EXPECT_EQ(FormatRfc3339(FromProto(result->cursor->issues_since())), moved);
  EXPECT_EQ(result->cursor->issues_etag(), "\"ci\"");
  // The empty comment listing did not move: its own first page's ETag is kept.
  EXPECT_FALSE(result->cursor->has_comments_since());
  EXPECT_EQ(result->cursor->comments_etag(), "\"c\"");
  EXPECT_EQ(http_.Pending(), 0u);
}

TEST_F(RepoCrawlerTest, UnstableListingKeepsTheLastRepairSince) {
  options_.max_repair_passes = 1;
  const absl::Time d0 = clock_.Now();
  auto date = [](absl::Time t) {
    return absl::FormatTime("%a, %d %b %Y %H:%M:%S GMT", t, absl::UTCTimeZone());
  };
  const std::string p2 = std::string(kIssues) + "&page=2";
  const std::string fresh = FormatRfc3339(d0 + absl::Seconds(5));
  ScriptRepo();
  http_.Respond(kIssues, 200, Page({IssueJson(1, T(1))}),
                {{"Date", date(d0)}, {"Link", "<" + p2 + ">; rel=\"next\""}});
  http_.Respond(p2, 200, Page({IssueJson(2, fresh)}), {{"Date", date(d0 + absl::Seconds(9))}});
  const std::string fresher = FormatRfc3339(d0 + absl::Seconds(30));
  // The repair pass spans two pages and sees a change again: still unstable.
  const std::string r2 = kIssues + Since(1) + "&page=2";
  http_.Respond(kIssues + Since(1), 200, Page({IssueJson(1, T(1))}),
                {{"Date", date(d0 + absl::Seconds(20))}, {"Link", "<" + r2 + ">; rel=\"next\""}});
  http_.Respond(r2, 200, Page({IssueJson(2, fresher)}), {{"Date", date(d0 + absl::Seconds(30))}});
  http_.Respond(kComments, 200, "[]");
  auto result = Crawl(Lease());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(FormatRfc3339(FromProto(result->cursor->issues_since())), T(1));
}

TEST_F(RepoCrawlerTest, OnePageListingWithAFreshItemNeedsNoRepair) {
  // An item updated in the same second the page was served: a single page has no boundary at
  // which anything could have been skipped, so no repair request is sent.
  const absl::Time d0 = clock_.Now();
  const std::string date =
      absl::FormatTime("%a, %d %b %Y %H:%M:%S GMT", d0, absl::UTCTimeZone());
  ScriptRepo();
  http_.Respond(kIssues, 200, Page({IssueJson(1, T(1)), IssueJson(2, FormatRfc3339(d0))}),
                {{"Date", date}});
  // The confirmation page is a one-page listing too, its item also fresh: still no repair.
  http_.Respond(kIssues + SinceAt(d0), 200, Page({IssueJson(2, FormatRfc3339(d0))}),
                {{"Date", date}, {"ETag", "\"ci\""}});
  http_.Respond(kComments, 200, "[]");
  auto result = Crawl(Lease());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(http_.Urls(),
            (std::vector<std::string>{kRepoUrl, kIssues, kIssues + SinceAt(d0), kComments}));
  EXPECT_EQ(FormatRfc3339(FromProto(result->cursor->issues_since())), FormatRfc3339(d0));
  EXPECT_EQ(result->cursor->issues_etag(), "\"ci\"");
}

TEST_F(RepoCrawlerTest, SpentRateBudgetWaitsUntilResetBeforeTheNextRequest) {
  const absl::Time start = clock_.Now();
  const absl::Time reset = start + absl::Seconds(120);
  ScriptRepo({{"X-RateLimit-Remaining", "0"},
              {"X-RateLimit-Reset", absl::StrCat(absl::ToUnixSeconds(reset))}});
  http_.Respond(kIssues, 200, "[]", {{"X-RateLimit-Remaining", "4999"}});
  http_.Respond(kComments, 200, "[]");
  auto result = Crawl(Lease());
  ASSERT_TRUE(result.ok()) << result.status();
  const auto reqs = http_.Requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].at, start);
  EXPECT_GE(reqs[1].at, reset + absl::Seconds(1));
  EXPECT_LT(reqs[1].at, reset + absl::Seconds(3));
  EXPECT_EQ(reqs[2].at, reqs[1].at);
  EXPECT_EQ(result->rate_remaining, 4999);
  EXPECT_EQ(result->counters.retries(), 0);
}

TEST_F(RepoCrawlerTest, CrawlsSharingATokenShareItsSpentBudget) {
  // Crawl A's last response says the token's budget is spent; crawl B, a different crawler
  // sharing the token's pool, must not send anything before the reset. Without a shared pool
  // (the control: each crawler makes its own), B would start at once.
  for (const bool shared : {true, false}) {
    SCOPED_TRACE(shared ? "shared budget" : "separate budgets");
    const size_t base = http_.Requests().size();
    const absl::Time start = clock_.Now();
    const absl::Time reset = start + absl::Seconds(300);
    const Headers spent = {{"X-RateLimit-Remaining", "0"},
                           {"X-RateLimit-Reset", absl::StrCat(absl::ToUnixSeconds(reset))}};
    options_.pools[v1::TRACKER_GITHUB] =
        shared ? OneTokenPool(v1::TRACKER_GITHUB, kToken, &clock_, RequestLoopOptions()) : nullptr;
    ScriptRepo();
    http_.Respond(kIssues, 200, "[]");
    http_.Respond(kComments, 200, "[]", spent);
    ASSERT_TRUE(Crawl(Lease()).ok());
    ASSERT_EQ(http_.Requests().size(), base + 3);
    EXPECT_LT(http_.Requests().back().at, reset);

    ScriptRepo();
    http_.Respond(kIssues, 200, "[]");
    http_.Respond(kComments, 200, "[]");
    ASSERT_TRUE(Crawl(Lease()).ok());
    ASSERT_EQ(http_.Requests().size(), base + 6);
    if (shared) {
      EXPECT_GE(http_.Requests()[base + 3].at, reset + absl::Seconds(1));
    } else {
      EXPECT_LT(http_.Requests()[base + 3].at, reset);
    }
  }
}

TEST_F(RepoCrawlerTest, SecondaryRateLimitWaitsForRetryAfter) {
  ScriptRepo();
  http_.Respond(kIssues, 403,
                R"({"message": "You have exceeded a secondary rate limit. Please wait."})",
                {{"Retry-After", "30"}});
  http_.Respond(kIssues, 200, Page({IssueJson(1, T(1))}));
  http_.Respond(kIssues + Since(1), 200, Page({IssueJson(1, T(1))}));
  http_.Respond(kComments, 200, "[]");
  auto result = Crawl(Lease());
  ASSERT_TRUE(result.ok()) << result.status();
  const auto reqs = http_.Requests();
  ASSERT_EQ(reqs.size(), 5u);  // repo, issues (403), issues, confirmation, comments
  EXPECT_EQ(reqs[2].request.url, kIssues);
  EXPECT_EQ(reqs[3].request.url, kIssues + Since(1));
  EXPECT_GE(reqs[2].at - reqs[1].at, absl::Seconds(30));
  EXPECT_EQ(reqs[3].at, reqs[2].at);  // the confirmation is not delayed
  EXPECT_EQ(result->counters.retries(), 1);
  EXPECT_EQ(result->counters.issues_stored(), 1);
}

TEST_F(RepoCrawlerTest, PlainForbiddenIsNotRetried) {
  ScriptRepo();
  http_.Respond(kIssues, 403, R"({"message": "Resource not accessible by integration"})");
  auto result = Crawl(Lease());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(http_.Requests().size(), 2u);
}

TEST_F(RepoCrawlerTest, ServerErrorsAreRetriedWithBackoff) {
  ScriptRepo();
  http_.Respond(kIssues, 502, "bad gateway");
  http_.Fail(kIssues, absl::UnavailableError("connection reset"));
  http_.Respond(kIssues, 503, "");
  http_.Respond(kIssues, 200, Page({IssueJson(1, T(1))}));
  http_.Respond(kIssues + Since(1), 200, Page({IssueJson(1, T(1))}));
  http_.Respond(kComments, 200, "[]");
  auto result = Crawl(Lease());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->counters.retries(), 3);
  EXPECT_EQ(result->counters.requests(), 7);  // repo, 4 tries of issues, confirmation, comments
  EXPECT_EQ(http_.Pending(), 0u);
  const auto reqs = http_.Requests();
  // Jittered exponential backoff: 0.5–1 s, 1–2 s, 2–4 s.
  EXPECT_GE(reqs[2].at - reqs[1].at, absl::Milliseconds(500));
  EXPECT_LE(reqs[2].at - reqs[1].at, absl::Seconds(1));
  EXPECT_GE(reqs[4].at - reqs[3].at, absl::Seconds(2));
  EXPECT_LE(reqs[4].at - reqs[3].at, absl::Seconds(4));
}

TEST_F(RepoCrawlerTest, ExhaustedRetriesNameTheUrlAndStatusButNotTheToken) {
  options_.max_retries = 2;
  ScriptRepo();
  for (int i = 0; i < 3; ++i) http_.Respond(kIssues, 500, "oops");
  auto result = Crawl(Lease());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable);
  const std::string msg(result.status().message());
  EXPECT_NE(msg.find(kIssues), std::string::npos) << msg;
  EXPECT_NE(msg.find("HTTP 500"), std::string::npos) << msg;
  EXPECT_NE(msg.find("2 retries"), std::string::npos) << msg;
  EXPECT_EQ(msg.find(kToken), std::string::npos) << msg;
}

TEST_F(RepoCrawlerTest, MissingRepositoryIsGone) {
  http_.Respond(kRepoUrl, 404, R"({"message": "Not Found"})");
  auto result = Crawl(Lease());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(result.status().message().find("gone"), absl::string_view::npos);
}

TEST_F(RepoCrawlerTest, MovedRepositoryIsFollowedOnceAndReported) {
  http_.Respond(kRepoUrl, 301, R"({"message": "Moved Permanently"})",
                {{"Location", "https://api.test/repositories/42"}});
  http_.Respond("https://api.test/repositories/42", 200,
                R"({"full_name": "neworg/Hello2", "open_issues_count": 0})");
  const std::string issues =
      "https://api.test/repos/neworg/Hello2/issues?state=all&sort=updated&direction=asc&per_page=100";
  const std::string comments =
      "https://api.test/repos/neworg/Hello2/issues/comments?sort=updated&direction=asc&per_page=100";
  http_.Respond(issues, 200, Page({IssueJson(1, T(1))}));
  // The confirmation page goes to the new location as well.
  http_.Respond(issues + Since(1), 200, Page({IssueJson(1, T(1))}));
  http_.Respond(comments, 200, "[]");
  auto result = Crawl(Lease());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(http_.Urls(),
            (std::vector<std::string>{kRepoUrl, "https://api.test/repositories/42", issues,
                                      issues + Since(1), comments}));
  EXPECT_EQ(result->moved_to, "github:neworg/Hello2");
  EXPECT_TRUE(store_->GetIssue("github:octo/hello", 1).ok());
}

TEST_F(RepoCrawlerTest, RelativeRedirectsResolveAgainstTheUrlRequested) {
  // "/repositories/42" is absolute-path; "hello-renamed" is path-relative: it replaces the last
  // segment of the URL requested (https://api.test/repos/octo/hello), not of the API base.
  struct Case {
    std::string location;
    std::string resolved;
  };
  for (const Case& c : {Case{"/repositories/42", "https://api.test/repositories/42"},
                        Case{"hello-renamed", "https://api.test/repos/octo/hello-renamed"}}) {
    SCOPED_TRACE(c.location);
    const size_t base = http_.Requests().size();
    http_.Respond(kRepoUrl, 301, "", {{"Location", c.location}});
    http_.Respond(c.resolved, 200, R"({"full_name": "octo/hello", "open_issues_count": 0})");
    http_.Respond(kIssues, 200, "[]");
    http_.Respond(kComments, 200, "[]");
    auto result = Crawl(Lease());
    ASSERT_TRUE(result.ok()) << result.status();
    ASSERT_GE(http_.Urls().size(), base + 2);
    EXPECT_EQ(http_.Urls()[base + 1], c.resolved);
  }
}

TEST_F(RepoCrawlerTest, RedirectToAnotherHostIsRefusedNamingTheLocationSent) {
  http_.Respond(kRepoUrl, 302, "", {{"Location", "https://evil.example/repos/octo/hello"}});
  auto result = Crawl(Lease());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(result.status().message().find("evil.example/repos/octo/hello"), std::string::npos)
      << result.status();
  EXPECT_EQ(http_.Requests().size(), 1u);  // the token never went there
}

TEST_F(RepoCrawlerTest, PullRequestsAndTheirCommentsAreDroppedUnlessIncluded) {
  for (bool include : {false, true}) {
    store_.reset();  // a fresh store per round (the old one must close before its Env goes)
    SetUp();
    ScriptRepo();
    http_.Respond(kIssues, 200, Page({IssueJson(1, T(1)), IssueJson(2, T(2), /*pr=*/true)}));
    // The confirmation pages list what is at each cursor: pull request 2 and its comment 12.
    http_.Respond(kIssues + Since(2), 200, Page({IssueJson(2, T(2), /*pr=*/true)}));
    http_.Respond(kComments, 200,
                  Page({CommentJson(10, 1, T(3)), CommentJson(11, 2, T(4), /*pr=*/true),
                        CommentJson(12, 2, T(5))}));
    http_.Respond(kComments + Since(5), 200, Page({CommentJson(12, 2, T(5))}));
    v1::Lease lease = Lease();
    lease.set_include_pull_requests(include);
    auto result = Crawl(lease);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->counters.requests(), 5);
    EXPECT_EQ(http_.Pending(), 0u);
    EXPECT_EQ(result->counters.issues_fetched(), include ? 3 : 1);
    EXPECT_EQ(result->counters.comments_fetched(), include ? 4 : 1);
    EXPECT_EQ(result->counters.issues_stored(), include ? 2 : 1);
    EXPECT_EQ(result->counters.comments_stored(), include ? 3 : 1);
    EXPECT_EQ(store_->GetIssue("github:octo/hello", 2).ok(), include);
    // The cursor covers dropped items too.
    EXPECT_EQ(FormatRfc3339(FromProto(result->cursor->issues_since())), T(2));
    EXPECT_EQ(FormatRfc3339(FromProto(result->cursor->comments_since())), T(5));
  }
}

TEST_F(RepoCrawlerTest, UnchangedRepositoryAfterAFullCrawlCostsThree304s) {
  // The full crawl learns the ETag of exactly the three URLs the next crawl sends.
  ScriptRepo({{"ETag", "W/\"r\""}});
  http_.Respond(kIssues, 200, Page({IssueJson(1, T(1)), IssueJson(2, T(2))}),
                {{"ETag", "W/\"i-first\""}});
  http_.Respond(kIssues + Since(2), 200, Page({IssueJson(2, T(2))}), {{"ETag", "W/\"i\""}});
  http_.Respond(kComments, 200, Page({CommentJson(7, 1, T(3))}), {{"ETag", "W/\"c-first\""}});
  http_.Respond(kComments + Since(3), 200, Page({CommentJson(7, 1, T(3))}),
                {{"ETag", "W/\"c\""}});
  auto full = Crawl(Lease());
  ASSERT_TRUE(full.ok()) << full.status();
  ASSERT_TRUE(full->cursor.has_value());
  EXPECT_EQ(full->cursor->repo_etag(), "W/\"r\"");
  EXPECT_EQ(full->cursor->issues_etag(), "W/\"i\"");
  EXPECT_EQ(full->cursor->comments_etag(), "W/\"c\"");
  const uint64_t seq = store_->last_seq();
  const size_t before = http_.Requests().size();
  ASSERT_EQ(before, 5u);

  v1::Lease lease = Lease(v1::CRAWL_MODE_INCREMENTAL);
  *lease.mutable_cursor() = *full->cursor;
  http_.Respond(kRepoUrl, 304, "");
  http_.Respond(kIssues + Since(2), 304, "");
  http_.Respond(kComments + Since(3), 304, "");
  auto again = Crawl(lease);
  ASSERT_TRUE(again.ok()) << again.status();
  const auto reqs = http_.Requests();
  ASSERT_EQ(reqs.size(), before + 3);
  EXPECT_EQ(reqs[before].request.url, kRepoUrl);
  EXPECT_EQ(reqs[before].request.headers.Get("If-None-Match"), "W/\"r\"");
  EXPECT_EQ(reqs[before + 1].request.url, kIssues + Since(2));
  EXPECT_EQ(reqs[before + 1].request.headers.Get("If-None-Match"), "W/\"i\"");
  EXPECT_EQ(reqs[before + 2].request.url, kComments + Since(3));
  EXPECT_EQ(reqs[before + 2].request.headers.Get("If-None-Match"), "W/\"c\"");
  EXPECT_EQ(again->counters.requests(), 3);
  EXPECT_EQ(again->counters.not_modified(), 3);
  EXPECT_EQ(again->counters.issues_fetched(), 0);
  EXPECT_EQ(again->counters.comments_fetched(), 0);
  EXPECT_EQ(store_->last_seq(), seq);  // nothing stored
  EXPECT_EQ(again->cursor->SerializeAsString(), full->cursor->SerializeAsString());
  EXPECT_EQ(http_.Pending(), 0u);
}

TEST_F(RepoCrawlerTest, ConfirmationRoundsFollowNewItemsForAtMostFourRounds) {
  // Every round lists from the previous round's cursor. The first `moving` rounds each find a
  // newer item, so the cursor moves again; the round after them finds only the items at the
  // cursor and its ETag is kept. With 4 moving rounds the crawl stops at the limit: the cursor
  // is where the 4th round ended, and no ETag is stored (none belongs to that since).
  struct Case {
    int moving;
    std::string etag;
  };
  for (const Case& c : {Case{1, "\"r2\""}, Case{2, "\"r3\""}, Case{3, "\"r4\""}, Case{4, ""}}) {
    SCOPED_TRACE(c.moving);
    store_.reset();
    SetUp();
    const size_t seen = http_.Requests().size();  // the fake keeps earlier cases' requests
    ScriptRepo();
    std::vector<std::string> want = {kRepoUrl};
    const int rounds = std::min(c.moving + 1, 4);
    for (int r = 1; r <= rounds; ++r) {
      // Round r lists from T(r - 1) (round 1 from the start); a moving round ends at T(r).
      const std::string url = r == 1 ? std::string(kIssues) : kIssues + Since(r - 1);
      std::vector<nlohmann::json> items;
      if (r > 1) items.push_back(IssueJson(r - 1, T(r - 1)));
      if (r <= c.moving) items.push_back(IssueJson(r, T(r)));
      http_.Respond(url, 200, Page(items), {{"ETag", absl::StrCat("\"r", r, "\"")}});
      want.push_back(url);
    }
    http_.Respond(kComments, 200, "[]");
    want.push_back(kComments);

    auto result = Crawl(Lease());
    ASSERT_TRUE(result.ok()) << result.status();
    const std::vector<std::string> urls = http_.Urls();
    EXPECT_EQ(std::vector<std::string>(urls.begin() + seen, urls.end()), want);
    EXPECT_EQ(result->counters.requests(), static_cast<int64_t>(want.size()));
    EXPECT_EQ(result->counters.issues_stored(), c.moving);
    EXPECT_EQ(FormatRfc3339(FromProto(result->cursor->issues_since())), T(c.moving));
    EXPECT_EQ(result->cursor->issues_etag(), c.etag);
    for (int n = 1; n <= c.moving; ++n) EXPECT_TRUE(store_->GetIssue("github:octo/hello", n).ok());
    EXPECT_EQ(http_.Pending(), 0u);
  }
}

TEST_F(RepoCrawlerTest, RepositoryEtagIsSentOnIncrementalCrawlsAnd304KeepsIt) {
  struct Case {
    v1::CrawlMode mode;
    int status;                  // of the repository GET
    std::string sent;            // If-None-Match expected on the repository GET
    std::string stored;          // cursor.repo_etag afterwards
    int64_t not_modified;
    int64_t issues_estimated;
  };
  const std::vector<Case> cases = {
      // Unchanged repository: 304, the etag stays, the estimate is unknown; the listings still
      // run (the repository object does not change when issues do).
      {v1::CRAWL_MODE_INCREMENTAL, 304, "\"r1\"", "\"r1\"", 1, 0},
      // Changed repository: 200 replaces the etag.
      {v1::CRAWL_MODE_INCREMENTAL, 200, "\"r1\"", "\"r2\"", 0, 3},
      // A full crawl ignores the lease's cursor: unconditional, and the new etag is stored.
      {v1::CRAWL_MODE_FULL, 200, "", "\"r2\"", 0, 3},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.mode, "/", c.status));
    store_.reset();
    SetUp();
    const size_t seen = http_.Requests().size();  // the fake keeps earlier cases' requests
    v1::Lease lease = Lease(c.mode);
    *lease.mutable_cursor()->mutable_issues_since() = ToProto(*ParseRfc3339(T(10)));
    lease.mutable_cursor()->set_repo_etag("\"r1\"");
    if (c.status == 304) {
      http_.Respond(kRepoUrl, 304, "");
    } else {
      ScriptRepo({{"ETag", "\"r2\""}});
    }
    const bool incremental = c.mode == v1::CRAWL_MODE_INCREMENTAL;
    const std::string issues = incremental ? kIssues + Since(10) : std::string(kIssues);
    http_.Respond(issues, 200, Page({IssueJson(7, T(30))}));
    http_.Respond(kIssues + Since(30), 200, Page({IssueJson(7, T(30))}), {{"ETag", "\"i\""}});
    http_.Respond(kComments, 200, "[]", {{"ETag", "\"c\""}});

    auto result = Crawl(lease);
    ASSERT_TRUE(result.ok()) << result.status();
    const auto all = http_.Requests();
    const std::vector<testing::Recorded> reqs(all.begin() + seen, all.end());
    ASSERT_EQ(reqs.size(), 4u);
    EXPECT_EQ(result->counters.requests(), 4);
    EXPECT_EQ(reqs[0].request.url, kRepoUrl);
    EXPECT_EQ(reqs[0].request.headers.Get("If-None-Match"), c.sent);
    EXPECT_EQ(reqs[0].request.headers.Has("If-None-Match"), !c.sent.empty());
    EXPECT_EQ(reqs[1].request.url, issues);
    EXPECT_EQ(result->cursor->repo_etag(), c.stored);
    EXPECT_EQ(result->counters.not_modified(), c.not_modified);
    EXPECT_EQ(result->issues_estimated, c.issues_estimated);
    EXPECT_EQ(result->counters.issues_stored(), 1);
    EXPECT_EQ(FormatRfc3339(FromProto(result->cursor->issues_since())), T(30));
    EXPECT_EQ(result->cursor->issues_etag(), "\"i\"");
    EXPECT_EQ(http_.Pending(), 0u);
  }
}

TEST_F(RepoCrawlerTest, EtagIsKeptOnlyWhenTheFirstPageHeldTheWholeListing) {
  // Incremental crawls whose listing stays at the cursor (every item at T(10)). A new item
  // would sort last: on a full first page, or behind rel="next", it would not change page 1,
  // so that page's ETag must not be stored (the next crawl would get 304 and miss the item).
  options_.per_page = 2;
  const std::string issues =
      "https://api.test/repos/octo/hello/issues?state=all&sort=updated&direction=asc&per_page=2" +
      Since(10);
  const std::string comments =
      "https://api.test/repos/octo/hello/issues/comments?sort=updated&direction=asc&per_page=2";
  struct Case {
    int items_on_page1;
    bool next;
    std::string etag;
  };
  for (const Case& c : {Case{1, false, "\"p1\""}, Case{2, false, ""}, Case{2, true, ""}}) {
    SCOPED_TRACE(absl::StrCat(c.items_on_page1, c.next ? " + next" : ""));
    store_.reset();
    SetUp();
    v1::Lease lease = Lease(v1::CRAWL_MODE_INCREMENTAL);
    *lease.mutable_cursor()->mutable_issues_since() = ToProto(*ParseRfc3339(T(10)));
    ScriptRepo();
    std::vector<nlohmann::json> page1;
    for (int n = 1; n <= c.items_on_page1; ++n) page1.push_back(IssueJson(n, T(10)));
    Headers h = {{"ETag", "\"p1\""}};
    const std::string p2 = issues + "&page=2";
    if (c.next) h.emplace_back("Link", "<" + p2 + ">; rel=\"next\"");
    http_.Respond(issues, 200, Page(page1), h);
    if (c.next) http_.Respond(p2, 200, Page({IssueJson(3, T(10))}), {{"ETag", "\"p2\""}});
    http_.Respond(comments, 200, "[]");

    auto result = Crawl(lease);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->counters.requests(), c.next ? 4 : 3);  // the cursor did not move
    EXPECT_EQ(FormatRfc3339(FromProto(result->cursor->issues_since())), T(10));
    EXPECT_EQ(result->cursor->issues_etag(), c.etag);
    EXPECT_EQ(http_.Pending(), 0u);
  }
}

TEST_F(RepoCrawlerTest, StaleEpochIsFenced) {
  v1::Issue newer;
  newer.set_number(99);
  *newer.mutable_updated_at() = ToProto(absl::FromUnixSeconds(1));
  ASSERT_TRUE(store_->ApplyIssues("github:octo/hello", 5, {newer}).ok());
  ScriptRepo();
  http_.Respond(kIssues, 200, Page({IssueJson(1, T(1))}));
  auto result = Crawl(Lease());  // epoch 1 < 5
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(store_->GetIssue("github:octo/hello", 1).ok());
}

TEST_F(RepoCrawlerTest, CancelStopsTheCrawlBeforeTheNextRequest) {
  ScriptRepo({{"X-RateLimit-Remaining", "0"},
              {"X-RateLimit-Reset", absl::StrCat(absl::ToUnixSeconds(clock_.Now()) + 600)}});
  RepoCrawler crawler(&http_, store_.get(), &clock_, options_);
  crawler.Cancel();
  auto result = crawler.Crawl(Lease(), [](const CrawlProgress&) { return absl::OkStatus(); });
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace issuescope::crawler

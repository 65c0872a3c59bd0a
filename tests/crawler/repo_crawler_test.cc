// RepoCrawler against a scripted FakeTransport, a FakeClock and a real IssueStore on RocksDB's
// in-memory Env: request economy, cursors and ETags, shift repair, rate limits, retries, and
// errors.
#include "crawler/repo_crawler.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/time_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "rocksdb/env.h"
#include "tests/crawler/fake_transport.h"

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

std::string Since(int second) {
  std::string t = T(second);
  std::string out;
  for (char c : t) out += c == ':' ? std::string("%3A") : std::string(1, c);
  return absl::StrCat("&since=", out);
}

class RepoCrawlerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.reset(rocksdb::NewMemEnv(rocksdb::Env::Default()));
    StoreOptions so;
    so.env = env_.get();
    auto store = IssueStore::Open("/store", so);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
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
  ScriptRepo();
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
  http_.Respond(kComments, 200, Page({CommentJson(50, 1, T(5)), CommentJson(51, 3, T(6))}));

  auto result = Crawl(Lease());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(http_.Urls(), (std::vector<std::string>{kRepoUrl, kIssues, p2, p3, kComments}));
  EXPECT_EQ(result->counters.requests(), 5);
  EXPECT_EQ(result->counters.issues_fetched(), 4);
  EXPECT_EQ(result->counters.issues_stored(), 4);
  EXPECT_EQ(result->counters.comments_stored(), 2);
  EXPECT_EQ(result->issues_estimated, 3);
  EXPECT_TRUE(result->done);
  ASSERT_TRUE(result->cursor.has_value());
  EXPECT_EQ(FormatRfc3339(FromProto(result->cursor->issues_since())), T(4));
  EXPECT_EQ(FormatRfc3339(FromProto(result->cursor->comments_since())), T(6));
  EXPECT_EQ(result->cursor->issues_etag(), "");  // the cursor moved: the etag belongs to no since
  ASSERT_EQ(reports_.size(), 5u);                 // 4 pages + the final report
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
    http_.Respond(kComments, 200, Page({CommentJson(7, 1, T(3))}));
  }
  auto first = Crawl(Lease());
  ASSERT_TRUE(first.ok()) << first.status();
  const uint64_t seq = store_->last_seq();
  EXPECT_EQ(seq, 3u);
  auto second = Crawl(Lease());
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->counters.issues_fetched(), 2);
  EXPECT_EQ(second->counters.issues_stored(), 0);
  EXPECT_EQ(second->counters.comments_stored(), 0);
  EXPECT_EQ(store_->last_seq(), seq);
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
  http_.Respond(comments, 200, "[]");

  auto result = Crawl(Lease());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(store_->GetIssue("github:octo/hello", 3).ok());
  EXPECT_EQ(result->counters.requests(), 5);
  EXPECT_EQ(FormatRfc3339(FromProto(result->cursor->issues_since())), moved);
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
  http_.Respond(kComments, 200, "[]");
  auto result = Crawl(Lease());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(http_.Requests().size(), 3u);
  EXPECT_EQ(FormatRfc3339(FromProto(result->cursor->issues_since())), FormatRfc3339(d0));
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

TEST_F(RepoCrawlerTest, SecondaryRateLimitWaitsForRetryAfter) {
  ScriptRepo();
  http_.Respond(kIssues, 403,
                R"({"message": "You have exceeded a secondary rate limit. Please wait."})",
                {{"Retry-After", "30"}});
  http_.Respond(kIssues, 200, Page({IssueJson(1, T(1))}));
  http_.Respond(kComments, 200, "[]");
  auto result = Crawl(Lease());
  ASSERT_TRUE(result.ok()) << result.status();
  const auto reqs = http_.Requests();
  ASSERT_EQ(reqs.size(), 4u);
  EXPECT_GE(reqs[2].at - reqs[1].at, absl::Seconds(30));
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
  http_.Respond(kComments, 200, "[]");
  auto result = Crawl(Lease());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->counters.retries(), 3);
  EXPECT_EQ(result->counters.requests(), 6);
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

TEST_F(RepoCrawlerTest, InvalidJsonStoresNothingAndNamesTheUrl) {
  ScriptRepo();
  http_.Respond(kIssues, 200, "[{\"id\": 1, \"number\": 1, \"updated_at\": ");
  auto result = Crawl(Lease());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find(kIssues), absl::string_view::npos) << result.status();
  EXPECT_NE(result.status().message().find("invalid JSON"), absl::string_view::npos);
  EXPECT_EQ(store_->last_seq(), 0u);
}

TEST_F(RepoCrawlerTest, ProgressErrorStopsTheCrawlAtOnce) {
  progress_status_ = absl::FailedPreconditionError("lease epoch 1 is stale");
  ScriptRepo();
  const std::string p2 = std::string(kIssues) + "&page=2";
  http_.Respond(kIssues, 200, Page({IssueJson(1, T(1))}), {{"Link", "<" + p2 + ">; rel=\"next\""}});
  http_.Respond(p2, 200, Page({IssueJson(2, T(2))}));
  auto result = Crawl(Lease());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(http_.Requests().size(), 2u);
  EXPECT_EQ(reports_.size(), 1u);
}

TEST_F(RepoCrawlerTest, TokensInUrlsAreRedacted) {
  ScriptRepo();
  const std::string p2 = "https://api.test/x?page=2&access_token=" + std::string(kToken);
  http_.Respond(kIssues, 200, Page({IssueJson(1, T(1))}), {{"Link", "<" + p2 + ">; rel=\"next\""}});
  http_.Respond(p2, 422, R"({"message": "Validation Failed"})");
  auto result = Crawl(Lease());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(result.status().message().find(kToken), absl::string_view::npos) << result.status();
  EXPECT_NE(result.status().message().find("REDACTED"), absl::string_view::npos);
}

TEST_F(RepoCrawlerTest, NextLinkToAnotherHostIsRefused) {
  ScriptRepo();
  http_.Respond(kIssues, 200, Page({IssueJson(1, T(1))}),
                {{"Link", "<https://evil.example/steal?page=2>; rel=\"next\""}});
  auto result = Crawl(Lease());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(http_.Requests().size(), 2u);
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
  http_.Respond(
      "https://api.test/repos/neworg/Hello2/issues?state=all&sort=updated&direction=asc&per_page=100",
      200, Page({IssueJson(1, T(1))}));
  http_.Respond(
      "https://api.test/repos/neworg/Hello2/issues/comments?sort=updated&direction=asc&per_page=100",
      200, "[]");
  auto result = Crawl(Lease());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->moved_to, "github:neworg/Hello2");
  EXPECT_TRUE(store_->GetIssue("github:octo/hello", 1).ok());
}

TEST_F(RepoCrawlerTest, PullRequestsAndTheirCommentsAreDroppedUnlessIncluded) {
  for (bool include : {false, true}) {
    store_.reset();  // a fresh store per round (the old one must close before its Env goes)
    SetUp();
    ScriptRepo();
    http_.Respond(kIssues, 200, Page({IssueJson(1, T(1)), IssueJson(2, T(2), /*pr=*/true)}));
    http_.Respond(kComments, 200,
                  Page({CommentJson(10, 1, T(3)), CommentJson(11, 2, T(4), /*pr=*/true),
                        CommentJson(12, 2, T(5))}));
    v1::Lease lease = Lease();
    lease.set_include_pull_requests(include);
    auto result = Crawl(lease);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->counters.issues_stored(), include ? 2 : 1);
    EXPECT_EQ(result->counters.comments_stored(), include ? 3 : 1);
    EXPECT_EQ(store_->GetIssue("github:octo/hello", 2).ok(), include);
    // The cursor covers dropped items too.
    EXPECT_EQ(FormatRfc3339(FromProto(result->cursor->issues_since())), T(2));
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

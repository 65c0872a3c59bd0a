// RepoCrawler against a hostile or broken tracker (issue 16, items 6-9 and 14), scripted on a
// FakeTransport with a FakeClock: a next page that loops or follows empty pages, an updated_at
// far beyond the tracker's clock, nulls and foreign URLs in items, one wrongly typed item, and
// the request count a failed crawl reports. Each case asserts what a user would notice: the
// crawl stops quickly with an error naming the repository and the URL, or goes on and stores
// the good items; the cursor never moves past what was seen; bad items are quarantined.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/time_util.h"
#include "crawler/repo_crawler.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/crawler/crawl_test_util.h"
#include "tests/crawler/fake_transport.h"
#include "tests/crawler/mem_store.h"

namespace issuescope::crawler {
namespace {

using testing::At;
using testing::FakeTransport;
using testing::kTestComments;
using testing::kTestIssues;
using testing::kTestRepoUrl;
using testing::SinceParam;
using testing::TestComment;
using testing::TestIssue;
using testing::TestLease;
using testing::TestPage;
using Headers = std::vector<std::pair<std::string, std::string>>;

constexpr char kSlug[] = "github:octo/hello";

// HttpDate formats 2023-01-01T00:00:00Z + `second` as an HTTP Date header.
std::string HttpDate(int second) {
  return absl::FormatTime("%a, %d %b %Y %H:%M:%S GMT", absl::FromUnixSeconds(1672531200 + second),
                          absl::UTCTimeZone());
}

class HostileTrackerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(OpenMemStore(&env_, &store_));
    options_.token = "ghp_hostile_secret";
    options_.max_retries = 3;
  }

  void ScriptRepo() { http_.Respond(kTestRepoUrl, 200, R"({"full_name": "octo/hello"})"); }

  absl::StatusOr<CrawlProgress> Crawl(const v1::Lease& lease) {
    RepoCrawler crawler(&http_, store_.get(), &clock_, options_);
    reports_.clear();
    return crawler.Crawl(
        lease,
        [&](const CrawlProgress& p) {
          reports_.push_back(p);
          return absl::OkStatus();
        },
        &counters_);
  }

  bool Stored(int number) { return store_->GetIssue(kSlug, number).ok(); }

  // Quarantined returns "key: error" of every quarantined item of the test repository.
  std::vector<std::string> Quarantined() {
    std::vector<std::string> out;
    EXPECT_TRUE(store_
                    ->ScanQuarantined(kSlug,
                                      [&](const std::string&, const QuarantinedItem& q) {
                                        out.push_back(absl::StrCat(q.listing, " ", q.key, ": ",
                                                                   q.error));
                                        return true;
                                      })
                    .ok());
    return out;
  }

  // NoReportMovedTheIssueCursorPast checks that no progress report carried an issues cursor
  // beyond `second`.
  void NoReportMovedTheIssueCursorPast(int second) {
    for (const CrawlProgress& p : reports_) {
      if (!p.cursor || !p.cursor->has_issues_since()) continue;
      EXPECT_LE(FromProto(p.cursor->issues_since()), absl::FromUnixSeconds(1672531200 + second));
    }
  }

  std::unique_ptr<rocksdb::Env> env_;
  std::unique_ptr<IssueStore> store_;
  FakeClock clock_;
  FakeTransport http_{&clock_};
  CrawlerOptions options_;
  std::vector<CrawlProgress> reports_;
  v1::CrawlCounters counters_;
};

// Item 6: page 2 names page 1 as its next page. Before the fix the crawl went round until the
// budget was spent (here: until the script ran out, 40 requests).
TEST_F(HostileTrackerTest, NextPageRepeatingAListedUrlStopsWithAnErrorNamingRepoAndUrl) {
  ScriptRepo();
  const std::string p2 = "https://api.test/repositories/9/issues?page=2&per_page=100";
  for (int i = 0; i < 20; ++i) {
    http_.Respond(kTestIssues, 200, TestPage({TestIssue(1, 10), TestIssue(2, 20)}),
                  {{"Link", absl::StrCat("<", p2, ">; rel=\"next\"")}});
    http_.Respond(p2, 200, TestPage({TestIssue(3, 30)}),
                  {{"Link", absl::StrCat("<", kTestIssues, ">; rel=\"next\"")}});
  }
  auto result = Crawl(TestLease());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << result.status();
  EXPECT_NE(result.status().message().find(kSlug), absl::string_view::npos) << result.status();
  EXPECT_NE(result.status().message().find(kTestIssues), absl::string_view::npos)
      << result.status();
  EXPECT_NE(result.status().message().find("repeats"), absl::string_view::npos)
      << result.status();
  EXPECT_LE(http_.Urls().size(), 3u);  // the repository, page 1, page 2
  EXPECT_EQ(counters_.requests(), static_cast<int64_t>(http_.Urls().size()));
  // What was stored stays; the cursor does not move past what the crawl did not finish.
  EXPECT_TRUE(Stored(1));
  EXPECT_TRUE(Stored(3));
  NoReportMovedTheIssueCursorPast(0);
  EXPECT_EQ(result.status().message().find("ghp_hostile_secret"), absl::string_view::npos);
}

// Item 6: every page is empty and names a next one. Before the fix: pages until the budget.
TEST_F(HostileTrackerTest, NextPageAfterAnEmptyPageStops) {
  ScriptRepo();
  std::string url = kTestIssues;
  for (int page = 2; page < 40; ++page) {
    const std::string next =
        absl::StrCat("https://api.test/repositories/9/issues?page=", page, "&per_page=100");
    http_.Respond(url, 200, "[]", {{"Link", absl::StrCat("<", next, ">; rel=\"next\"")}});
    url = next;
  }
  auto result = Crawl(TestLease());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << result.status();
  EXPECT_NE(result.status().message().find(kSlug), absl::string_view::npos) << result.status();
  EXPECT_NE(result.status().message().find("empty page"), absl::string_view::npos)
      << result.status();
  EXPECT_NE(result.status().message().find(kTestIssues), absl::string_view::npos)
      << result.status();
  // The repository, page 1, and at most the page 2 prefetched while page 1 was read.
  EXPECT_LE(http_.Urls().size(), 3u);
  NoReportMovedTheIssueCursorPast(0);
}

// Item 6, per-issue listings (GitLab notes) too: a notes page naming itself as next.
TEST_F(HostileTrackerTest, LoopingNotesListingStops) {
  v1::Lease lease;
  lease.set_repo_slug("gitlab:grp/proj");
  lease.mutable_repo()->set_tracker(v1::TRACKER_GITLAB);
  lease.mutable_repo()->set_owner("grp");
  lease.mutable_repo()->set_name("proj");
  lease.mutable_repo()->set_api_url("https://gitlab.test/api/v4");
  lease.set_epoch(1);
  lease.set_mode(v1::CRAWL_MODE_FULL);
  const std::string project = "https://gitlab.test/api/v4/projects/grp%2Fproj";
  http_.Respond(project, 200, R"({"path_with_namespace": "grp/proj"})");
  const nlohmann::json issue = {{"id", 91}, {"iid", 1}, {"title", "t"}, {"state", "opened"},
                                {"created_at", At(0)}, {"updated_at", At(5)},
                                {"user_notes_count", 1}};
  http_.Respond(project + "/issues?scope=all&state=all&order_by=updated_at&sort=asc&per_page=100",
                200, TestPage({issue}));
  const std::string notes = project + "/issues/1/notes?sort=asc&order_by=created_at&per_page=100";
  const nlohmann::json note = {{"id", 7}, {"body", "n"}, {"created_at", At(1)},
                               {"updated_at", At(1)}};
  for (int i = 0; i < 20; ++i) {
    http_.Respond(notes, 200, TestPage({note}), {{"Link", absl::StrCat("<", notes, ">; rel=\"next\"")}});
  }
  auto result = Crawl(lease);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << result.status();
  EXPECT_NE(result.status().message().find("gitlab:grp/proj"), absl::string_view::npos)
      << result.status();
  EXPECT_LE(http_.Urls().size(), 3u);
}

// Item 7: an issue updated in 9999 must not become the cursor. Before the fix the cursor moved
// to 2262 (9999 saturated) and no later incremental crawl saw a new issue.
// With --graphql, the comments of a full crawl come over GraphQL for the stored issues; an issue
// the listing set aside is not stored, so the pass would miss its comments (and move the comment
// cursor past them): REST lists the comments of such a crawl, and no query is sent.
TEST_F(HostileTrackerTest, AnIssueSetAsideKeepsTheCommentsOnRest) {
  options_.github_graphql = true;
  ScriptRepo();
  // Every issue has comments: a pass would have threads to ask for.
  nlohmann::json one = TestIssue(1, 10), two = TestIssue(2, 20), future = TestIssue(3, 2);
  for (nlohmann::json* issue : {&one, &two, &future}) (*issue)["comments"] = 2;
  future["updated_at"] = "9999-12-31T23:59:59Z";
  const Headers date = {{"Date", HttpDate(100)}};
  http_.Respond(kTestIssues, 200, TestPage({one, two, future}), date);
  http_.Respond(std::string(kTestIssues) + SinceParam(20), 200, TestPage({two, future}),
                {{"Date", HttpDate(101)}, {"ETag", "\"i\""}});
  http_.Respond(kTestComments, 200, "[]", date);
  auto result = Crawl(TestLease());
  ASSERT_TRUE(result.ok()) << result.status();
  bool listed_comments = false;
  for (const auto& r : http_.Requests()) {
    EXPECT_NE(r.request.method, "POST") << "a GraphQL query was sent: " << r.request.url;
    listed_comments = listed_comments || r.request.url == kTestComments;
  }
  EXPECT_TRUE(listed_comments) << "REST should have listed the comments from the start";
  EXPECT_FALSE(Stored(3));
}

TEST_F(HostileTrackerTest, FarFutureUpdatedAtIsQuarantinedAndNeverBecomesTheCursor) {
  ScriptRepo();
  nlohmann::json future = TestIssue(3, 0);
  future["updated_at"] = "9999-12-31T23:59:59Z";
  const Headers date = {{"Date", HttpDate(100)}};
  http_.Respond(kTestIssues, 200, TestPage({TestIssue(1, 10), TestIssue(2, 20), future}), date);
  // The cursor moves to issue 2's updated_at; the confirmation page lists from there.
  http_.Respond(std::string(kTestIssues) + SinceParam(20), 200,
                TestPage({TestIssue(2, 20), future}), {{"Date", HttpDate(101)}, {"ETag", "\"i\""}});
  http_.Respond(kTestComments, 200, "[]", date);

  auto result = Crawl(TestLease());
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_TRUE(result->cursor.has_value());
  EXPECT_EQ(FromProto(result->cursor->issues_since()), absl::FromUnixSeconds(1672531200 + 20));
  EXPECT_TRUE(Stored(1));
  EXPECT_TRUE(Stored(2));
  EXPECT_FALSE(Stored(3));
  EXPECT_GE(result->counters.items_quarantined(), 1);
  const std::vector<std::string> q = Quarantined();
  ASSERT_EQ(q.size(), 1u);  // the same item quarantined twice is kept once
  EXPECT_NE(q[0].find("number 3"), std::string::npos) << q[0];
  EXPECT_NE(q[0].find("after the tracker's clock"), std::string::npos) << q[0];

  // A later incremental crawl still sees a new issue (and, once the tracker's clock has passed
  // it, nothing here claims a time from the future).
  v1::Lease next = TestLease(v1::CRAWL_MODE_INCREMENTAL);
  *next.mutable_cursor() = *result->cursor;
  ScriptRepo();
  const Headers later = {{"Date", HttpDate(500)}};
  http_.Respond(std::string(kTestIssues) + SinceParam(20), 200,
                TestPage({TestIssue(2, 20), TestIssue(4, 400), future}), later);
  http_.Respond(std::string(kTestIssues) + SinceParam(400), 200,
                TestPage({TestIssue(4, 400), future}), later);
  http_.Respond(kTestComments, 200, "[]", later);
  auto again = Crawl(next);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(Stored(4));
  EXPECT_EQ(FromProto(again->cursor->issues_since()), absl::FromUnixSeconds(1672531200 + 400));
}

// Item 8: nulls are not data. Before the fix state null was stored as "unknown", title null as
// "" and created_at null as no date.
TEST_F(HostileTrackerTest, NullStateTitleOrCreatedAtMakesABadItemNotData) {
  ScriptRepo();
  nlohmann::json no_state = TestIssue(2, 12);
  no_state["state"] = nullptr;
  nlohmann::json no_title = TestIssue(3, 13);
  no_title["title"] = nullptr;
  nlohmann::json no_created = TestIssue(4, 14);
  no_created["created_at"] = nullptr;
  http_.Respond(kTestIssues, 200,
                TestPage({TestIssue(1, 11), no_state, no_title, no_created, TestIssue(5, 15)}));
  http_.Respond(std::string(kTestIssues) + SinceParam(15), 200, TestPage({TestIssue(5, 15)}));
  http_.Respond(kTestComments, 200, "[]");

  auto result = Crawl(TestLease());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(Stored(1));
  EXPECT_FALSE(Stored(2));
  EXPECT_FALSE(Stored(3));
  EXPECT_FALSE(Stored(4));
  EXPECT_TRUE(Stored(5));
  EXPECT_EQ(result->counters.items_quarantined(), 3);
  const std::vector<std::string> q = Quarantined();
  ASSERT_EQ(q.size(), 3u);
  EXPECT_EQ(q[0], "issues number 2: field 'state' is null");
  EXPECT_EQ(q[1], "issues number 3: field 'title' is null");
  EXPECT_EQ(q[2], "issues number 4: field 'created_at' is null");
}

// Item 8: a comment whose issue_url names another host or repository is refused. Before the fix
// both were filed under issue 1 of octo/hello.
TEST_F(HostileTrackerTest, CommentOfAnotherHostOrRepositoryIsRefused) {
  ScriptRepo();
  http_.Respond(kTestIssues, 200, TestPage({TestIssue(1, 1)}));
  http_.Respond(std::string(kTestIssues) + SinceParam(1), 200, TestPage({TestIssue(1, 1)}));
  nlohmann::json other_host = TestComment(51, 1, 3);
  other_host["issue_url"] = "https://evil.test/repos/octo/hello/issues/1";
  nlohmann::json other_repo = TestComment(52, 1, 4);
  other_repo["issue_url"] = "https://api.test/repos/octo/other/issues/1";
  nlohmann::json nested = TestComment(53, 1, 5);
  nested["issue_url"] = "https://api.test/repos/octo/hello/issues/9/x/1";
  http_.Respond(kTestComments, 200,
                TestPage({TestComment(50, 1, 2), other_host, other_repo, nested}));
  http_.Respond(std::string(kTestComments) + SinceParam(2), 200,
                TestPage({TestComment(50, 1, 2)}));

  auto result = Crawl(TestLease());
  ASSERT_TRUE(result.ok()) << result.status();
  auto issue = store_->GetIssue(kSlug, 1);
  ASSERT_TRUE(issue.ok()) << issue.status();
  ASSERT_EQ(issue->comments_size(), 1);
  EXPECT_EQ(issue->comments(0).id(), 50);
  EXPECT_EQ(result->counters.items_quarantined(), 3);
  for (const std::string& q : Quarantined()) {
    EXPECT_NE(q.find("names another host or repository"), std::string::npos) << q;
  }
}

// Item 9: one wrongly typed item neither fails its page nor blocks the repository, and is not
// retried. Before the fix the page was fetched again max_retries times (with backoff sleeps),
// then the crawl failed and page 2 was never crawled.
TEST_F(HostileTrackerTest, WronglyTypedItemIsQuarantinedWithoutRetriesAndTheCrawlGoesOn) {
  ScriptRepo();
  const std::string p2 = "https://api.test/repositories/9/issues?page=2&per_page=100";
  nlohmann::json typed = TestIssue(2, 12);
  typed["comments"] = "many";
  http_.Respond(kTestIssues, 200, TestPage({TestIssue(1, 11), typed, TestIssue(3, 13)}),
                {{"Link", absl::StrCat("<", p2, ">; rel=\"next\"")}});
  http_.Respond(p2, 200, TestPage({TestIssue(4, 14)}));
  http_.Respond(std::string(kTestIssues) + SinceParam(14), 200, TestPage({TestIssue(4, 14)}));
  http_.Respond(kTestComments, 200, "[]");

  auto result = Crawl(TestLease());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(Stored(1));
  EXPECT_FALSE(Stored(2));
  EXPECT_TRUE(Stored(3));
  EXPECT_TRUE(Stored(4));
  EXPECT_EQ(result->counters.retries(), 0);
  EXPECT_EQ(result->counters.requests(), 5);
  EXPECT_EQ(clock_.TotalSlept(), absl::ZeroDuration());
  EXPECT_EQ(result->counters.items_quarantined(), 1);
  // The quarantine names the item and keeps it as received.
  bool found = false;
  ASSERT_TRUE(store_
                  ->ScanQuarantined(kSlug,
                                    [&](const std::string& slug, const QuarantinedItem& q) {
                                      found = true;
                                      EXPECT_EQ(slug, kSlug);
                                      EXPECT_EQ(q.listing, "issues");
                                      EXPECT_EQ(q.index, 1);
                                      EXPECT_EQ(q.key, "number 2");
                                      EXPECT_NE(q.error.find("field 'comments'"),
                                                std::string::npos)
                                          << q.error;
                                      EXPECT_EQ(nlohmann::json::parse(q.raw), typed);
                                      EXPECT_EQ(q.url, kTestIssues);
                                      return true;
                                    })
                  .ok());
  EXPECT_TRUE(found);
}

// Item 14: a failed crawl reports every request it made, not the count of its last report.
TEST_F(HostileTrackerTest, FailedCrawlReportsTheRequestsItActuallyMade) {
  ScriptRepo();
  for (int i = 0; i <= options_.max_retries; ++i) http_.Respond(kTestIssues, 503, "{}");
  auto result = Crawl(TestLease());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable) << result.status();
  EXPECT_EQ(counters_.requests(), 1 + options_.max_retries + 1);
  EXPECT_EQ(counters_.retries(), options_.max_retries);
}

}  // namespace
}  // namespace issuescope::crawler

// The GitHub GraphQL queries and parsers (crawler/github_graphql.h): comments as the REST parser
// makes them, long threads noticed and continued under their issues' numbers, bad comments set
// aside, GraphQL's error types mapped to statuses, and the issue URL of a transferred issue.
#include "crawler/github_graphql.h"

#include "crawler/graphql_lister.h"
#include "crawler/tracker.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/crawler/fake_transport.h"
#include "tests/crawler/mem_store.h"

namespace issuescope::crawler {
namespace {

using nlohmann::json;

v1::RepositoryRef Repo() {
  v1::RepositoryRef r;
  r.set_tracker(v1::TRACKER_GITHUB);
  r.set_owner("octo");
  r.set_name("hello");
  return r;
}

json Comments(int number, int given, bool more = false) {
  json nodes = json::array();
  for (int i = 0; i < given; ++i) {
    nodes.push_back({{"databaseId", number * 1000 + i},
                     {"body", "c"},
                     {"url", "https://github.com/octo/hello/issues/1#issuecomment-1"},
                     {"createdAt", "2024-01-01T00:00:00Z"},
                     {"updatedAt", "2024-01-02T00:00:00Z"},
                     {"author", i == 0 ? json(nullptr) : json{{"login", "bob"}}}});
  }
  return {{"pageInfo", {{"hasNextPage", more}, {"endCursor", more ? json("C1") : json()}}},
          {"nodes", nodes}};
}

json Thread(int number, int given, bool more = false) {
  return {{"number", number}, {"updatedAt", "2024-01-03T00:00:00Z"}, {"comments", Comments(number, given, more)}};
}

std::string Page(const json& nodes, bool has_next = false) {
  return json{{"data",
               {{"rateLimit", {{"cost", 1}, {"remaining", 4321}, {"resetAt", "2024-05-01T10:00:00Z"}}},
                {"repository",
                 {{"issues",
                   {{"pageInfo", {{"hasNextPage", has_next}, {"endCursor", has_next ? json("E") : json()}}},
                    {"nodes", nodes}}}}}}}}
      .dump();
}

TEST(GithubGraphqlTest, ThreadsPageBecomesTheRestCommentRecords) {
  auto page = ParseGraphqlThreadsPage(Page(json::array({Thread(7, 2), Thread(8, 0)}), true), Repo());
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->numbers, (std::vector<int64_t>{7, 8}));
  ASSERT_EQ(page->comments.size(), 2u);
  EXPECT_EQ(page->comments[1].id(), 7001);
  EXPECT_EQ(page->comments[1].issue_number(), 7);
  EXPECT_EQ(page->comments[1].author(), "bob");
  EXPECT_EQ(page->comments[0].author(), "");  // a deleted account
  EXPECT_EQ(page->comments[0].repo().name(), "hello");
  EXPECT_TRUE(page->comments[0].has_created_at());
  EXPECT_TRUE(page->has_next);
  EXPECT_EQ(page->end_cursor, "E");
  EXPECT_EQ(page->rate.remaining, 4321);
  EXPECT_EQ(page->rate.cost, 1);
  EXPECT_TRUE(page->more_comments.empty());
}

TEST(GithubGraphqlTest, LongThreadsContinueAndBadCommentsAreSetAside) {
  json bad = Thread(9, 2);
  bad["comments"]["nodes"][1].erase("databaseId");
  auto page = ParseGraphqlThreadsPage(Page(json::array({Thread(8, 100, /*more=*/true), bad})),
                                      Repo());
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->more_comments.size(), 1u);
  EXPECT_EQ(page->more_comments[0].number, 8);
  EXPECT_EQ(page->more_comments[0].after, "C1");
  ASSERT_EQ(page->bad.size(), 1u);
  EXPECT_NE(page->bad[0].error.find("databaseId"), std::string::npos);
  EXPECT_EQ(page->comments.size(), 101u);
  // An issue node without its number fails the page: its comments could not be filed.
  json numberless = Thread(10, 1);
  numberless.erase("number");
  EXPECT_EQ(ParseGraphqlThreadsPage(Page(json::array({numberless})), Repo()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(GithubGraphqlTest, CommentPagesAnswerUnderTheirIssuesNumbers) {
  const std::string body = CommentPagesBody("octo", "hello", {{8, "C1"}, {12, "C9"}});
  const json request = json::parse(body);
  EXPECT_NE(request["query"].get<std::string>().find("i12: issue(number: 12)"), std::string::npos);
  EXPECT_EQ(request["variables"]["a1"], "C9");
  const std::string answer =
      json{{"data", {{"repository", {{"i8", {{"comments", Comments(8, 1)}}}, {"i12", nullptr}}}}},
           {"errors", {{{"type", "NOT_FOUND"}, {"path", {"repository", "i12"}}, {"message", "m"}}}}}
          .dump();
  auto pages = ParseGraphqlCommentPages(answer, Repo());
  ASSERT_TRUE(pages.ok()) << pages.status();
  ASSERT_EQ(pages->comments.size(), 1u);
  EXPECT_EQ(pages->comments[0].issue_number(), 8);
  EXPECT_EQ(pages->missing, std::vector<int64_t>{12});
  const std::string stranger = json{{"data", {{"repository", {{"x", nullptr}}}}}}.dump();
  EXPECT_FALSE(ParseGraphqlCommentPages(stranger, Repo()).ok());
}

TEST(GithubGraphqlTest, NumbersPagesAndErrorTypes) {
  auto numbers = ParseGraphqlNumbersPage(
      Page(json::array({{{"number", 3}}, {{"number", 5}}}), /*has_next=*/true));
  ASSERT_TRUE(numbers.ok()) << numbers.status();
  EXPECT_EQ(numbers->numbers, (std::vector<int64_t>{3, 5}));
  EXPECT_TRUE(numbers->has_next);
  EXPECT_FALSE(ParseGraphqlNumbersPage(Page(json::array({{{"number", "x"}}}))).ok());

  auto code = [](const std::string& type, bool with_data) {
    json doc = {{"errors", {{{"type", type}, {"message", "m"}}}}};
    if (with_data) doc["data"] = {{"repository", nullptr}};
    return ParseGraphqlThreadsPage(doc.dump(), Repo()).status().code();
  };
  EXPECT_EQ(code("RATE_LIMITED", false), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(code("MAX_NODE_LIMIT_EXCEEDED", false), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(code("NOT_FOUND", true), absl::StatusCode::kNotFound);
  EXPECT_EQ(code("", false), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseGraphqlThreadsPage("<html>", Repo()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(IsGraphqlTimeout(502, ""));
  EXPECT_TRUE(IsGraphqlTimeout(
      200, R"({"errors":[{"message":"Something went wrong while executing your query. x"}]})"));
  EXPECT_FALSE(IsGraphqlTimeout(200, "{}"));
  // A comment quoting GitHub's message is data, not a timeout.
  json quoting = json::parse(Page(json::array({Thread(1, 1)})));
  quoting["data"]["repository"]["issues"]["nodes"][0]["comments"]["nodes"][0]["body"] =
      "I get: Something went wrong while executing your query. This may be the result of a timeout";
  EXPECT_FALSE(IsGraphqlTimeout(200, quoting.dump()));
}

TEST(GithubGraphqlTest, AThreadIsMissingOnlyWhenGithubSaysItIsNotFound) {
  const std::vector<ThreadCursor> asked = {{8, "C1"}, {12, "C9"}};
  auto answer = [](const json& errors) {
    json doc = {{"data", {{"repository", {{"i8", {{"comments", Comments(8, 1)}}}, {"i12", nullptr}}}}}};
    if (!errors.is_null()) doc["errors"] = errors;
    return doc.dump();
  };
  const json not_found = json::array(
      {{{"type", "NOT_FOUND"}, {"path", {"repository", "i12"}}, {"message", "Could not resolve"}}});
  auto ok = ParseGraphqlCommentPages(answer(not_found), Repo(), asked);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->missing, std::vector<int64_t>{12});
  // Null for another reason (or no reason): not a complete thread.
  const json other = json::array({{{"type", "INTERNAL"}, {"path", {"repository", "i12"}}, {"message", "x"}}});
  EXPECT_FALSE(ParseGraphqlCommentPages(answer(other), Repo(), asked).ok());
  EXPECT_FALSE(ParseGraphqlCommentPages(answer(json()), Repo(), asked).ok());
  // A thread asked for and left out of the answer.
  const std::string partial =
      json{{"data", {{"repository", {{"i8", {{"comments", Comments(8, 1)}}}}}}}}.dump();
  EXPECT_FALSE(ParseGraphqlCommentPages(partial, Repo(), asked).ok());
}

TEST(GithubGraphqlTest, QueryBodiesAndTransferredPlaces) {
  const json request = json::parse(ThreadsPageBody("octo", "hello", 20, "", std::nullopt));
  EXPECT_EQ(request["variables"]["first"], 20);
  EXPECT_TRUE(request["variables"]["after"].is_null());
  EXPECT_TRUE(request["variables"]["since"].is_null());
  EXPECT_NE(request["query"].get<std::string>().find("comments(first: 100)"), std::string::npos);
  EXPECT_EQ(TransferredTo("https://github.com/pytorch/vision/issues/812"),
            "github:pytorch/vision#812");
  EXPECT_EQ(TransferredTo("https://github.com/pytorch/vision/pull/812"), "");
  EXPECT_EQ(TransferredTo("nonsense"), "");
}

// A GraphqlLister over scripted answers (FakeTransport, FakeClock, an in-memory store).
class GraphqlListerTest : public ::testing::Test {
 protected:
  static constexpr char kUrl[] = "https://api.test/graphql";
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(OpenMemStore(&env_, &store_));
    auto tracker = MakeTracker(v1::TRACKER_GITHUB);
    ASSERT_TRUE(tracker.ok());
    tracker_ = *std::move(tracker);
    options_.max_retries = 1;
    loop_ = std::make_unique<RequestLoop>(
        &http_, tracker_.get(), &clock_, options_,
        OneTokenPool(v1::TRACKER_GITHUB, "tok", &clock_, options_), "github:octo/hello",
        [] { return false; });
    ingest_ = std::make_unique<PageIngest>(store_.get(), Repo(), "github:octo/hello", 1,
                                           absl::Minutes(5), false, false, &counters_);
    MakeLister(1000);
  }
  // MakeLister makes the lister knowing `remaining` points (-1: unknown, it asks first).
  void MakeLister(int64_t remaining) {
    GraphqlListerOptions options;
    options.known_remaining = remaining;
    lister_ = std::make_unique<GraphqlLister>(
        loop_.get(), loop_.get(), tracker_.get(), ingest_.get(), &clock_, kUrl,
        TrackerRepo{"https://api.test", "octo", "hello"}, Repo(), options,
        [] { return absl::OkStatus(); });
  }
  std::string PageWith(const json& nodes, const std::string& next, int remaining) {
    json page = json::parse(Page(nodes, !next.empty()));
    if (!next.empty()) page["data"]["repository"]["issues"]["pageInfo"]["endCursor"] = next;
    page["data"]["rateLimit"]["remaining"] = remaining;
    return page.dump();
  }
  std::unique_ptr<rocksdb::Env> env_;
  std::unique_ptr<IssueStore> store_;
  std::unique_ptr<Tracker> tracker_;
  FakeClock clock_{absl::FromUnixSeconds(1767225600)};  // 2026: after the comments' dates
  testing::FakeTransport http_{&clock_};
  RequestLoopOptions options_;
  v1::CrawlCounters counters_;
  std::unique_ptr<RequestLoop> loop_;
  std::unique_ptr<PageIngest> ingest_;
  std::unique_ptr<GraphqlLister> lister_;
};

TEST_F(GraphqlListerTest, ARepeatedCursorEndsThePassInsteadOfLooping) {
  http_.Respond(kUrl, 200, PageWith(json::array({Thread(1, 1)}), "E", 100));
  http_.Respond(kUrl, 200, PageWith(json::array({Thread(2, 1)}), "E", 99));
  auto pass = lister_->CommentsPass(std::nullopt);
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ(pass->abandoned.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(pass->abandoned.message().find("loops"), absl::string_view::npos);
  EXPECT_EQ(http_.Pending(), 0u);
}

TEST_F(GraphqlListerTest, ARepeatedThreadCursorEndsTheFollowUps) {
  http_.Respond(kUrl, 200, PageWith(json::array({Thread(8, 100, /*more=*/true)}), "", 100));
  const std::string again =
      json{{"data", {{"repository", {{"i8", {{"comments", Comments(8, 1, /*more=*/true)}}}}}}}}
          .dump();
  http_.Respond(kUrl, 200, again);
  auto pass = lister_->CommentsPass(std::nullopt);
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ(pass->abandoned.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(http_.Pending(), 0u);
}

TEST_F(GraphqlListerTest, AnUnknownBudgetIsAskedForFirstForNothing) {
  MakeLister(-1);
  http_.Respond(kUrl, 200,
                R"({"data": {"rateLimit": {"cost": 0, "remaining": 0, "resetAt": "2030-01-01T00:00:00Z"}}})");
  auto pass = lister_->CommentsPass(std::nullopt);
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_TRUE(pass->budget_spent);
  ASSERT_EQ(http_.Requests().size(), 1u);
  EXPECT_NE(http_.Requests()[0].request.body.find("rateLimit"), std::string::npos);
  EXPECT_EQ(http_.Requests()[0].request.body.find("issues"), std::string::npos);
}

TEST_F(GraphqlListerTest, NoQueryIsSentThatTheBudgetCannotPay) {
  http_.Respond(kUrl, 200, PageWith(json::array({Thread(1, 2)}), "E", 0));
  auto pass = lister_->CommentsPass(std::nullopt);
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_TRUE(pass->budget_spent);
  EXPECT_EQ(http_.Requests().size(), 1u);
  EXPECT_EQ(pass->points, 1);
}

TEST_F(GraphqlListerTest, TimeoutsHalveThePageAndWithoutGraphqlNothingIsStored) {
  http_.Respond(kUrl, 502, "<html>bad gateway</html>");
  http_.Respond(kUrl, 200, PageWith(json::array({Thread(1, 2)}), "", 50));
  auto pass = lister_->CommentsPass(std::nullopt);
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ(pass->timeouts, 1);
  EXPECT_EQ(pass->last_page_size, 50);
  const json second = json::parse(http_.Requests()[1].request.body);
  EXPECT_EQ(second["variables"]["first"], 50);
  EXPECT_EQ(http_.Requests()[1].request.method, "POST");
  EXPECT_EQ(pass->listed, std::vector<int64_t>{1});

  const int64_t fetched = counters_.comments_fetched();
  EXPECT_EQ(fetched, 2);
  http_.Respond(kUrl, 404, R"({"message":"Not Found"})");
  auto none = lister_->CommentsPass(std::nullopt);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->unavailable);
  EXPECT_EQ(counters_.comments_fetched(), fetched) << "nothing stored without GraphQL";
}

TEST_F(GraphqlListerTest, AnAnswerItCannotUseAbandonsThePassForRest) {
  http_.Respond(kUrl, 200, PageWith(json::array({Thread(1, 1)}), "E", 100));
  http_.Respond(kUrl, 200, R"({"data": {"repository": {"issues": {"nodes": "what"}}}})");
  auto pass = lister_->CommentsPass(std::nullopt);
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_FALSE(pass->abandoned.ok());
  EXPECT_FALSE(pass->budget_spent);
  // A page without issues that says more follow would page forever.
  http_.Respond(kUrl, 200, PageWith(json::array(), "F", 100));
  auto empty = lister_->CommentsPass(std::nullopt);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_FALSE(empty->abandoned.ok());
}

}  // namespace
}  // namespace issuescope::crawler

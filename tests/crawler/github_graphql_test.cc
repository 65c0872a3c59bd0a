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

TEST(GithubGraphqlTest, QueryBodiesAskEachIssueForItsOwnCountAndTransferredPlaces) {
  const json request = json::parse(CommentPagesBody(
      "octo", "hello", {ThreadCursor{1, "", 3}, ThreadCursor{2, "C", 100}, ThreadCursor{4, "", 0}}));
  const std::string query = request["query"].get<std::string>();
  EXPECT_NE(query.find("i1: issue(number: 1) { comments(first: 3, after: $a0)"), std::string::npos);
  EXPECT_NE(query.find("i2: issue(number: 2) { comments(first: 100, after: $a1)"), std::string::npos);
  EXPECT_NE(query.find("comments(first: 1, after: $a2)"), std::string::npos) << "at least 1";
  EXPECT_TRUE(request["variables"]["a0"].is_null());
  EXPECT_EQ(request["variables"]["a1"], "C");
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
  void MakeLister(int64_t remaining, int64_t max_nodes = kStartNodesPerQuery) {
    GraphqlListerOptions options;
    options.known_remaining = remaining;
    options.max_nodes_per_query = max_nodes;
    lister_ = std::make_unique<GraphqlLister>(
        loop_.get(), loop_.get(), tracker_.get(), ingest_.get(), &clock_, kUrl,
        TrackerRepo{"https://api.test", "octo", "hello"}, Repo(), options,
        [] { return absl::OkStatus(); });
  }
  // Answer is a comment query's answer: each alias ("i" + number) with its comments page.
  static std::string Answer(const json& threads, int remaining) {
    return json{{"data",
                 {{"rateLimit", {{"cost", 1}, {"remaining", remaining}, {"resetAt", "2030-01-01T00:00:00Z"}}},
                  {"repository", threads}}}}
        .dump();
  }
  // Body is the JSON of request i's body.
  json Body(size_t i) const { return json::parse(http_.Requests().at(i).request.body); }
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

TEST_F(GraphqlListerTest, AsksEachIssueForItsCommentsAndContinuesLongThreads) {
  http_.Respond(kUrl, 200, Answer({{"i1", {{"comments", Comments(1, 2)}}},
                                   {"i3", {{"comments", Comments(3, 100, /*more=*/true)}}}}, 99));
  http_.Respond(kUrl, 200, Answer({{"i3", {{"comments", Comments(3, 50)}}}}, 98));
  auto pass = lister_->CommentsPass({{1, 2}, {2, 0}, {3, 150}});
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_TRUE(pass->abandoned.ok()) << pass->abandoned;
  EXPECT_EQ(pass->threads, 2) << "an issue without comments is not asked about";
  EXPECT_EQ(pass->queries, 2);
  EXPECT_EQ(pass->follow_ups, 1);
  EXPECT_EQ(pass->points, 2);
  ASSERT_EQ(http_.Requests().size(), 2u);
  const std::string first = Body(0)["query"];
  EXPECT_NE(first.find("i1: issue(number: 1) { comments(first: 2,"), std::string::npos) << first;
  EXPECT_NE(first.find("i3: issue(number: 3) { comments(first: 100,"), std::string::npos);
  EXPECT_EQ(first.find("issue(number: 2)"), std::string::npos);
  const json second = Body(1);
  EXPECT_NE(second["query"].get<std::string>().find("i3: issue(number: 3)"), std::string::npos);
  EXPECT_EQ(second["variables"]["a0"], "C1");
  EXPECT_EQ(counters_.comments_fetched(), 152);
}

TEST_F(GraphqlListerTest, AnIssueThatNoLongerResolvesIsSkipped) {
  const json threads = {{"i1", {{"comments", Comments(1, 1)}}}, {"i2", nullptr}};
  json answer = json::parse(Answer(threads, 99));
  answer["errors"] = json::array(
      {{{"type", "NOT_FOUND"}, {"path", {"repository", "i2"}}, {"message", "Could not resolve"}}});
  http_.Respond(kUrl, 200, answer.dump());
  auto pass = lister_->CommentsPass({{1, 1}, {2, 4}});
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_TRUE(pass->abandoned.ok()) << pass->abandoned;
  EXPECT_EQ(counters_.comments_fetched(), 1);
  EXPECT_EQ(http_.Pending(), 0u);
}

TEST_F(GraphqlListerTest, ARepeatedThreadCursorEndsThePass) {
  http_.Respond(kUrl, 200, Answer({{"i8", {{"comments", Comments(8, 100, /*more=*/true)}}}}, 100));
  http_.Respond(kUrl, 200, Answer({{"i8", {{"comments", Comments(8, 1, /*more=*/true)}}}}, 99));
  auto pass = lister_->CommentsPass({{8, 300}});
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ(pass->abandoned.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(pass->abandoned.message().find("loops"), absl::string_view::npos);
  EXPECT_EQ(http_.Pending(), 0u);
}

TEST_F(GraphqlListerTest, AnUnknownBudgetIsAskedForFirstForNothing) {
  MakeLister(-1);
  auto nothing = lister_->CommentsPass({{1, 0}});
  ASSERT_TRUE(nothing.ok()) << nothing.status();
  EXPECT_TRUE(http_.Requests().empty()) << "no issue with comments: nothing asked, not even the budget";
  http_.Respond(kUrl, 200,
                R"({"data": {"rateLimit": {"cost": 0, "remaining": 0, "resetAt": "2030-01-01T00:00:00Z"}}})");
  auto pass = lister_->CommentsPass({{1, 1}});
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_TRUE(pass->budget_spent);
  ASSERT_EQ(http_.Requests().size(), 1u);
  EXPECT_NE(http_.Requests()[0].request.body.find("rateLimit"), std::string::npos);
  EXPECT_EQ(http_.Requests()[0].request.body.find("issue("), std::string::npos);
}

TEST_F(GraphqlListerTest, NoQueryIsSentThatTheBudgetCannotPay) {
  http_.Respond(kUrl, 200, Answer({{"i1", {{"comments", Comments(1, 100, /*more=*/true)}}}}, 0));
  auto pass = lister_->CommentsPass({{1, 200}});
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_TRUE(pass->budget_spent);
  EXPECT_EQ(http_.Requests().size(), 1u);
  EXPECT_EQ(pass->points, 1);
}

TEST_F(GraphqlListerTest, TimeoutsHalveTheNodesAskedForAndWithoutGraphqlNothingIsStored) {
  MakeLister(1000, /*max_nodes=*/300);
  http_.Respond(kUrl, 502, "<html>bad gateway</html>");
  for (int n : {1, 2, 3}) {
    http_.Respond(kUrl, 200, Answer({{absl::StrCat("i", n), {{"comments", Comments(n, 100)}}}}, 90));
  }
  auto pass = lister_->CommentsPass({{1, 100}, {2, 100}, {3, 100}});
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_TRUE(pass->abandoned.ok()) << pass->abandoned;
  EXPECT_EQ(pass->timeouts, 1);
  ASSERT_EQ(http_.Requests().size(), 4u);
  const std::string cut = Body(0)["query"];
  EXPECT_NE(cut.find("i3:"), std::string::npos) << "300 nodes: all three at first";
  const std::string after = Body(1)["query"];
  EXPECT_NE(after.find("i1:"), std::string::npos);
  EXPECT_EQ(after.find("i2:"), std::string::npos) << "150 nodes after the cut-off: one thread";
  EXPECT_EQ(pass->last_node_cap, 225) << "three answered: halfway back to the 300 that timed out";
  EXPECT_EQ(counters_.comments_fetched(), 300);

  const int64_t fetched = counters_.comments_fetched();
  http_.Respond(kUrl, 404, R"({"message":"Not Found"})");
  auto none = lister_->CommentsPass({{1, 100}});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->unavailable);
  EXPECT_EQ(counters_.comments_fetched(), fetched) << "nothing stored without GraphQL";
}

TEST_F(GraphqlListerTest, AThreadCutOffAloneIsAskedForFewerCommentsAtATime) {
  http_.Respond(kUrl, 502, "<html>bad gateway</html>");
  http_.Respond(kUrl, 200, Answer({{"i5", {{"comments", Comments(5, 40, /*more=*/true)}}}}, 90));
  http_.Respond(kUrl, 200, Answer({{"i5", {{"comments", Comments(5, 40)}}}}, 89));
  auto pass = lister_->CommentsPass({{5, 80}});
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_TRUE(pass->abandoned.ok()) << pass->abandoned;
  ASSERT_EQ(http_.Requests().size(), 3u);
  EXPECT_NE(Body(0)["query"].get<std::string>().find("comments(first: 80,"), std::string::npos);
  EXPECT_NE(Body(1)["query"].get<std::string>().find("comments(first: 40,"), std::string::npos);
  const json third = Body(2);
  EXPECT_NE(third["query"].get<std::string>().find("comments(first: 40,"), std::string::npos)
      << "the thread's next page is asked for 40 at a time too";
  EXPECT_EQ(third["variables"]["a0"], "C1");
  EXPECT_EQ(pass->points, 3) << "the query cut off counts: GitHub charges it";
  EXPECT_EQ(pass->last_node_cap, kStartNodesPerQuery)
      << "one slow thread does not shrink the others' queries";
}

TEST_F(GraphqlListerTest, AQueryCutOffSpendsTheLastPointItWasKnownToHave) {
  MakeLister(1);
  http_.Respond(kUrl, 502, "<html>bad gateway</html>");
  auto pass = lister_->CommentsPass({{1, 100}, {2, 100}});
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_TRUE(pass->budget_spent);
  EXPECT_EQ(http_.Requests().size(), 1u) << "no second query on a point already spent";
}

TEST_F(GraphqlListerTest, AnAnswerCutShortIsAskedForAgain) {
  const std::string whole = Answer({{"i1", {{"comments", Comments(1, 2)}}}}, 90);
  http_.Respond(kUrl, 200, whole.substr(0, whole.size() / 2));
  http_.Respond(kUrl, 200, whole);
  auto pass = lister_->CommentsPass({{1, 2}});
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_TRUE(pass->abandoned.ok()) << pass->abandoned;
  EXPECT_EQ(http_.Requests().size(), 2u);
  EXPECT_EQ(http_.Requests()[0].request.body, http_.Requests()[1].request.body);
  EXPECT_EQ(counters_.comments_fetched(), 2);
}

TEST_F(GraphqlListerTest, AnAnswerItCannotUseAbandonsThePassForRest) {
  for (int i = 0; i < 3; ++i) http_.Respond(kUrl, 200, R"({"data": {"repository": "what"}})");
  auto pass = lister_->CommentsPass({{1, 1}});
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_FALSE(pass->abandoned.ok());
  EXPECT_FALSE(pass->budget_spent);
  EXPECT_EQ(http_.Requests().size(), 3u) << "asked three times, then given up";
  // An issue asked about and left out of the answer is not taken as done.
  for (int i = 0; i < 3; ++i) {
    http_.Respond(kUrl, 200, Answer({{"i1", {{"comments", Comments(1, 1)}}}}, 90));
  }
  auto partial = lister_->CommentsPass({{1, 1}, {2, 1}});
  ASSERT_TRUE(partial.ok()) << partial.status();
  EXPECT_FALSE(partial->abandoned.ok());
  EXPECT_EQ(counters_.comments_fetched(), 0) << "nothing stored from an answer that lacks a thread";
}

}  // namespace
}  // namespace issuescope::crawler

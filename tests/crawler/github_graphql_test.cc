// The GitHub GraphQL queries and parsers (crawler/github_graphql.h): comments as the REST parser
// makes them, long threads noticed and continued under their issues' numbers, bad comments set
// aside, GraphQL's error types mapped to statuses, and the issue URL of a transferred issue.
#include "crawler/github_graphql.h"

#include "crawler/graphql_lister.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

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
      json{{"data", {{"repository", {{"i8", {{"comments", Comments(8, 1)}}}, {"i12", nullptr}}}}}}
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

}  // namespace
}  // namespace issuescope::crawler

// The GitHub GraphQL queries and parsers (crawler/github_graphql.h): records as the REST parser
// makes them, long threads and incomplete label lists noticed, bad items set aside, GraphQL's
// error types mapped to statuses, and the page cost.
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

json IssueNode(int number, int comments_total, int comments_given, bool more = false) {
  json comments = json::array();
  for (int i = 0; i < comments_given; ++i) {
    comments.push_back({{"databaseId", number * 1000 + i},
                        {"body", "c"},
                        {"url", "https://github.com/octo/hello/issues/1#issuecomment-1"},
                        {"createdAt", "2024-01-01T00:00:00Z"},
                        {"updatedAt", "2024-01-02T00:00:00Z"},
                        {"author", {{"login", "bob"}}}});
  }
  return {{"number", number},
          {"databaseId", 500 + number},
          {"title", "t"},
          {"body", nullptr},
          {"state", "CLOSED"},
          {"stateReason", "NOT_PLANNED"},
          {"url", "https://github.com/octo/hello/issues/1"},
          {"createdAt", "2024-01-01T00:00:00Z"},
          {"updatedAt", "2024-01-03T00:00:00Z"},
          {"closedAt", "2024-01-03T00:00:00Z"},
          {"author", nullptr},
          {"labels", {{"totalCount", 1}, {"nodes", {{{"name", "bug"}}}}}},
          {"assignees", {{"totalCount", 2}, {"nodes", {{{"login", "amy"}}}}}},
          {"reactions", {{"totalCount", 4}}},
          {"comments",
           {{"totalCount", comments_total},
            {"pageInfo", {{"hasNextPage", more}, {"endCursor", more ? json("C1") : json()}}},
            {"nodes", comments}}}};
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

TEST(GithubGraphqlTest, IssuePageBecomesTheRestRecords) {
  auto page = ParseGraphqlIssuesPage(Page(json::array({IssueNode(7, 2, 2)}), true), Repo());
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->issues.size(), 1u);
  const v1::Issue& issue = page->issues[0];
  EXPECT_EQ(issue.number(), 7);
  EXPECT_EQ(issue.key(), "7");
  EXPECT_EQ(issue.id(), 507);
  EXPECT_EQ(issue.body(), "");  // null body, as REST's parser reads it
  EXPECT_EQ(issue.state(), v1::ISSUE_STATE_CLOSED);
  EXPECT_EQ(issue.state_reason(), "not_planned");
  EXPECT_EQ(issue.author(), "");  // a deleted account
  EXPECT_EQ(issue.labels_size(), 1);
  EXPECT_EQ(issue.comment_count(), 2);
  EXPECT_EQ(issue.reactions(), 4);
  EXPECT_TRUE(issue.has_closed_at());
  ASSERT_EQ(page->comments.size(), 2u);
  EXPECT_EQ(page->comments[1].id(), 7001);
  EXPECT_EQ(page->comments[1].issue_number(), 7);
  EXPECT_EQ(page->comments[1].author(), "bob");
  EXPECT_TRUE(page->has_next);
  EXPECT_EQ(page->end_cursor, "E");
  EXPECT_EQ(page->rate.remaining, 4321);
  EXPECT_EQ(page->rate.cost, 1);
  // Two assignees counted, one given: the issue is fetched again whole.
  EXPECT_EQ(page->refetch, std::vector<int64_t>{7});
}

TEST(GithubGraphqlTest, LongThreadsContinueAndBadItemsAreSetAside) {
  json bad = IssueNode(9, 0, 0);
  bad["state"] = "MERGED";
  auto page = ParseGraphqlIssuesPage(
      Page(json::array({IssueNode(8, 150, 100, /*more=*/true), bad})), Repo());
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->more_comments.size(), 1u);
  EXPECT_EQ(page->more_comments[0].number, 8);
  EXPECT_EQ(page->more_comments[0].after, "C1");
  ASSERT_EQ(page->bad.size(), 1u);
  EXPECT_NE(page->bad[0].error.find("state"), std::string::npos);
  EXPECT_EQ(page->issues.size(), 1u);
  EXPECT_FALSE(page->has_next);
}

TEST(GithubGraphqlTest, CommentPagesAnswerUnderTheirIssuesNumbers) {
  const std::string body = CommentPagesBody("octo", "hello", {{8, "C1"}, {12, "C9"}});
  const json request = json::parse(body);
  EXPECT_NE(request["query"].get<std::string>().find("i12: issue(number: 12)"), std::string::npos);
  EXPECT_EQ(request["variables"]["a1"], "C9");
  const std::string answer =
      json{{"data",
            {{"repository",
              {{"i8", {{"comments", IssueNode(8, 3, 1)["comments"]}}}, {"i12", nullptr}}}}}}
          .dump();
  auto pages = ParseGraphqlCommentPages(answer, Repo());
  ASSERT_TRUE(pages.ok()) << pages.status();
  ASSERT_EQ(pages->comments.size(), 1u);
  EXPECT_EQ(pages->comments[0].issue_number(), 8);
  EXPECT_EQ(pages->missing, std::vector<int64_t>{12});
}

TEST(GithubGraphqlTest, ErrorTypesMapToStatuses) {
  auto code = [](const std::string& type, bool with_data) {
    json doc = {{"errors", {{{"type", type}, {"message", "m"}}}}};
    if (with_data) doc["data"] = {{"repository", nullptr}};
    return ParseGraphqlIssuesPage(doc.dump(), Repo()).status().code();
  };
  EXPECT_EQ(code("RATE_LIMITED", false), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(code("MAX_NODE_LIMIT_EXCEEDED", false), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(code("NOT_FOUND", true), absl::StatusCode::kNotFound);
  EXPECT_EQ(code("", false), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseGraphqlIssuesPage("<html>", Repo()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(IsGraphqlTimeout(502, ""));
  EXPECT_TRUE(IsGraphqlTimeout(200, R"({"errors":[{"message":"Something went wrong while executing your query. x"}]})"));
  EXPECT_FALSE(IsGraphqlTimeout(200, "{}"));
}

TEST(GithubGraphqlTest, PageCostIsGithubsArithmetic) {
  // Four nested connections per issue: 1 + 4n requests, / 100, rounded to nearest, >= 1.
  EXPECT_EQ(IssuePageCost(1), 1);
  EXPECT_EQ(IssuePageCost(kIssuesPerPointPage), 1);
  EXPECT_EQ(IssuePageCost(kIssuesPerPointPage + 1), 2);
  EXPECT_EQ(IssuePageCost(100), 4);
  const json request = json::parse(IssuesPageBody("octo", "hello", 20, "", std::nullopt));
  EXPECT_EQ(request["variables"]["first"], 20);
  EXPECT_TRUE(request["variables"]["after"].is_null());
  EXPECT_TRUE(request["variables"]["since"].is_null());
}

}  // namespace
}  // namespace issuescope::crawler

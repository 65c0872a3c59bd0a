// Tests of the GitHub GraphQL dialect: the request parser, GitHub's cost and node-limit
// arithmetic, and POST /graphql over real HTTP — issues with nested comments, keyset cursors that
// never skip an issue updated while paging, the rateLimit object and X-RateLimit-Resource, the
// separate GraphQL budget, the per-minute secondary limit, timeouts for queries asking too many
// nodes, and the 404 of a server without GraphQL.
#include <set>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/simulator/graphql.h"
#include "tests/simulator/sim_test_util.h"

namespace issuescope::sim {
namespace {

using nlohmann::json;

const std::set<std::string> kConnections = {"issues", "comments", "labels", "assignees",
                                            "reactions"};

std::string Body(const std::string& query, const json& variables = json::object()) {
  return json{{"query", query}, {"variables", variables}}.dump();
}

TEST(GraphqlParseTest, ReadsOperationsAliasesArgumentsAndVariables) {
  auto op = graphql::Parse(Body(R"(
    # a comment
    query Page($owner: String!, $n: Int = 7, $after: String) {
      repository(owner: $owner, name: "pytorch") {
        issues(first: $n, after: $after, orderBy: {field: UPDATED_AT, direction: ASC},
               filterBy: {since: "2024-01-01T00:00:00Z", states: [OPEN, CLOSED]}) {
          nodes { number t: title }
        }
      }
    })",
                                json{{"owner", "pytorch"}}));
  ASSERT_TRUE(op.ok()) << op.status();
  EXPECT_EQ(op->name, "Page");
  ASSERT_EQ(op->selections.size(), 1u);
  const graphql::Field& repo = op->selections[0];
  EXPECT_EQ(repo.args["owner"], "pytorch");
  const graphql::Field& issues = repo.selections[0];
  EXPECT_EQ(issues.args["first"], 7);            // the default
  EXPECT_TRUE(issues.args["after"].is_null());   // a nullable variable left out
  EXPECT_EQ(issues.args["orderBy"]["field"], "UPDATED_AT");
  EXPECT_EQ(issues.args["filterBy"]["states"], json::array({"OPEN", "CLOSED"}));
  EXPECT_EQ(issues.selections[0].selections[1].alias, "t");
  EXPECT_EQ(issues.selections[0].selections[1].name, "title");
}

TEST(GraphqlParseTest, HostileNestingIsAnErrorNotACrash) {
  std::string deep = "{";
  for (int i = 0; i < 100000; ++i) deep += "a{";
  auto op = graphql::Parse(Body(deep));
  ASSERT_FALSE(op.ok());
  EXPECT_NE(op.status().message().find("levels deep"), std::string::npos);
  std::string lists = "{ a(x: ";
  for (int i = 0; i < 100000; ++i) lists += "[";
  EXPECT_FALSE(graphql::Parse(Body(lists)).ok());
  // Ten nested first:100 connections: the arithmetic saturates, the node limit refuses it.
  std::string nested = "{ repository(owner:\"a\",name:\"b\") { ";
  for (int i = 0; i < 10; ++i) nested += "issues(first:100) { nodes { ";
  nested += "number";
  for (int i = 0; i < 10; ++i) nested += " } }";
  nested += " } }";
  auto parsed = graphql::Parse(Body(nested));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  auto cost = graphql::Analyse(*parsed, kConnections);
  ASSERT_TRUE(cost.ok()) << cost.status();
  EXPECT_GT(cost->nodes, 500000);
  EXPECT_GT(cost->points, 0);
}

TEST(GraphqlParseTest, ErrorsNameTheProblemAndWhere) {
  auto bad = [](const std::string& body) {
    auto op = graphql::Parse(body);
    EXPECT_FALSE(op.ok()) << body;
    return op.ok() ? std::string() : std::string(op.status().message());
  };
  EXPECT_EQ(bad("{not json"), "Problems parsing JSON");
  EXPECT_NE(bad(R"({"variables": {}})").find("query attribute"), std::string::npos);
  EXPECT_NE(bad(Body("{ repository(owner: \"a\" { id } }")).find("line 1"), std::string::npos);
  EXPECT_NE(bad(Body("mutation { x }")).find("unsupported operation 'mutation'"),
            std::string::npos);
  EXPECT_NE(bad(Body("{ ...F }")).find("fragments"), std::string::npos);
  EXPECT_NE(bad(Body("query { a(x: $undeclared) }")).find("$undeclared"), std::string::npos);
  EXPECT_NE(bad(Body("{ a(x: \"unterminated) }")).find("unterminated"), std::string::npos);
  EXPECT_NE(bad(Body("{ }")).find("selects nothing"), std::string::npos);
  EXPECT_NE(bad(Body("{ a } { b }")).find("more than one operation"), std::string::npos);
}

// Cost is GitHub's: one request per connection instance, /100, rounded to nearest, at least 1.
TEST(GraphqlCostTest, FollowsGithubsAlgorithm) {
  auto cost = [](const std::string& query) {
    auto op = graphql::Parse(Body(query));
    EXPECT_TRUE(op.ok()) << op.status();
    auto c = graphql::Analyse(*op, kConnections);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? *c : graphql::Cost{};
  };
  // One page of 100 issues with 100 comments each: 1 + 100 requests -> 1 point, 10,100 nodes.
  graphql::Cost one = cost(
      "{ repository(owner:\"a\",name:\"b\") { issues(first:100) { nodes { number "
      "comments(first:100) { nodes { body } } } } } }");
  EXPECT_EQ(one.requests, 101);
  EXPECT_EQ(one.points, 1);
  EXPECT_EQ(one.nodes, 100 + 100 * 100);
  // Every nested connection is charged per parent, even one asked only for its count:
  // 1 + 4 * 37 = 149 -> 1 point; 1 + 4 * 38 = 153 -> 2 points.
  const std::string four =
      " { nodes { labels(first:20){nodes{name}} assignees(first:10){nodes{login}} "
      "reactions{totalCount} comments(first:50){nodes{body}} } } } }";
  EXPECT_EQ(cost("{ repository(owner:\"a\",name:\"b\") { issues(first:37)" + four).points, 1);
  EXPECT_EQ(cost("{ repository(owner:\"a\",name:\"b\") { issues(first:38)" + four).points, 2);
  // GitHub's documented example: 1 + 100 + 100 * 50 = 5,101 requests -> 51 points.
  EXPECT_EQ(cost("{ repository(owner:\"a\",name:\"b\") { issues(first:100) { nodes { "
                 "comments(first:50) { nodes { reactions(first:60) { nodes { content } } } } } } "
                 "} }")
                .points,
            51);
  EXPECT_EQ(cost("{ rateLimit { remaining } }").points, 0);
  EXPECT_EQ(cost("{ repository(owner:\"a\",name:\"b\") { nameWithOwner } }").points, 1);

  auto op = graphql::Parse(Body("{ repository(owner:\"a\",name:\"b\") { issues { nodes { number } } } }"));
  ASSERT_TRUE(op.ok());
  EXPECT_NE(graphql::Analyse(*op, kConnections).status().message().find("`first` or `last`"),
            std::string::npos);
  op = graphql::Parse(Body("{ repository(owner:\"a\",name:\"b\") { issues(first: 101) { totalCount } } }"));
  ASSERT_TRUE(op.ok());
  EXPECT_NE(graphql::Analyse(*op, kConnections).status().message().find("limit of 100"),
            std::string::npos);
}

class GraphqlHttpTest : public ::testing::Test {
 protected:
  void Start(FaultConfig faults = FaultConfig()) {
    SimulatorOptions o;
    o.repos = 1;
    o.issues_per_repo = 60;
    o.threads = 2;
    o.clock = &clock_;
    o.faults = faults;
    sim_ = testing::StartOrDie(o);
    ASSERT_NE(sim_, nullptr);
  }
  testing::Reply Post(const std::string& body, const std::string& token = "secret-one") {
    httplib::Client client("127.0.0.1", sim_->port());
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    auto res = client.Post("/graphql", headers, body, "application/json");
    testing::Reply reply;
    if (!res) {
      ADD_FAILURE() << "POST failed";
      return reply;
    }
    reply.status = res->status;
    reply.headers = res->headers;
    reply.body = res->body;
    reply.json = json::parse(res->body, nullptr, false);
    return reply;
  }
  static std::string IssuesQuery(int first, const std::string& extra = "") {
    return absl::StrCat(
        "query($after: String, $since: DateTime) { rateLimit { cost remaining resetAt } "
        "repository(owner: \"pytorch\", name: \"pytorch\") { issues(first: ", first,
        ", after: $after, orderBy: {field: UPDATED_AT, direction: ASC}, filterBy: {since: $since})"
        " { totalCount pageInfo { hasNextPage endCursor } nodes { number databaseId title state "
        "updatedAt author { login } comments(first: 100) { totalCount nodes { databaseId body } } ",
        extra, "} } } }");
  }
  FakeClock clock_;
  std::unique_ptr<TrackerSimulator> sim_;
};

TEST_F(GraphqlHttpTest, ListsEveryIssueOnceWithItsCommentsAndNoPullRequests) {
  Start();
  std::set<int64_t> numbers;
  int64_t comments = 0;
  json after = nullptr;
  int pages = 0;
  for (;; ++pages) {
    testing::Reply r = Post(Body(IssuesQuery(25), json{{"after", after}}));
    ASSERT_EQ(r.status, 200) << r.body;
    ASSERT_FALSE(r.json.contains("errors")) << r.body;
    EXPECT_EQ(r.Header("X-RateLimit-Resource"), "graphql");
    EXPECT_EQ(r.json["data"]["rateLimit"]["cost"], 1);
    const json& conn = r.json["data"]["repository"]["issues"];
    for (const json& issue : conn["nodes"]) {
      EXPECT_TRUE(numbers.insert(issue["number"].get<int64_t>()).second) << issue["number"];
      EXPECT_EQ(issue["comments"]["totalCount"].get<int64_t>(),
                static_cast<int64_t>(issue["comments"]["nodes"].size()));
      comments += issue["comments"]["totalCount"].get<int64_t>();
    }
    if (!conn["pageInfo"]["hasNextPage"].get<bool>()) break;
    after = conn["pageInfo"]["endCursor"];
  }
  int64_t expected = 0, expected_comments = 0;
  for (const CorpusEntry& e : sim_->Corpus()) {
    if (e.is_pull_request) continue;
    ++expected;
    expected_comments += e.comments;
    EXPECT_EQ(numbers.count(e.number), 1u) << e.number;
  }
  EXPECT_EQ(static_cast<int64_t>(numbers.size()), expected);
  EXPECT_EQ(comments, expected_comments);
  const SimStats stats = sim_->Stats();
  EXPECT_EQ(stats.graphql_requests, pages + 1);
  EXPECT_EQ(stats.graphql_points, pages + 1);
  EXPECT_EQ(stats.over_budget, 0);
}

TEST_F(GraphqlHttpTest, AnIssueUpdatedWhilePagingIsListedAgainNotSkipped) {
  Start();
  testing::Reply first = Post(Body(IssuesQuery(10)));
  ASSERT_EQ(first.status, 200);
  const json& nodes = first.json["data"]["repository"]["issues"]["nodes"];
  ASSERT_EQ(nodes.size(), 10u);
  std::set<int64_t> first_page;
  for (const json& issue : nodes) first_page.insert(issue["number"].get<int64_t>());
  MutationSpec spec;
  spec.repo = "pytorch/pytorch";
  spec.edited_issues = 30;
  auto changed = sim_->Mutate(spec);
  ASSERT_TRUE(changed.ok()) << changed.status();
  std::set<int64_t> touched;  // edited issues the first page already listed
  for (const IssueRef& ref : changed->changed_issues) {
    if (first_page.count(ref.number) > 0) touched.insert(ref.number);
  }
  ASSERT_FALSE(touched.empty()) << "the mutation should edit an issue of the first page";
  json after = first.json["data"]["repository"]["issues"]["pageInfo"]["endCursor"];
  std::set<int64_t> seen;
  for (;;) {
    testing::Reply r = Post(Body(IssuesQuery(50), json{{"after", after}}));
    ASSERT_EQ(r.status, 200) << r.body;
    const json& conn = r.json["data"]["repository"]["issues"];
    for (const json& issue : conn["nodes"]) seen.insert(issue["number"].get<int64_t>());
    if (!conn["pageInfo"]["hasNextPage"].get<bool>()) break;
    after = conn["pageInfo"]["endCursor"];
  }
  for (int64_t number : touched) EXPECT_EQ(seen.count(number), 1u) << number;
  // And nothing else was skipped: every issue the first page did not list comes later.
  for (const CorpusEntry& e : sim_->Corpus()) {
    if (e.is_pull_request || first_page.count(e.number) > 0) continue;
    EXPECT_EQ(seen.count(e.number), 1u) << e.number;
  }
}

TEST_F(GraphqlHttpTest, ErrorsAsGithubAnswersThem) {
  Start();
  // Unauthenticated: 401. Unknown field: errors, no data, nothing charged.
  EXPECT_EQ(Post(Body(IssuesQuery(5)), "").status, 401);
  testing::Reply unknown = Post(Body("{ repository(owner:\"pytorch\", name:\"pytorch\") { nope } }"));
  ASSERT_EQ(unknown.status, 200);
  EXPECT_FALSE(unknown.json.contains("data"));
  EXPECT_EQ(unknown.json["errors"][0]["message"], "Field 'nope' doesn't exist on type 'Repository'");
  // A missing repository or issue: null with NOT_FOUND.
  testing::Reply missing = Post(Body(
      "{ repository(owner:\"pytorch\", name:\"pytorch\") { issue(number: 999999) { title } } }"));
  ASSERT_EQ(missing.status, 200);
  EXPECT_TRUE(missing.json["data"]["repository"]["issue"].is_null());
  EXPECT_EQ(missing.json["errors"][0]["type"], "NOT_FOUND");
  testing::Reply cursor = Post(Body(IssuesQuery(5), json{{"after", "garbage"}}));
  EXPECT_NE(cursor.json["errors"][0]["message"].get<std::string>().find("valid cursor"),
            std::string::npos);
  // The node limit: 100 x 100 x 100 nested is a million nodes.
  testing::Reply huge = Post(Body(
      "{ repository(owner:\"pytorch\", name:\"pytorch\") { issues(first:100) { nodes { "
      "comments(first:100) { nodes { reactions(first:100) { totalCount } } } } } } }"));
  EXPECT_EQ(huge.json["errors"][0]["type"], "MAX_NODE_LIMIT_EXCEEDED");
  EXPECT_EQ(sim_->Stats().graphql_points, 1);  // only the NOT_FOUND query ran
}

TEST_F(GraphqlHttpTest, BudgetIsApartFromRestAndNeverOverspent) {
  FaultConfig f;
  f.graphql_budget = 3;
  Start(f);
  for (int i = 0; i < 3; ++i) {
    testing::Reply r = Post(Body(IssuesQuery(10)));
    ASSERT_EQ(r.status, 200);
    EXPECT_EQ(r.json["data"]["rateLimit"]["remaining"], 2 - i);
    EXPECT_EQ(r.Header("X-RateLimit-Remaining"), std::to_string(2 - i));
  }
  testing::Reply spent = Post(Body(IssuesQuery(10)));
  EXPECT_EQ(spent.status, 200);
  EXPECT_EQ(spent.json["errors"][0]["type"], "RATE_LIMITED");
  EXPECT_EQ(sim_->Stats().graphql_over_budget, 1);
  // REST still has its whole budget.
  testing::Reply rest = testing::Get(*sim_, "/repos/pytorch/pytorch",
                                     {{"Authorization", "Bearer secret-one"}});
  EXPECT_EQ(rest.status, 200);
  EXPECT_EQ(rest.Header("X-RateLimit-Remaining"), "4999");
}

TEST_F(GraphqlHttpTest, SecondaryLimitOnPointsPerMinuteSaysWhenToRetry) {
  FaultConfig f;
  f.graphql_points_per_minute = 2;
  Start(f);
  EXPECT_EQ(Post(Body(IssuesQuery(10))).status, 200);
  EXPECT_EQ(Post(Body(IssuesQuery(10))).status, 200);
  testing::Reply limited = Post(Body(IssuesQuery(10)));
  EXPECT_EQ(limited.status, 403);
  EXPECT_FALSE(limited.Header("Retry-After").empty());
  clock_.Advance(absl::Seconds(61));
  EXPECT_EQ(Post(Body(IssuesQuery(10))).status, 200);
}

TEST_F(GraphqlHttpTest, TimeoutsGrowWithTheNodesAskedForAndAreCharged) {
  FaultConfig f;
  f.graphql_timeout_nodes = 2000;
  Start(f);
  testing::Reply big = Post(Body(IssuesQuery(30)));  // 30 + 30 x 100 nodes
  EXPECT_EQ(big.status, 502);
  EXPECT_NE(big.body.find("timeout"), std::string::npos);
  testing::Reply small = Post(Body(IssuesQuery(15)));  // 15 + 1,500
  EXPECT_EQ(small.status, 200);
  const SimStats stats = sim_->Stats();
  EXPECT_EQ(stats.graphql_timeouts, 1);
  EXPECT_EQ(stats.graphql_points, 2);
}

TEST_F(GraphqlHttpTest, ServerWithoutGraphqlAnswers404) {
  FaultConfig f;
  f.graphql = false;
  Start(f);
  EXPECT_EQ(Post(Body(IssuesQuery(5))).status, 404);
}

}  // namespace
}  // namespace issuescope::sim

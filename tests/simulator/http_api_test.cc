// Tests of the HTTP behaviour over real HTTP: object shapes, ETag/304, rate limiting, Date and
// simulator time, 404/422 bodies, and the stats admin endpoint.
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/time_util.h"
#include "gtest/gtest.h"
#include "tests/simulator/sim_test_util.h"

namespace issuescope::sim {
namespace {

using testing::Get;
using testing::Reply;

class HttpApiTest : public ::testing::Test {
 protected:
  void Start(int64_t rate_limit = 5000) {
    SimulatorOptions o;
    o.repos = 2;
    o.issues_per_repo = 40;
    o.rate_limit = rate_limit;
    o.threads = 2;
    o.clock = &clock_;
    sim_ = testing::StartOrDie(o);
    ASSERT_NE(sim_, nullptr);
  }
  FakeClock clock_;
  std::unique_ptr<TrackerSimulator> sim_;
};

TEST_F(HttpApiTest, RepositoryAndIssueShapes) {
  Start();
  Reply repo = Get(*sim_, "/repos/PyTorch/PYTORCH");  // names are case-insensitive
  ASSERT_EQ(repo.status, 200);
  EXPECT_EQ(repo.json["full_name"], "pytorch/pytorch");
  EXPECT_EQ(repo.json["owner"]["login"], "pytorch");
  EXPECT_EQ(repo.json["has_issues"], true);
  for (const char* k : {"id", "name", "html_url", "open_issues_count", "created_at",
                        "updated_at"}) {
    EXPECT_TRUE(repo.json.contains(k)) << k;
  }
  Reply issue = Get(*sim_, "/repos/pytorch/pytorch/issues/3");
  ASSERT_EQ(issue.status, 200);
  const std::string base = sim_->base_url();
  EXPECT_EQ(issue.json["url"], base + "/repos/pytorch/pytorch/issues/3");
  EXPECT_TRUE(issue.json["html_url"] == base + "/pytorch/pytorch/issues/3" ||
              issue.json["html_url"] == base + "/pytorch/pytorch/pull/3");
  for (const char* k :
       {"url", "repository_url", "labels_url", "comments_url", "events_url", "html_url", "id",
        "node_id", "number", "title", "user", "labels", "state", "locked", "assignee",
        "assignees", "milestone", "comments", "created_at", "updated_at", "closed_at",
        "author_association", "active_lock_reason", "body", "reactions", "timeline_url",
        "state_reason", "performed_via_github_app"}) {
    EXPECT_TRUE(issue.json.contains(k)) << k;
  }
  for (const char* k : {"login", "id", "node_id", "type", "site_admin"}) {
    EXPECT_TRUE(issue.json["user"].contains(k)) << k;
  }
  for (const char* k : {"url", "total_count", "+1", "-1", "laugh", "hooray", "confused", "heart",
                        "rocket", "eyes"}) {
    EXPECT_TRUE(issue.json["reactions"].contains(k)) << k;
  }
  EXPECT_TRUE(absl::EndsWith(issue.json["created_at"].get<std::string>(), "Z"));
  EXPECT_EQ(issue.json["created_at"].get<std::string>().size(), 20u);
}

TEST_F(HttpApiTest, ConditionalRequestsAre304AndFree) {
  Start();
  const std::string path = "/repos/pytorch/pytorch/issues?state=all&per_page=10";
  Reply first = Get(*sim_, path);
  ASSERT_EQ(first.status, 200);
  const std::string etag = first.Header("ETag");
  EXPECT_TRUE(absl::StartsWith(etag, "W/\"")) << etag;
  EXPECT_EQ(first.Header("X-RateLimit-Remaining"), "4999");
  for (int k = 0; k < 3; ++k) {
    Reply again = Get(*sim_, path, {{"If-None-Match", etag}});
    EXPECT_EQ(again.status, 304);
    EXPECT_EQ(again.body, "");
    EXPECT_EQ(again.Header("X-RateLimit-Remaining"), "4999") << "a 304 costs nothing";
  }
  Reply stale = Get(*sim_, path, {{"If-None-Match", "W/\"0000\""}});
  EXPECT_EQ(stale.status, 200);
  EXPECT_EQ(stale.Header("X-RateLimit-Remaining"), "4998");
  EXPECT_EQ(stale.Header("ETag"), etag) << "same body, same ETag";
  SimStats stats = sim_->Stats();
  EXPECT_EQ(stats.requests, 5);
  EXPECT_EQ(stats.not_modified, 3);
  EXPECT_EQ(stats.by_endpoint["issues"], 5);
  EXPECT_EQ(stats.by_repo["pytorch/pytorch"], 5);
}

TEST_F(HttpApiTest, RateLimitRunsOutPerTokenAndResetsAfterAnHour) {
  Start(/*rate_limit=*/3);
  const httplib::Headers alice = {{"Authorization", "token alice"}};
  for (int k = 1; k <= 3; ++k) {
    Reply r = Get(*sim_, "/repos/pytorch/pytorch", alice);
    ASSERT_EQ(r.status, 200);
    EXPECT_EQ(r.Header("X-RateLimit-Limit"), "3");
    EXPECT_EQ(r.Header("X-RateLimit-Used"), std::to_string(k));
    EXPECT_EQ(r.Header("X-RateLimit-Remaining"), std::to_string(3 - k));
    EXPECT_EQ(r.Header("X-RateLimit-Resource"), "core");
  }
  Reply limited = Get(*sim_, "/repos/pytorch/pytorch", alice);
  EXPECT_EQ(limited.status, 403);
  EXPECT_EQ(limited.Header("X-RateLimit-Remaining"), "0");
  EXPECT_EQ(limited.body,
            R"({"message":"API rate limit exceeded for user ID 1.","documentation_url":)"
            R"("https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting"})");
  const int64_t reset = std::stoll(limited.Header("X-RateLimit-Reset"));
  EXPECT_EQ(reset, sim_->SimNow() + 3600);
  // Another token and the anonymous budget are separate.
  EXPECT_EQ(Get(*sim_, "/repos/pytorch/pytorch", {{"Authorization", "token bob"}}).status, 200);
  EXPECT_EQ(Get(*sim_, "/repos/pytorch/pytorch").status, 200);
  EXPECT_EQ(sim_->Stats().rate_limited, 1);
  clock_.Advance(absl::Hours(1));
  Reply fresh = Get(*sim_, "/repos/pytorch/pytorch", alice);
  EXPECT_EQ(fresh.status, 200);
  EXPECT_EQ(fresh.Header("X-RateLimit-Remaining"), "2");
  EXPECT_EQ(std::stoll(fresh.Header("X-RateLimit-Reset")), reset + 3600);
}

TEST_F(HttpApiTest, DateIsSimulatorTime) {
  Start();
  const int64_t t0 = sim_->SimNow();
  Reply r = Get(*sim_, "/repos/pytorch/pytorch");
  const std::string expected =
      absl::FormatTime("%a, %d %b %Y %H:%M:%S GMT", absl::FromUnixSeconds(t0), absl::UTCTimeZone());
  EXPECT_EQ(r.Header("Date"), expected);
  clock_.Advance(absl::Seconds(90));
  EXPECT_EQ(sim_->SimNow(), t0 + 90);
  // Simulator time starts an hour after the newest corpus timestamp.
  int64_t newest = 0;
  for (const CorpusEntry& e : sim_->Corpus()) {
    newest = std::max(newest, absl::ToUnixSeconds(*ParseRfc3339(e.updated_at)));
  }
  EXPECT_GE(t0, newest + 3600);
}

TEST_F(HttpApiTest, NotFoundAndValidationBodies) {
  Start();
  const std::string not_found =
      R"({"message":"Not Found","documentation_url":"https://docs.github.com/rest"})";
  for (const char* path : {"/repos/nobody/nothing", "/repos/nobody/nothing/issues",
                           "/repos/pytorch/pytorch/issues/99999", "/users/alice", "/",
                           "/repos/pytorch/pytorch/pulls", "/repos/pytorch/pytorch/issues/x1"}) {
    Reply r = Get(*sim_, path);
    EXPECT_EQ(r.status, 404) << path;
    EXPECT_EQ(r.body, not_found) << path;
  }
  struct Case {
    const char* query;
    const char* field;
  };
  for (const Case& c : {Case{"per_page=abc", "per_page"}, Case{"per_page=0", "per_page"},
                        Case{"page=-1", "page"}, Case{"since=yesterday", "since"},
                        Case{"state=maybe", "state"}, Case{"sort=votes", "sort"},
                        Case{"direction=up", "direction"}}) {
    Reply r = Get(*sim_, absl::StrCat("/repos/pytorch/pytorch/issues?", c.query));
    EXPECT_EQ(r.status, 422) << c.query;
    EXPECT_EQ(r.json["message"], "Validation Failed") << c.query;
    EXPECT_EQ(r.json["errors"][0]["field"], c.field) << c.query;
  }
  Reply comments = Get(*sim_, "/repos/pytorch/pytorch/issues/comments?sort=comments");
  EXPECT_EQ(comments.status, 422) << "comments cannot be sorted by comments";
}

TEST_F(HttpApiTest, StatsAdminEndpointIsFreeAndResettable) {
  Start(/*rate_limit=*/2);
  Get(*sim_, "/repos/pytorch/pytorch/issues");
  Get(*sim_, "/repos/vllm-project/vllm/issues/comments");
  for (int k = 0; k < 3; ++k) {
    Reply s = Get(*sim_, "/_sim/stats");
    ASSERT_EQ(s.status, 200) << "admin requests are never rate-limited";
    EXPECT_EQ(s.json["requests"], 2);
    EXPECT_EQ(s.json["by_endpoint"]["issues"], 1);
    EXPECT_EQ(s.json["by_endpoint"]["comments"], 1);
    EXPECT_EQ(s.json["by_endpoint"]["repo"], 0);
    EXPECT_EQ(s.json["by_repo"]["vllm-project/vllm"], 1);
  }
  EXPECT_EQ(testing::Post(*sim_, "/_sim/stats/reset", "").status, 200);
  EXPECT_EQ(Get(*sim_, "/_sim/stats").json["requests"], 0);
  Reply corpus = Get(*sim_, "/_sim/corpus");
  ASSERT_EQ(corpus.json.size(), 80u);
  for (const char* k : {"repo", "number", "updated_at", "is_pull_request", "comments", "planted",
                        "title"}) {
    EXPECT_TRUE(corpus.json[0].contains(k)) << k;
  }
}

}  // namespace
}  // namespace issuescope::sim

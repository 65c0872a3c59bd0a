// Fault injection over real HTTP: 5xx, cut connections, invalid JSON, slow responses and latency
// (on the FakeClock), secondary limits with and without Retry-After, budgets and over_budget,
// 301 transfers, 410 deletions and 422 deep pages in every dialect; determinism from the seed;
// the /_sim/faults admin endpoint and the flag parsers.
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/simulator/sim_test_util.h"

namespace issuescope::sim {
namespace {

using testing::Get;
using testing::Post;
using testing::Reply;

class FaultsTest : public ::testing::Test {
 protected:
  void Start(FaultConfig faults = FaultConfig()) {
    SimulatorOptions o;
    o.repo_specs = {*ParseRepoSpec("pytorch/pytorch:30"), *ParseRepoSpec("gitlab:g/p:20"),
                    *ParseRepoSpec("gitee:mindspore/mindspore:20")};
    o.comments_per_issue = 1;
    o.threads = 2;
    o.clock = &clock_;
    o.faults = faults;
    sim_ = testing::StartOrDie(o);
    ASSERT_NE(sim_, nullptr);
  }
  Reply SetFaults(const std::string& json) { return Post(*sim_, "/_sim/faults", json); }
  FakeClock clock_;
  std::unique_ptr<TrackerSimulator> sim_;
};

TEST_F(FaultsTest, ServerErrorsCostNoBudget) {
  FaultConfig f;
  f.error_rate = 1.0;
  Start(f);
  std::set<int> statuses;
  for (int k = 0; k < 30; ++k) {
    Reply r = Get(*sim_, absl::StrCat("/repos/pytorch/pytorch/issues?page=", k + 1));
    EXPECT_TRUE(r.status == 500 || r.status == 502 || r.status == 503) << r.status;
    EXPECT_TRUE(r.Header("X-RateLimit-Remaining").empty());
    statuses.insert(r.status);
  }
  EXPECT_EQ(statuses.size(), 3u) << "all three 5xx appear";
  EXPECT_EQ(sim_->Stats().server_errors, 30);
  ASSERT_EQ(SetFaults(R"({"error_rate": 0})").status, 200);
  Reply ok = Get(*sim_, "/repos/pytorch/pytorch");
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.Header("X-RateLimit-Remaining"), "4999");
}

// Statuses of a fixed request sequence with retries of each request until it succeeds.
std::vector<int> Sequence(TrackerSimulator& sim) {
  std::vector<int> out;
  for (int k = 1; k <= 20; ++k) {
    for (int attempt = 0; attempt < 20; ++attempt) {
      Reply r = Get(sim, absl::StrCat("/api/v4/projects/g%2Fp/issues?per_page=1&page=", k));
      out.push_back(r.status);
      if (r.status == 200) break;
    }
  }
  return out;
}

TEST_F(FaultsTest, DecisionsAreDeterministicAndRetriesGetFreshDraws) {
  FaultConfig f;
  f.error_rate = 0.5;
  f.seed = 42;
  Start(f);
  const std::vector<int> first = Sequence(*sim_);
  int failures = 0;
  for (int s : first) failures += s != 200 ? 1 : 0;
  EXPECT_GT(failures, 3);
  EXPECT_EQ(std::count(first.begin(), first.end(), 200), 20) << "every request succeeds in time";
  FakeClock clock2;
  SimulatorOptions o;
  o.repo_specs = {*ParseRepoSpec("gitlab:g/p:20")};
  o.clock = &clock2;
  o.faults = f;
  auto other = testing::StartOrDie(o);
  EXPECT_EQ(Sequence(*other), first) << "same seed, same faults";
  o.faults.seed = 43;
  auto third = testing::StartOrDie(o);
  EXPECT_NE(Sequence(*third), first) << "another seed, other faults";
}

TEST_F(FaultsTest, TruncatedBodiesCutTheConnection) {
  FaultConfig f;
  f.truncated_rate = 1.0;
  Start(f);
  for (const char* path : {"/repos/pytorch/pytorch/issues?state=all", "/api/v4/projects/g%2Fp/issues",
                           "/api/v5/repos/mindspore/mindspore/issues?state=all"}) {
    const std::string raw = testing::RawGet(sim_->port(), path);
    ASSERT_TRUE(absl::StartsWith(raw, "HTTP/1.1 200")) << path;
    const size_t announced = std::stoul(testing::RawHeader(raw, "Content-Length"));
    const size_t received = raw.size() - (raw.find("\r\n\r\n") + 4);
    EXPECT_GT(received, 0u) << path;
    EXPECT_LT(received, announced) << "the connection closes mid-body: " << path;
  }
  EXPECT_EQ(sim_->Stats().truncated, 3);
}

TEST_F(FaultsTest, InvalidJsonKeepsStatus200) {
  FaultConfig f;
  f.invalid_json_rate = 1.0;
  Start(f);
  Reply r = Get(*sim_, "/api/v5/repos/mindspore/mindspore/issues?state=all");
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.body.empty());
  EXPECT_TRUE(nlohmann::json::parse(r.body, nullptr, false).is_discarded()) << r.body;
  EXPECT_EQ(sim_->Stats().invalid_json, 1);
}

TEST_F(FaultsTest, SlowResponsesAndLatencyTakeClockTime) {
  FaultConfig f;
  f.slow_rate = 1.0;
  f.slow_ms = 250;
  f.latency_ms = 100;
  Start(f);
  const absl::Duration before = clock_.TotalSlept();
  EXPECT_EQ(Get(*sim_, "/repos/pytorch/pytorch/issues").status, 200);
  EXPECT_EQ(clock_.TotalSlept() - before, absl::Milliseconds(350));
  ASSERT_EQ(SetFaults(R"({"slow_rate": 0})").status, 200);
  EXPECT_EQ(Get(*sim_, "/api/v4/projects/g%2Fp").status, 200);
  EXPECT_EQ(clock_.TotalSlept() - before, absl::Milliseconds(450));
  EXPECT_EQ(sim_->Stats().slow, 1);
}

TEST_F(FaultsTest, SecondaryLimitsWithAndWithoutRetryAfter) {
  Start();
  ASSERT_EQ(SetFaults(R"({"secondary_limit_rate": 1, "secondary_limit_status": 429,
                          "with_retry_after": 1, "retry_after_s": 2})").status, 200);
  const httplib::Headers alice = {{"Authorization", "token alice"}};
  Reply r = Get(*sim_, "/repos/pytorch/pytorch", alice);
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(r.Header("Retry-After"), "2");
  EXPECT_EQ(r.Header("X-RateLimit-Remaining"), "5000") << "a secondary limit is not the budget";
  EXPECT_TRUE(absl::StrContains(r.json["message"].get<std::string>(), "secondary rate limit"));
  Get(*sim_, "/repos/pytorch/pytorch", alice);  // too early
  clock_.Advance(absl::Seconds(2));
  Get(*sim_, "/repos/pytorch/pytorch", alice);  // on time
  SimStats stats = sim_->Stats();
  EXPECT_EQ(stats.retry_after_violations, 1);
  EXPECT_EQ(stats.by_token[TokenLabel(Tracker::kGithub, "alice")].retry_after_violations, 1);
  EXPECT_EQ(stats.secondary_limited, 3);
  ASSERT_EQ(SetFaults(R"({"with_retry_after": 0, "secondary_limit_status": 403})").status, 200);
  Reply no_retry = Get(*sim_, "/repos/pytorch/pytorch");
  EXPECT_EQ(no_retry.status, 403);
  EXPECT_FALSE(no_retry.headers.count("Retry-After"));
  Reply gitlab = Get(*sim_, "/api/v4/projects/g%2Fp");
  EXPECT_EQ(gitlab.status, 429) << "GitLab always answers 429";
  EXPECT_EQ(gitlab.body, "Retry later\n");
  EXPECT_FALSE(gitlab.Header("RateLimit-Remaining").empty());
  EXPECT_EQ(Get(*sim_, "/api/v5/repos/mindspore/mindspore").status, 403);
}

TEST_F(FaultsTest, BudgetRunsOutAndOverBudgetIsCounted) {
  Start();
  ASSERT_EQ(SetFaults(R"({"budget": 2, "budget_window_s": 60})").status, 200);
  const httplib::Headers bob = {{"Authorization", "Bearer bob"}};
  EXPECT_EQ(Get(*sim_, "/repos/pytorch/pytorch", bob).Header("X-RateLimit-Remaining"), "1");
  EXPECT_EQ(Get(*sim_, "/repos/pytorch/pytorch", bob).Header("X-RateLimit-Remaining"), "0");
  EXPECT_EQ(sim_->Stats().over_budget, 0);
  Reply spent = Get(*sim_, "/repos/pytorch/pytorch", bob);
  EXPECT_EQ(spent.status, 403);
  EXPECT_EQ(spent.Header("X-RateLimit-Remaining"), "0");
  EXPECT_EQ(std::stoll(spent.Header("X-RateLimit-Reset")), sim_->SimNow() + 60);
  Reply stats = Get(*sim_, "/_sim/stats");
  EXPECT_EQ(stats.json["over_budget"], 1);
  EXPECT_EQ(stats.json["by_token"][TokenLabel(Tracker::kGithub, "bob")]["over_budget"], 1);
  EXPECT_FALSE(absl::StrContains(stats.body, "bob\"")) << "labels, not tokens";
  clock_.Advance(absl::Seconds(60));
  EXPECT_EQ(Get(*sim_, "/repos/pytorch/pytorch", bob).status, 200);
}

TEST_F(FaultsTest, TransfersAnswer301InEveryDialect) {
  Start();
  Reply set = SetFaults(R"({"transfer": [{"from": "github:pytorch/pytorch", "to": "meta/torch"},
                                          {"from": "gitlab:g/p", "to": "g2/p2"},
                                          {"from": "gitee:mindspore/mindspore", "to": "ms/ms"}]})");
  ASSERT_EQ(set.status, 200) << set.body;
  Reply moved = Get(*sim_, "/repos/pytorch/pytorch/issues?per_page=5");
  ASSERT_EQ(moved.status, 301);
  const std::string location = moved.Header("Location");
  EXPECT_TRUE(absl::EndsWith(location, "/issues?per_page=5")) << location;
  EXPECT_TRUE(absl::StrContains(location, "/repositories/")) << "GitHub redirects by id";
  EXPECT_EQ(moved.json["message"], "Moved Permanently");
  Reply followed = Get(*sim_, location);
  EXPECT_EQ(followed.status, 200);
  EXPECT_EQ(followed.json.size(), 5u);
  EXPECT_EQ(Get(*sim_, "/repos/meta/torch").json["full_name"], "meta/torch");
  Reply repo_by_id = Get(*sim_, location.substr(0, location.find("/issues")));
  EXPECT_EQ(repo_by_id.json["full_name"], "meta/torch");

  // httplib's client decodes header values, so read the Location as sent.
  const std::string gl = testing::RawGet(sim_->port(), "/api/v4/projects/g%2Fp/issues?per_page=2");
  ASSERT_TRUE(absl::StartsWith(gl, "HTTP/1.1 301")) << gl;
  const std::string gl_location = testing::RawHeader(gl, "Location");
  EXPECT_EQ(gl_location, sim_->base_url() + "/api/v4/projects/g2%2Fp2/issues?per_page=2");
  EXPECT_EQ(Get(*sim_, gl_location).status, 200);
  const int64_t id = Get(*sim_, "/api/v4/projects/g2%2Fp2").json["id"].get<int64_t>();
  EXPECT_EQ(Get(*sim_, absl::StrCat("/api/v4/projects/", id)).status, 200) << "ids survive";

  Reply ge = Get(*sim_, "/api/v5/repos/mindspore/mindspore/issues");
  ASSERT_EQ(ge.status, 301);
  EXPECT_TRUE(absl::EndsWith(ge.Header("Location"), "/api/v5/repos/ms/ms/issues"));
  EXPECT_EQ(sim_->Stats().moved, 3);
  std::set<std::string> repos;
  for (const CorpusEntry& e : sim_->Corpus()) repos.insert(e.tracker + ":" + e.repo);
  EXPECT_EQ(repos, (std::set<std::string>{"github:meta/torch", "gitlab:g2/p2", "gitee:ms/ms"}));
  EXPECT_EQ(SetFaults(R"({"transfer": [{"from": "nobody/none", "to": "a/b"}]})").status, 404);
}

TEST_F(FaultsTest, DeletedIssuesAnswer410AndLeaveListings) {
  Start();
  Reply set = SetFaults(R"({"delete": [{"repo": "github:pytorch/pytorch", "numbers": [3]},
                                        {"repo": "gitlab:g/p", "numbers": [4]},
                                        {"repo": "gitee:mindspore/mindspore", "keys": ["I10005"]}]})");
  ASSERT_EQ(set.status, 200) << set.body;
  EXPECT_EQ(set.json["deleted"].size(), 3u);
  Reply gh = Get(*sim_, "/repos/pytorch/pytorch/issues/3");
  EXPECT_EQ(gh.status, 410);
  EXPECT_EQ(gh.json["message"], "This issue was deleted");
  EXPECT_EQ(Get(*sim_, "/repos/pytorch/pytorch/issues/3/comments").status, 410);
  EXPECT_EQ(Get(*sim_, "/api/v4/projects/g%2Fp/issues/4").status, 410);
  EXPECT_EQ(Get(*sim_, "/api/v4/projects/g%2Fp/issues/4/notes").status, 410);
  EXPECT_EQ(Get(*sim_, "/api/v5/repos/mindspore/mindspore/issues/I10005").status, 410);
  Reply list = Get(*sim_, "/repos/pytorch/pytorch/issues?state=all&per_page=100");
  EXPECT_EQ(list.json.size(), 29u);
  for (const auto& i : list.json) EXPECT_NE(i["number"], 3);
  EXPECT_EQ(Get(*sim_, "/api/v4/projects/g%2Fp/issues?per_page=100").json.size(), 19u);
  EXPECT_EQ(sim_->Corpus().size(), 67u);
  Reply deleted = Get(*sim_, "/_sim/deleted");
  ASSERT_EQ(deleted.json.size(), 3u);
  EXPECT_EQ(deleted.json[2]["key"], "I10005");
  EXPECT_EQ(deleted.json[2]["number"], kGiteeKeyBase + 5);
  EXPECT_EQ(sim_->Stats().gone, 5);
  EXPECT_EQ(SetFaults(R"({"delete": [{"repo": "pytorch/pytorch", "numbers": [3]}]})").status, 404)
      << "already deleted";
}

TEST_F(FaultsTest, DeepPagesAnswer422) {
  Start();
  ASSERT_EQ(SetFaults(R"({"deep_page_limit": 2})").status, 200);
  EXPECT_EQ(Get(*sim_, "/repos/pytorch/pytorch/issues?per_page=1&page=2").status, 200);
  Reply deep = Get(*sim_, "/repos/pytorch/pytorch/issues?per_page=1&page=3");
  EXPECT_EQ(deep.status, 422);
  EXPECT_TRUE(absl::StrContains(deep.json["message"].get<std::string>(), "pagination is limited"));
  EXPECT_EQ(Get(*sim_, "/api/v4/projects/g%2Fp/issues?page=3").status, 422);
  EXPECT_EQ(Get(*sim_, "/api/v5/repos/mindspore/mindspore/issues?page=3").status, 422);
  EXPECT_EQ(Get(*sim_, "/repos/pytorch/pytorch").status, 200) << "only lists are paged";
  EXPECT_EQ(sim_->Stats().deep_page_rejected, 3);
}

TEST_F(FaultsTest, AdminEndpointValidatesAndReports) {
  Start();
  Reply get = Get(*sim_, "/_sim/faults");
  ASSERT_EQ(get.status, 200);
  EXPECT_EQ(get.json["error_rate"], 0.0);
  EXPECT_EQ(get.json["budget_window_s"], 3600);
  struct Case {
    const char* body;
    const char* names;
  };
  for (const Case& c : {Case{"[]", "JSON object"}, Case{R"({"error_rate": 2})", "error_rate"},
                        Case{R"({"slow_ms": "x"})", "slow_ms"}, Case{R"({"bogus": 1})", "bogus"},
                        Case{R"({"secondary_limit_status": 404})", "secondary_limit_status"},
                        Case{R"({"transfer": [{"from": 1}]})", "transfer"}}) {
    Reply r = SetFaults(c.body);
    EXPECT_EQ(r.status, 400) << c.body;
    EXPECT_TRUE(absl::StrContains(r.json["message"].get<std::string>(), c.names)) << r.body;
  }
  ASSERT_EQ(SetFaults(R"({"error_rate": 0.25, "latency_ms": 5})").status, 200);
  ASSERT_EQ(SetFaults(R"({"slow_rate": 0.5})").status, 200);
  FaultConfig now = sim_->Faults();
  EXPECT_EQ(now.error_rate, 0.25) << "fields not given keep their values";
  EXPECT_EQ(now.slow_rate, 0.5);
  ASSERT_EQ(SetFaults(R"({"reset": true})").status, 200);
  EXPECT_EQ(sim_->Faults().error_rate, 0.0);
}

TEST(FaultFlagsTest, ParsersNameWhatIsWrong) {
  auto spec = ParseRepoSpec("gitlab:group/sub/project:500");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->tracker, Tracker::kGitlab);
  EXPECT_EQ(spec->owner, "group/sub");
  EXPECT_EQ(spec->name, "project");
  EXPECT_EQ(spec->issues, 500);
  auto plain = ParseRepoSpec("pytorch/pytorch");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->tracker, Tracker::kGithub);
  EXPECT_EQ(plain->issues, -1);
  for (const char* bad : {"", "pytorch", "github:a/b/c", "gitee:a/b:x", "svn:a/b", "/b", "a/"}) {
    EXPECT_FALSE(ParseRepoSpec(bad).ok()) << bad;
  }
  auto transfer = ParseTransferFlag("gitee:a/b=c/d");
  ASSERT_TRUE(transfer.ok());
  EXPECT_EQ(transfer->from, "gitee:a/b");
  EXPECT_EQ(transfer->to, "c/d");
  EXPECT_FALSE(ParseTransferFlag("a/b").ok());
  auto del = ParseDeleteFlag("gitee:a/b#I10001,7");
  ASSERT_TRUE(del.ok());
  EXPECT_EQ(del->keys, std::vector<std::string>{"I10001"});
  EXPECT_EQ(del->numbers, std::vector<int64_t>{7});
  EXPECT_FALSE(ParseDeleteFlag("a/b#x").ok());
  EXPECT_FALSE(ParseDeleteFlag("a/b").ok());
}

}  // namespace
}  // namespace issuescope::sim

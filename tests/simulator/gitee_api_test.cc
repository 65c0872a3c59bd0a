// Gitee v5 dialect over real HTTP: repository, issues with string keys, the four states,
// total_count/total_page headers, +08:00 timestamps, mostly Chinese text, per-issue and
// repository-wide comments, access_token budgets, 400/404.
#include <regex>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/simulator/sim_test_util.h"

namespace issuescope::sim {
namespace {

using testing::Get;
using testing::Reply;

constexpr char kRepo[] = "/api/v5/repos/mindspore/mindspore";

// HasHan reports whether UTF-8 `text` contains a CJK ideograph (lead bytes E4..E9).
bool HasHan(const std::string& text) {
  for (unsigned char c : text) {
    if (c >= 0xE4 && c <= 0xE9) return true;
  }
  return false;
}

class GiteeApiTest : public ::testing::Test {
 protected:
  void Start(int64_t rate_limit = 5000) {
    SimulatorOptions o;
    o.repo_specs = {*ParseRepoSpec("gitee:mindspore/mindspore:45"),
                    *ParseRepoSpec("gitlab:mindspore/mindspore:5")};
    o.comments_per_issue = 2;
    o.rate_limit = rate_limit;
    o.threads = 2;
    o.clock = &clock_;
    sim_ = testing::StartOrDie(o);
    ASSERT_NE(sim_, nullptr);
  }
  std::vector<CorpusEntry> Entries() {
    std::vector<CorpusEntry> out;
    for (const CorpusEntry& e : sim_->Corpus()) {
      if (e.tracker == "gitee") out.push_back(e);
    }
    return out;
  }
  FakeClock clock_;
  std::unique_ptr<TrackerSimulator> sim_;
};

TEST(GiteeKeyTest, KeysFollowTheContract) {
  EXPECT_EQ(GiteeKey(kGiteeKeyBase + 1), "I10001");
  EXPECT_EQ(GiteeKey(kGiteeKeyBase + 36), "I10010");
  int64_t n = 0;
  ASSERT_TRUE(ParseGiteeKey("I1DACG", &n));
  EXPECT_EQ(GiteeKey(n), "I1DACG");
  for (const char* bad : {"", "I", "1DACG", "i1dacg", "I1-2", "I1dacg"}) {
    EXPECT_FALSE(ParseGiteeKey(bad, &n)) << bad;
  }
}

TEST_F(GiteeApiTest, IssuesHaveStringKeysStatesAndTotals) {
  Start();
  Reply repo = Get(*sim_, kRepo);
  ASSERT_EQ(repo.status, 200) << repo.body;
  EXPECT_EQ(repo.json["full_name"], "mindspore/mindspore");
  EXPECT_TRUE(repo.Header("ETag").empty()) << "Gitee recordings show no ETag";
  const std::string path =
      absl::StrCat(kRepo, "/issues?state=all&sort=updated&direction=asc&per_page=20");
  Reply first = Get(*sim_, path + "&page=1");
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(first.Header("total_count"), "45");
  EXPECT_EQ(first.Header("total_page"), "3");
  EXPECT_TRUE(first.Header("Link").empty());
  std::set<std::string> keys, states;
  int han = 0;
  std::string last;
  for (int page = 1; page <= 3; ++page) {
    Reply r = Get(*sim_, absl::StrCat(path, "&page=", page));
    for (const auto& i : r.json) {
      const std::string key = i["number"].get<std::string>();
      EXPECT_TRUE(std::regex_match(key, std::regex("I[0-9A-Z]{5,}"))) << key;
      keys.insert(key);
      states.insert(i["state"].get<std::string>());
      han += HasHan(i["title"].get<std::string>()) ? 1 : 0;
      const std::string updated = i["updated_at"].get<std::string>();
      EXPECT_TRUE(absl::EndsWith(updated, "+08:00")) << updated;
      EXPECT_GE(updated, last);
      last = updated;
      for (const char* k : {"id", "url", "html_url", "number", "state", "title", "body", "user",
                            "labels", "assignee", "created_at", "updated_at", "comments",
                            "issue_type", "finished_at"}) {
        EXPECT_TRUE(i.contains(k)) << k;
      }
    }
  }
  EXPECT_EQ(keys.size(), 45u);
  EXPECT_TRUE(keys.count("I10001"));
  EXPECT_GT(han, 45 / 2) << "Gitee text is mostly Chinese";
  for (const std::string& s : states) {
    EXPECT_TRUE(s == "open" || s == "progressing" || s == "closed" || s == "rejected") << s;
  }
  // The default state is open; each state filters exactly.
  std::map<std::string, size_t> by_state;
  for (const CorpusEntry& e : Entries()) ++by_state[e.state];
  for (const char* s : {"open", "progressing", "closed", "rejected"}) {
    Reply r = Get(*sim_, absl::StrCat(kRepo, "/issues?per_page=100&state=", s));
    EXPECT_EQ(r.json.size(), by_state[s]) << s;
    for (const auto& i : r.json) EXPECT_EQ(i["state"], s);
  }
  EXPECT_EQ(Get(*sim_, absl::StrCat(kRepo, "/issues?per_page=100")).json.size(), by_state["open"]);
  EXPECT_EQ(Get(*sim_, absl::StrCat(kRepo, "/issues?state=maybe")).status, 400);
}

TEST_F(GiteeApiTest, OneIssueAndItsComments) {
  Start();
  int64_t total_comments = 0;
  for (const CorpusEntry& e : Entries()) {
    EXPECT_EQ(e.key, GiteeKey(e.number));
    Reply issue = Get(*sim_, absl::StrCat(kRepo, "/issues/", e.key));
    ASSERT_EQ(issue.status, 200);
    EXPECT_EQ(issue.json["number"], e.key);
    EXPECT_EQ(issue.json["state"], e.state);
    Reply comments = Get(*sim_, absl::StrCat(kRepo, "/issues/", e.key, "/comments?per_page=100"));
    ASSERT_EQ(comments.status, 200);
    ASSERT_EQ(static_cast<int64_t>(comments.json.size()), e.comments);
    EXPECT_EQ(comments.Header("total_count"), std::to_string(e.comments));
    for (const auto& c : comments.json) EXPECT_EQ(c["target"]["issue"]["number"], e.key);
    total_comments += e.comments;
  }
  Reply all = Get(*sim_, absl::StrCat(kRepo, "/issues/comments?per_page=100&sort=updated"));
  ASSERT_EQ(all.status, 200);
  EXPECT_EQ(all.Header("total_count"), std::to_string(total_comments));
  EXPECT_EQ(Get(*sim_, absl::StrCat(kRepo, "/issues/I99999")).body, R"({"message":"Not Found"})");
  EXPECT_EQ(Get(*sim_, absl::StrCat(kRepo, "/issues/12")).status, 404) << "numbers are keys";
  EXPECT_EQ(Get(*sim_, "/api/v5/repos/nobody/nothing").body,
            R"({"message":"Not Found Project"})");
}

TEST_F(GiteeApiTest, AccessTokenBudget) {
  Start(/*rate_limit=*/2);
  const std::string path = absl::StrCat(kRepo, "?access_token=gitee-secret");
  for (int k = 0; k < 2; ++k) {
    Reply r = Get(*sim_, path);
    EXPECT_EQ(r.status, 200);
    EXPECT_TRUE(r.Header("X-RateLimit-Remaining").empty()) << "Gitee sends no rate headers";
  }
  Reply spent = Get(*sim_, path);
  EXPECT_EQ(spent.status, 403);
  EXPECT_EQ(spent.body, R"({"message":"Rate Limit Exceeded"})");
  EXPECT_EQ(spent.Header("Retry-After"), "3600");
  EXPECT_EQ(Get(*sim_, kRepo).status, 200) << "the anonymous budget is separate";
  SimStats stats = sim_->Stats();
  EXPECT_EQ(stats.over_budget, 1);
  EXPECT_EQ(stats.by_token[TokenLabel(Tracker::kGitee, "gitee-secret")].requests, 3);
  EXPECT_EQ(stats.by_token[TokenLabel(Tracker::kGitee, "")].requests, 1);
  Reply json_stats = Get(*sim_, "/_sim/stats");
  EXPECT_FALSE(absl::StrContains(json_stats.body, "gitee-secret")) << "tokens never appear";
}

}  // namespace
}  // namespace issuescope::sim

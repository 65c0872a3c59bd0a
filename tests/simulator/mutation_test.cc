// Tests of mutation: exactly the reported changes become visible through the API, at simulator
// time strictly after the corpus, through both the C++ call and POST /_sim/mutate.
#include <set>

#include "absl/strings/str_cat.h"
#include "common/time_util.h"
#include "gtest/gtest.h"
#include "tests/simulator/sim_test_util.h"

namespace issuescope::sim {
namespace {

using testing::Get;
using testing::Reply;

class MutationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SimulatorOptions o;
    o.repos = 3;
    o.issues_per_repo = 60;
    o.rate_limit = 1000000;
    o.threads = 2;
    o.clock = &clock_;
    sim_ = testing::StartOrDie(o);
    ASSERT_NE(sim_, nullptr);
  }

  // ChangedSince lists (repo, number) of issues updated at or after `since`, over the API.
  std::set<std::pair<std::string, int64_t>> ChangedSince(int64_t since) {
    std::set<std::pair<std::string, int64_t>> out;
    for (const char* repo : {"pytorch/pytorch", "vllm-project/vllm", "microsoft/DeepSpeed"}) {
      Reply r = Get(*sim_, absl::StrCat("/repos/", repo, "/issues?state=all&sort=updated&"
                                        "direction=asc&per_page=100&since=",
                                        FormatTimestamp(since)));
      EXPECT_EQ(r.status, 200);
      for (const auto& e : r.json) {
        out.emplace(repo, e["number"].get<int64_t>());
        EXPECT_EQ(e["updated_at"], FormatTimestamp(since));
      }
    }
    return out;
  }

  FakeClock clock_;
  std::unique_ptr<TrackerSimulator> sim_;
};

TEST_F(MutationTest, ExactlyTheReportedChangesAreVisible) {
  clock_.Advance(absl::Seconds(5));
  const int64_t now = sim_->SimNow();
  int64_t newest = 0;
  for (const CorpusEntry& e : sim_->Corpus()) {
    newest = std::max(newest, absl::ToUnixSeconds(*ParseRfc3339(e.updated_at)));
  }
  ASSERT_GT(now, newest);
  const size_t before = sim_->Corpus().size();

  MutationSpec spec;
  spec.seed = 9;
  spec.new_issues = 2;
  spec.edited_issues = 3;
  spec.new_comments = 4;
  spec.closed_issues = 2;
  auto result = sim_->Mutate(spec);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->new_comment_ids.size(), 4u);
  EXPECT_EQ(sim_->Corpus().size(), before + 2);

  std::set<std::pair<std::string, int64_t>> reported;
  for (const IssueRef& r : result->changed_issues) reported.emplace(r.repo, r.number);
  EXPECT_EQ(reported.size(), result->changed_issues.size()) << "each issue reported once";
  EXPECT_GE(reported.size(), 2u);
  EXPECT_EQ(ChangedSince(now), reported);

  std::set<int64_t> new_comments;
  for (const char* repo : {"pytorch/pytorch", "vllm-project/vllm", "microsoft/DeepSpeed"}) {
    Reply r = Get(*sim_, absl::StrCat("/repos/", repo, "/issues/comments?since=",
                                      FormatTimestamp(now)));
    for (const auto& c : r.json) {
      new_comments.insert(c["id"].get<int64_t>());
      EXPECT_EQ(c["created_at"], FormatTimestamp(now));
      // The comment's issue was reported as changed and shows the new count.
      const std::string issue_url = c["issue_url"].get<std::string>();
      Reply issue = Get(*sim_, issue_url);
      EXPECT_EQ(issue.json["updated_at"], FormatTimestamp(now));
      EXPECT_TRUE(reported.count({repo, issue.json["number"].get<int64_t>()}));
    }
  }
  EXPECT_EQ(new_comments, std::set<int64_t>(result->new_comment_ids.begin(),
                                            result->new_comment_ids.end()));
}

TEST_F(MutationTest, ClosingAndEditingShowInIssueObjects) {
  clock_.Advance(absl::Seconds(1));
  MutationSpec close;
  close.closed_issues = 3;
  close.repo = "vllm-project/vllm";
  auto closed = sim_->Mutate(close);
  ASSERT_TRUE(closed.ok());
  ASSERT_EQ(closed->changed_issues.size(), 3u);
  for (const IssueRef& r : closed->changed_issues) {
    EXPECT_EQ(r.repo, "vllm-project/vllm");
    Reply issue = Get(*sim_, absl::StrCat("/repos/", r.repo, "/issues/", r.number));
    EXPECT_EQ(issue.json["state"], "closed");
    EXPECT_EQ(issue.json["closed_at"], FormatTimestamp(sim_->SimNow()));
  }
  MutationSpec edit;
  edit.edited_issues = 1;
  edit.repo = "pytorch/pytorch";
  Reply before_list = Get(*sim_, "/repos/pytorch/pytorch/issues?state=all&per_page=100");
  auto edited = sim_->Mutate(edit);
  ASSERT_TRUE(edited.ok());
  ASSERT_EQ(edited->changed_issues.size(), 1u);
  const int64_t n = edited->changed_issues[0].number;
  for (const auto& e : before_list.json) {
    if (e["number"] != n) continue;
    Reply after = Get(*sim_, absl::StrCat("/repos/pytorch/pytorch/issues/", n));
    EXPECT_NE(after.json["title"], e["title"]);
    EXPECT_NE(after.json["body"], e["body"]);
    EXPECT_NE(after.json["updated_at"], e["updated_at"]);
  }
  // The list's ETag changed, so a conditional request gets fresh data.
  Reply after_list = Get(*sim_, "/repos/pytorch/pytorch/issues?state=all&per_page=100",
                         {{"If-None-Match", before_list.Header("ETag")}});
  EXPECT_EQ(after_list.status, 200);
}

TEST_F(MutationTest, AdminEndpointMutatesAndValidates) {
  clock_.Advance(absl::Seconds(2));
  const int64_t now = sim_->SimNow();
  Reply ok = testing::Post(*sim_, "/_sim/mutate",
                           R"({"seed":3,"new_issues":1,"new_comments":2,"repo":"microsoft/DeepSpeed"})");
  ASSERT_EQ(ok.status, 200) << ok.body;
  std::set<std::pair<std::string, int64_t>> reported;
  for (const auto& r : ok.json["changed_issues"]) {
    reported.emplace(r["repo"].get<std::string>(), r["number"].get<int64_t>());
  }
  EXPECT_EQ(ok.json["new_comment_ids"].size(), 2u);
  EXPECT_EQ(ChangedSince(now), reported);
  EXPECT_TRUE(reported.count({"microsoft/DeepSpeed", 61})) << "new issue gets the next number";

  EXPECT_EQ(testing::Post(*sim_, "/_sim/mutate", "not json").status, 400);
  EXPECT_EQ(testing::Post(*sim_, "/_sim/mutate", R"({"new_issues":-1})").status, 400);
  EXPECT_EQ(testing::Post(*sim_, "/_sim/mutate", R"({"new_isues":1})").status, 400);
  EXPECT_EQ(testing::Post(*sim_, "/_sim/mutate", R"({"repo":"no/such"})").status, 404);
}

}  // namespace
}  // namespace issuescope::sim

// GitLab v4 dialect over real HTTP: project lookup by path and id, issue listing with GitLab's
// pagination headers (and their omission above 10,000 results), updated_after, notes with
// system notes, PRIVATE-TOKEN / Bearer budgets with RateLimit-* headers, ETag/304, 400/404.
#include <regex>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/time_util.h"
#include "gtest/gtest.h"
#include "tests/simulator/sim_test_util.h"

namespace issuescope::sim {
namespace {

using testing::Get;
using testing::Reply;

constexpr char kProject[] = "/api/v4/projects/group%2Fsub%2Fproject";

class GitlabApiTest : public ::testing::Test {
 protected:
  void Start(int issues = 60, int64_t rate_limit = 5000) {
    SimulatorOptions o;
    o.repo_specs = {*ParseRepoSpec(absl::StrCat("gitlab:group/sub/project:", issues)),
                    *ParseRepoSpec("pytorch/pytorch:5")};
    o.comments_per_issue = issues > 1000 ? 0 : 2;
    o.rate_limit = rate_limit;
    o.threads = 2;
    o.clock = &clock_;
    sim_ = testing::StartOrDie(o);
    ASSERT_NE(sim_, nullptr);
  }
  // Entries returns the corpus entries of the GitLab project.
  std::vector<CorpusEntry> Entries() {
    std::vector<CorpusEntry> out;
    for (const CorpusEntry& e : sim_->Corpus()) {
      if (e.tracker == "gitlab") out.push_back(e);
    }
    return out;
  }
  FakeClock clock_;
  std::unique_ptr<TrackerSimulator> sim_;
};

TEST_F(GitlabApiTest, ProjectByPathAndByNumericId) {
  Start();
  Reply by_path = Get(*sim_, kProject);
  ASSERT_EQ(by_path.status, 200) << by_path.body;
  EXPECT_EQ(by_path.json["path_with_namespace"], "group/sub/project");
  EXPECT_EQ(by_path.json["namespace"]["full_path"], "group/sub");
  const int64_t id = by_path.json["id"].get<int64_t>();
  Reply by_id = Get(*sim_, absl::StrCat("/api/v4/projects/", id));
  ASSERT_EQ(by_id.status, 200);
  EXPECT_EQ(by_id.body, by_path.body);
  EXPECT_FALSE(by_path.Header("ETag").empty()) << "the recordings carry Etag";
  Reply missing = Get(*sim_, "/api/v4/projects/nobody%2Fnothing");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.body, R"({"message":"404 Project Not Found"})");
  EXPECT_EQ(Get(*sim_, "/api/v4/projects/pytorch%2Fpytorch").status, 404)
      << "a GitHub repository is not a GitLab project";
  EXPECT_EQ(Get(*sim_, absl::StrCat(kProject, "/merge_requests")).status, 404);
  EXPECT_EQ(Get(*sim_, absl::StrCat(kProject, "/issues/999")).body,
            R"({"message":"404 Not found"})");
}

TEST_F(GitlabApiTest, IssuePagesCarryGitlabHeadersAndShapes) {
  Start();
  std::string path =
      absl::StrCat(kProject, "/issues?order_by=updated_at&sort=asc&state=all&per_page=25");
  Reply first = Get(*sim_, path + "&page=1");
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(first.Header("X-Page"), "1");
  EXPECT_EQ(first.Header("X-Per-Page"), "25");
  EXPECT_EQ(first.Header("X-Next-Page"), "2");
  EXPECT_EQ(first.Header("X-Prev-Page"), "");
  EXPECT_EQ(first.Header("X-Total"), "60");
  EXPECT_EQ(first.Header("X-Total-Pages"), "3");
  auto links = testing::ParseLinks(first.Header("Link"));
  EXPECT_EQ(links.count("prev"), 0u);
  ASSERT_EQ(links.count("next"), 1u);
  EXPECT_TRUE(absl::StrContains(links["next"], "page=2")) << links["next"];
  EXPECT_TRUE(absl::StrContains(links["next"], "order_by=updated_at")) << links["next"];
  EXPECT_TRUE(absl::StrContains(links["last"], "page=3")) << links["last"];
  EXPECT_TRUE(absl::StrContains(links["first"], "page=1"));
  const nlohmann::json& issue = first.json[0];
  for (const char* k : {"id", "iid", "project_id", "title", "description", "state", "created_at",
                        "updated_at", "closed_at", "labels", "assignees", "author", "assignee",
                        "user_notes_count", "upvotes", "downvotes", "web_url", "references"}) {
    EXPECT_TRUE(issue.contains(k)) << k;
  }
  EXPECT_TRUE(issue["author"].contains("username"));
  EXPECT_TRUE(issue["state"] == "opened" || issue["state"] == "closed");
  EXPECT_TRUE(std::regex_match(issue["updated_at"].get<std::string>(),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z)")));
  EXPECT_TRUE(absl::EndsWith(issue["web_url"].get<std::string>(),
                             absl::StrCat("/group/sub/project/-/issues/", issue["iid"].get<int>())));
  // Walk the pages by X-Next-Page: every issue once, in updated_at order.
  std::set<int64_t> iids;
  std::string last_updated;
  std::string next = "1";
  int pages = 0;
  while (!next.empty()) {
    Reply page = Get(*sim_, absl::StrCat(path, "&page=", next));
    ASSERT_EQ(page.status, 200);
    for (const auto& i : page.json) {
      EXPECT_TRUE(iids.insert(i["iid"].get<int64_t>()).second);
      EXPECT_GE(i["updated_at"].get<std::string>(), last_updated);
      last_updated = i["updated_at"].get<std::string>();
    }
    next = page.Header("X-Next-Page");
    ++pages;
  }
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(iids.size(), 60u);
  Reply beyond = Get(*sim_, path + "&page=4");
  EXPECT_EQ(beyond.json.size(), 0u);
  EXPECT_EQ(beyond.Header("X-Prev-Page"), "") << "as gitlab.com past the end";
  EXPECT_EQ(testing::ParseLinks(beyond.Header("Link")).size(), 2u) << "first and last only";
}

TEST_F(GitlabApiTest, UpdatedAfterAndStateFilter) {
  Start();
  std::vector<CorpusEntry> entries = Entries();
  std::vector<std::string> times;
  for (const CorpusEntry& e : entries) times.push_back(e.updated_at);
  std::sort(times.begin(), times.end());
  const std::string cut = times[30];
  size_t expected = 0;
  for (const std::string& t : times) expected += t >= cut ? 1 : 0;
  Reply r = Get(*sim_, absl::StrCat(kProject, "/issues?updated_after=", cut,
                                    "&order_by=updated_at&sort=asc&per_page=100"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json.size(), expected);
  EXPECT_EQ(r.Header("X-Total"), std::to_string(expected));
  for (const auto& i : r.json) {
    EXPECT_GE(*ParseRfc3339(i["updated_at"].get<std::string>()), *ParseRfc3339(cut));
  }
  size_t opened = 0;
  for (const CorpusEntry& e : entries) opened += e.state == "opened" ? 1 : 0;
  Reply open = Get(*sim_, absl::StrCat(kProject, "/issues?state=opened&per_page=100"));
  EXPECT_EQ(open.json.size(), opened);
  Reply bad = Get(*sim_, absl::StrCat(kProject, "/issues?order_by=votes"));
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.body, R"({"error":"order_by does not have a valid value"})");
  EXPECT_EQ(Get(*sim_, absl::StrCat(kProject, "/issues?updated_after=yesterday")).status, 400);
}

TEST_F(GitlabApiTest, NotesFlagSystemNotesAndMatchUserNotesCount) {
  Start();
  int64_t system_total = 0;
  for (const CorpusEntry& e : Entries()) {
    Reply issue = Get(*sim_, absl::StrCat(kProject, "/issues/", e.number));
    ASSERT_EQ(issue.status, 200);
    Reply notes = Get(*sim_, absl::StrCat(kProject, "/issues/", e.number,
                                          "/notes?sort=asc&order_by=updated_at&per_page=100"));
    ASSERT_EQ(notes.status, 200);
    ASSERT_EQ(static_cast<int64_t>(notes.json.size()), e.comments);
    int64_t system = 0;
    std::string last;
    for (const auto& n : notes.json) {
      system += n["system"].get<bool>() ? 1 : 0;
      EXPECT_EQ(n["noteable_iid"], e.number);
      EXPECT_EQ(n["noteable_type"], "Issue");
      EXPECT_GE(n["updated_at"].get<std::string>(), last);
      last = n["updated_at"].get<std::string>();
    }
    EXPECT_EQ(system, e.system_notes);
    EXPECT_EQ(issue.json["user_notes_count"].get<int64_t>(), e.comments - e.system_notes);
    system_total += system;
  }
  EXPECT_GT(system_total, 0) << "the generator makes system notes";
}

TEST_F(GitlabApiTest, TokensShareABudgetAndRateLimitHeaders) {
  Start(/*issues=*/10, /*rate_limit=*/3);
  Reply a = Get(*sim_, kProject, {{"PRIVATE-TOKEN", "glpat-one"}});
  ASSERT_EQ(a.status, 200);
  EXPECT_EQ(a.Header("RateLimit-Limit"), "3");
  EXPECT_EQ(a.Header("RateLimit-Remaining"), "2");
  EXPECT_EQ(a.Header("RateLimit-Observed"), "1");
  EXPECT_FALSE(a.Header("RateLimit-Reset").empty());
  EXPECT_TRUE(absl::EndsWith(a.Header("RateLimit-ResetTime"), "GMT"));
  EXPECT_TRUE(a.Header("X-RateLimit-Remaining").empty()) << "GitHub's headers are not GitLab's";
  Reply b = Get(*sim_, kProject, {{"Authorization", "Bearer glpat-one"}});
  EXPECT_EQ(b.Header("RateLimit-Remaining"), "1") << "same token, same budget";
  // A 304 is counted on GitLab.
  Reply c = Get(*sim_, kProject, {{"PRIVATE-TOKEN", "glpat-one"}, {"If-None-Match", a.Header("ETag")}});
  EXPECT_EQ(c.status, 304);
  EXPECT_EQ(c.Header("RateLimit-Remaining"), "0");
  Reply spent = Get(*sim_, kProject, {{"PRIVATE-TOKEN", "glpat-one"}});
  EXPECT_EQ(spent.status, 429);
  EXPECT_EQ(spent.Header("RateLimit-Remaining"), "0");
  EXPECT_EQ(spent.Header("Retry-After"), "3600");
  EXPECT_EQ(Get(*sim_, kProject, {{"PRIVATE-TOKEN", "glpat-two"}}).status, 200);
  SimStats stats = sim_->Stats();
  EXPECT_EQ(stats.over_budget, 1);
  EXPECT_EQ(stats.by_token[TokenLabel(Tracker::kGitlab, "glpat-one")].over_budget, 1);
  EXPECT_EQ(stats.by_token[TokenLabel(Tracker::kGitlab, "glpat-two")].over_budget, 0);
  EXPECT_EQ(stats.by_tracker["gitlab"], 5);
  clock_.Advance(absl::Hours(1));
  EXPECT_EQ(Get(*sim_, kProject, {{"PRIVATE-TOKEN", "glpat-one"}}).status, 200);
}

TEST_F(GitlabApiTest, TotalsAreOmittedAboveTenThousandResults) {
  Start(/*issues=*/10001);
  const std::string path = absl::StrCat(kProject, "/issues?order_by=updated_at&sort=asc&per_page=100");
  Reply first = Get(*sim_, path + "&page=1");
  ASSERT_EQ(first.status, 200);
  EXPECT_EQ(first.json.size(), 100u);
  EXPECT_FALSE(first.headers.count("X-Total")) << first.Header("X-Total");
  EXPECT_FALSE(first.headers.count("X-Total-Pages"));
  auto links = testing::ParseLinks(first.Header("Link"));
  EXPECT_EQ(links.count("last"), 0u) << "rel=last goes with the totals";
  EXPECT_EQ(links.count("next"), 1u);
  EXPECT_EQ(first.Header("X-Next-Page"), "2");
  Reply last = Get(*sim_, path + "&page=101");
  EXPECT_EQ(last.json.size(), 1u);
  EXPECT_EQ(last.Header("X-Next-Page"), "");
  EXPECT_EQ(last.Header("X-Prev-Page"), "100");
  // A filter that brings the count to 10,000 or fewer brings the totals back.
  Reply open = Get(*sim_, absl::StrCat(kProject, "/issues?state=opened&per_page=100"));
  EXPECT_TRUE(open.headers.count("X-Total"));
  EXPECT_EQ(testing::ParseLinks(open.Header("Link")).count("last"), 1u);
}

}  // namespace
}  // namespace issuescope::sim

// GitLab v4 and Gitee v5 parsing and paging: the real recordings in ../shared/data (Forgejo's
// gitlab.com migration recordings with full headers, perceval's GitLab and Gitee bodies), and
// table-driven bad bodies, each of which must give a clear error naming what is wrong.
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/time_util.h"
#include "crawler/gitee_tracker.h"
#include "crawler/github_tracker.h"
#include "crawler/gitlab_tracker.h"
#include "gtest/gtest.h"
#include "tests/crawler/forge_test_util.h"

namespace issuescope::crawler {
namespace {

using namespace testing;  // NOLINT: recording helpers

v1::RepositoryRef Repo(v1::Tracker kind, const std::string& owner, const std::string& name) {
  v1::RepositoryRef r;
  r.set_tracker(kind);
  r.set_owner(owner);
  r.set_name(name);
  return r;
}

HttpResponse Response(std::vector<std::pair<std::string, std::string>> headers) {
  HttpResponse r;
  r.status = 200;
  r.headers.entries = std::move(headers);
  return r;
}

TEST(GiteeIssueNumberTest, DecodesBase36AfterTheI) {
  struct Case {
    std::string key;
    int64_t number;  // 0: an error is expected
  };
  const std::vector<Case> cases = {
      {"I1DACG", 2299552},  // the recordings' keys are base 36 of the issue id
      {"I1DAQF", 2300055},
      {"I10001", 1679617},  // the simulator's first issue: 1679616 + 1
      {"I0", 0},            // decodes to 0
      {"", 0},
      {"I", 0},
      {"1DACG", 0},
      {"i1DACG", 0},
      {"I1dacg", 0},
      {"I1-2", 0},
      {"IZZZZZZZZZZZZZZ", 0},  // overflows int64
  };
  for (const Case& c : cases) {
    auto n = GiteeIssueNumber(c.key);
    if (c.number == 0) {
      ASSERT_FALSE(n.ok()) << c.key;
      EXPECT_EQ(n.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_NE(n.status().message().find(absl::StrCat("'", c.key, "'")), std::string::npos)
          << n.status();
    } else {
      ASSERT_TRUE(n.ok()) << c.key << ": " << n.status();
      EXPECT_EQ(*n, c.number) << c.key;
    }
  }
}

TEST(GiteeParseTest, RecordedIssuesCommentsAndRepository) {
  REQUIRE_RECORDING(kGitee / "gitee_issues1");
  const auto repo = Repo(v1::TRACKER_GITEE, "example", "example");
  auto page1 = ParseGiteeIssuesPage(ReadAll(kGitee / "gitee_issues1"), repo);
  ASSERT_TRUE(page1.ok()) << page1.status();
  ASSERT_EQ(page1->size(), 1u);
  const v1::Issue& a = (*page1)[0];
  EXPECT_EQ(a.key(), "I1DACG");
  EXPECT_EQ(a.number(), 2299552);
  EXPECT_EQ(a.id(), 2299552);
  EXPECT_EQ(a.title(), "First example issue");
  EXPECT_EQ(a.state(), v1::ISSUE_STATE_OPEN);
  EXPECT_EQ(a.author(), "willemjiang");
  EXPECT_EQ(std::vector<std::string>(a.assignees().begin(), a.assignees().end()),
            std::vector<std::string>{"willemjiang"});
  EXPECT_EQ(a.comment_count(), 1);
  EXPECT_EQ(a.url(), "https://gitee.com/example/example/issues/I1DACG");
  EXPECT_EQ(FormatRfc3339(FromProto(a.created_at())), "2020-01-01T01:32:55Z");  // +08:00
  EXPECT_FALSE(a.has_closed_at());

  auto page2 = ParseGiteeIssuesPage(ReadAll(kGitee / "gitee_issues2"), repo);
  ASSERT_TRUE(page2.ok()) << page2.status();
  ASSERT_EQ(page2->size(), 1u);
  EXPECT_EQ((*page2)[0].state(), v1::ISSUE_STATE_CLOSED);
  EXPECT_EQ((*page2)[0].number(), 2300055);
  EXPECT_EQ(FormatRfc3339(FromProto((*page2)[0].closed_at())), "2020-04-01T03:06:51Z");

  auto comments = ParseGiteeCommentsPage(ReadAll(kGitee / "gitee_issue1_comments"), repo, nullptr);
  ASSERT_TRUE(comments.ok()) << comments.status();
  ASSERT_EQ(comments->size(), 1u);
  EXPECT_EQ((*comments)[0].id(), 2390006);
  EXPECT_EQ((*comments)[0].issue_number(), 2299552);  // from target.issue.number "I1DACG"
  EXPECT_EQ((*comments)[0].author(), "willemjiang");
  EXPECT_EQ((*comments)[0].body(), "Hey This is comment");

  auto empty = ParseGiteeIssuesPage(ReadAll(kGitee / "gitee_empty_issue"), repo);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->empty());

  auto info = GiteeTracker().ParseRepository(ReadAll(kGitee / "gitee_repo"));
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->full_name, "willemjiang/camel-on-cloud");
}

TEST(GiteeParseTest, StatesMapToTheModel) {
  struct Case {
    std::string state;
    v1::IssueState want;
    std::string reason;
    bool closed_at;
  };
  const std::vector<Case> cases = {
      {"open", v1::ISSUE_STATE_OPEN, "", false},
      {"progressing", v1::ISSUE_STATE_PROGRESSING, "", false},
      {"closed", v1::ISSUE_STATE_CLOSED, "", true},
      {"rejected", v1::ISSUE_STATE_REJECTED, "rejected", true},
  };
  for (const Case& c : cases) {
    const std::string body = absl::StrCat(
        R"([{"id": 5, "number": "I10001", "state": ")", c.state,
        R"(", "title": "训练大模型时显存泄漏", "updated_at": "2024-03-01T10:00:00+08:00",
            "created_at": "2024-03-01T09:00:00+08:00",
            "finished_at": "2024-03-01T10:00:00+08:00",
            "labels": [{"name": "bug"}], "user": {"login": "张三"}}])");
    auto page = ParseGiteeIssuesPage(body, Repo(v1::TRACKER_GITEE, "mindspore", "mindspore"));
    ASSERT_TRUE(page.ok()) << c.state << ": " << page.status();
    EXPECT_EQ((*page)[0].state(), c.want) << c.state;
    EXPECT_EQ((*page)[0].state_reason(), c.reason) << c.state;
    EXPECT_EQ((*page)[0].has_closed_at(), c.closed_at) << c.state;
    EXPECT_EQ((*page)[0].title(), "训练大模型时显存泄漏");
    EXPECT_EQ((*page)[0].author(), "张三");
    EXPECT_EQ((*page)[0].key(), "I10001");
    EXPECT_EQ((*page)[0].number(), 1679617);
  }
}

TEST(GitlabParseTest, RecordedIssuesNotesProjectAndHeaders) {
  const auto dir = kGitlabRec / "full_download";
  const auto issues_file = dir / "GET_%2Fapi%2Fv4%2Fprojects%2F15578026%2Fissues%3Fpage=1&per_page=2&sort=asc&state=all";
  REQUIRE_RECORDING(issues_file);
  const auto repo = Repo(v1::TRACKER_GITLAB, "gitea", "test_repo");
  Recording rec = ReadRecording(issues_file);
  auto issues = ParseGitlabIssuesPage(rec.body, repo);
  ASSERT_TRUE(issues.ok()) << issues.status();
  ASSERT_EQ(issues->size(), 2u);
  const v1::Issue& one = (*issues)[0];
  EXPECT_EQ(one.number(), 1);
  EXPECT_EQ(one.key(), "1");
  EXPECT_EQ(one.id(), 27687675);
  EXPECT_EQ(one.title(), "Please add an animated gif icon to the merge button");
  EXPECT_EQ(one.state(), v1::ISSUE_STATE_CLOSED);
  EXPECT_EQ(std::vector<std::string>(one.labels().begin(), one.labels().end()),
            (std::vector<std::string>{"bug", "discussion"}));
  EXPECT_EQ(one.author(), "lafriks");
  EXPECT_EQ(one.url(), "https://gitlab.com/gitea/test_repo/-/issues/1");
  EXPECT_EQ(FormatRfc3339(FromProto(one.closed_at())), "2019-11-28T08:46:23Z");
  const v1::Issue& two = (*issues)[1];
  EXPECT_EQ(two.comment_count(), 2);  // user_notes_count
  EXPECT_EQ(two.reactions(), 2);      // upvotes 1 + downvotes 1

  GitlabTracker gitlab;
  HttpResponse resp = Response(rec.headers);
  EXPECT_EQ(gitlab.EstimatedTotal(resp, 2), 2);  // X-Total
  EXPECT_FALSE(gitlab.NextPageUrl("https://gitlab.test/x?page=1", resp).has_value());

  Recording discussions = ReadRecording(
      dir / "GET_%2Fapi%2Fv4%2Fprojects%2F15578026%2Fissues%2F2%2Fdiscussions%3Fpage=1&per_page=100");
  auto notes = ParseGitlabNotesPage(NotesFromDiscussions(discussions.body), repo, two);
  ASSERT_TRUE(notes.ok()) << notes.status();
  ASSERT_EQ(notes->size(), 4u);
  int system = 0;
  for (const v1::Comment& n : *notes) {
    EXPECT_EQ(n.issue_number(), 2);
    system += n.system() ? 1 : 0;
  }
  EXPECT_EQ(system, 2);  // "changed milestone to %2", "closed"
  EXPECT_EQ((*notes)[0].body(), "This is a comment");
  EXPECT_FALSE((*notes)[0].system());
  EXPECT_EQ((*notes)[1].body(), "changed milestone to %2");
  EXPECT_TRUE((*notes)[1].system());
  EXPECT_EQ((*notes)[0].url(), "https://gitlab.com/gitea/test_repo/-/issues/2#note_251637434");

  auto project = ParseGitlabProject(
      ReadRecording(dir / "GET_%2Fapi%2Fv4%2Fprojects%2Fgitea%252Ftest_repo").body);
  ASSERT_TRUE(project.ok()) << project.status();
  EXPECT_EQ(project->full_name, "gitea/test_repo");
  EXPECT_EQ(project->open_issues_count, 0);
}

TEST(GitlabParseTest, RecordedGapInIssueNumbersAndRateLimitHeaders) {
  const auto file = kGitlabRec / "skipped_issue_number" /
                    "GET_%2Fapi%2Fv4%2Fprojects%2F6590996%2Fissues%3Fpage=1&per_page=10&sort=asc&state=all";
  REQUIRE_RECORDING(file);
  Recording rec = ReadRecording(file);
  auto issues = ParseGitlabIssuesPage(rec.body, Repo(v1::TRACKER_GITLAB, "troyengel", "archbuild"));
  ASSERT_TRUE(issues.ok()) << issues.status();
  ASSERT_EQ(issues->size(), 1u);
  EXPECT_EQ((*issues)[0].number(), 2);  // iid 1 does not exist
  EXPECT_EQ((*issues)[0].state(), v1::ISSUE_STATE_CLOSED);
  EXPECT_FALSE((*issues)[0].has_closed_at());  // closed_at is null in the recording

  HttpHeaders headers;
  headers.entries = rec.headers;
  RateLimit rl = GitlabTracker().ParseRateLimit(headers);
  EXPECT_EQ(rl.limit, 2000);
  EXPECT_EQ(rl.remaining, 1996);
  EXPECT_EQ(rl.used, 4);
  EXPECT_EQ(rl.reset, absl::FromUnixSeconds(1701332694));
}

TEST(GitlabParseTest, PercevalNotesKeepSystemFlags) {
  REQUIRE_RECORDING(kGitlabPerceval / "notes_1");
  v1::Issue issue;
  issue.set_number(1);
  auto notes = ParseGitlabNotesPage(ReadAll(kGitlabPerceval / "notes_1"),
                                    Repo(v1::TRACKER_GITLAB, "fdroid", "fdroiddata"), issue);
  ASSERT_TRUE(notes.ok()) << notes.status();
  ASSERT_EQ(notes->size(), 2u);
  EXPECT_TRUE((*notes)[0].system());
  EXPECT_EQ((*notes)[0].body(), "moved to fdroidserver#268");
  EXPECT_FALSE((*notes)[1].system());
  EXPECT_EQ((*notes)[1].author(), "redfish64");
  auto page = ParseGitlabIssuesPage(ReadAll(kGitlabPerceval / "issue_page_1"),
                                    Repo(v1::TRACKER_GITLAB, "fdroid", "fdroiddata"));
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->size(), 2u);
}

TEST(ForgeParseTest, BadBodiesGiveClearErrors) {
  const auto gl = Repo(v1::TRACKER_GITLAB, "g", "p");
  const auto ge = Repo(v1::TRACKER_GITEE, "o", "r");
  v1::Issue issue;
  issue.set_number(3);
  struct Case {
    std::string what;
    absl::Status status;
    std::string want;  // substring of the message
  };
  auto gl_issues = [&](const std::string& body) { return ParseGitlabIssuesPage(body, gl).status(); };
  auto gl_notes = [&](const std::string& body) {
    return ParseGitlabNotesPage(body, gl, issue).status();
  };
  auto ge_issues = [&](const std::string& body) { return ParseGiteeIssuesPage(body, ge).status(); };
  auto ge_comments = [&](const std::string& body) {
    return ParseGiteeCommentsPage(body, ge, nullptr).status();
  };
  const std::string t = R"("updated_at": "2024-01-01T00:00:00Z")";
  // An issue's required fields besides the key and id (state where a case does not set it).
  const std::string ti = absl::StrCat(t, R"(, "created_at": "2024-01-01T00:00:00Z", "title": "x")");
  const std::vector<Case> cases = {
      {"gitlab not json", gl_issues("[{"), "invalid JSON"},
      {"gitlab object page", gl_issues(R"({"message": "401 Unauthorized"})"), "expected a JSON array"},
      {"gitlab no iid", gl_issues(absl::StrCat(R"([{"id": 1, )", t, "}]")), "field 'iid' is missing"},
      {"gitlab string iid", gl_issues(absl::StrCat(R"([{"iid": "7", "id": 1, )", t, "}]")), "field 'iid' is a string"},
      {"gitlab bad time", gl_issues(R"([{"iid": 1, "id": 1, "updated_at": "yesterday"}])"), "field 'updated_at' is invalid"},
      {"gitlab bad state", gl_issues(absl::StrCat(R"([{"iid": 1, "id": 1, "state": "merged", )", ti, "}]")), "field 'state' has unknown value 'merged'"},
      {"gitlab labels", gl_issues(absl::StrCat(R"([{"iid": 1, "id": 1, "state": "opened", "labels": "bug", )", ti, "}]")), "field 'labels' is not an array"},
      {"gitlab second item", gl_issues(absl::StrCat(R"([{"iid": 1, "id": 1, "state": "opened", )", ti, R"(}, 5])")), "item 1: issue is not a JSON object"},
      // Issue 16 (8): nulls are not data.
      {"gitlab null state", gl_issues(absl::StrCat(R"([{"iid": 1, "id": 1, "state": null, )", ti, "}]")), "field 'state' is null"},
      {"gitlab null title", gl_issues(absl::StrCat(R"([{"iid": 1, "id": 1, "state": "opened", "title": null, "created_at": "2024-01-01T00:00:00Z", )", t, "}]")), "field 'title' is null"},
      {"gitlab null created_at", gl_issues(absl::StrCat(R"([{"iid": 1, "id": 1, "state": "opened", "title": "x", "created_at": null, )", t, "}]")), "field 'created_at' is null"},
      {"gitee null state", ge_issues(absl::StrCat(R"([{"number": "I1", "id": 1, "state": null, )", ti, "}]")), "field 'state' is null"},
      {"gitee null title", ge_issues(absl::StrCat(R"([{"number": "I1", "id": 1, "state": "open", "title": null, "created_at": "2024-01-01T00:00:00Z", )", t, "}]")), "field 'title' is null"},
      {"gitlab note system", gl_notes(absl::StrCat(R"([{"id": 1, "system": "yes", )", t, "}]")), "field 'system' is a string"},
      {"gitlab note no id", gl_notes(absl::StrCat("[{", t, "}]")), "field 'id' is missing"},
      {"gitee bad key", ge_issues(absl::StrCat(R"([{"number": "X12", "id": 1, )", t, "}]")), "Gitee issue key 'X12'"},
      {"gitee bad state", ge_issues(absl::StrCat(R"([{"number": "I1", "id": 1, "state": "待办", )", ti, "}]")), "field 'state' has unknown value"},
      {"gitee no updated", ge_issues(R"([{"number": "I1", "id": 1}])"), "field 'updated_at' is missing"},
      {"gitee comment no target", ge_comments(absl::StrCat(R"([{"id": 1, )", t, "}]")), "field 'target.issue' is missing"},
      {"gitee comment bad key", ge_comments(absl::StrCat(R"([{"id": 1, "target": {"issue": {"number": "1ABC"}}, )", t, "}]")), "target.issue: field 'number'"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.status.code(), absl::StatusCode::kInvalidArgument) << c.what << ": " << c.status;
    EXPECT_NE(c.status.message().find(c.want), std::string::npos) << c.what << ": " << c.status;
  }
  // A Gitee pull-request comment in the repository-wide listing is left out, not an error.
  auto pr = ParseGiteeCommentsPage(
      absl::StrCat(R"([{"id": 1, "target": {"issue": null, "pull_request": {"number": 4}}, )", t, "}]"),
      ge, nullptr);
  ASSERT_TRUE(pr.ok()) << pr.status();
  EXPECT_TRUE(pr->empty());
}

TEST(ForgePagingTest, NextPageAndEstimates) {
  GitlabTracker gitlab;
  GiteeTracker gitee;
  const std::string url = "https://h/api/v4/projects/g%2Fp/issues?scope=all&per_page=100";
  // GitLab: Link rel=next first, X-Next-Page when there is no Link (no X-Total above 10,000).
  EXPECT_EQ(gitlab.NextPageUrl(url, Response({{"Link", "<https://h/next>; rel=\"next\""},
                                              {"X-Next-Page", "9"}})),
            std::optional<std::string>("https://h/next"));
  EXPECT_EQ(gitlab.NextPageUrl(url, Response({{"X-Next-Page", "2"}})),
            std::optional<std::string>(url + "&page=2"));
  EXPECT_EQ(gitlab.NextPageUrl(url + "&page=2", Response({{"X-Next-Page", "3"}})),
            std::optional<std::string>(url + "&page=3"));
  EXPECT_FALSE(gitlab.NextPageUrl(url, Response({{"X-Next-Page", ""}})).has_value());
  EXPECT_EQ(gitlab.EstimatedTotal(Response({{"X-Next-Page", "2"}}), 100), 0);
  EXPECT_EQ(gitlab.EstimatedTotal(Response({{"X-Total-Pages", "3"}}), 100), 300);
  // Gitee: total_page / total_count.
  const std::string gurl = "https://h/api/v5/repos/o/r/issues?state=all&per_page=100";
  EXPECT_EQ(gitee.NextPageUrl(gurl, Response({{"total_page", "3"}})),
            std::optional<std::string>(gurl + "&page=2"));
  EXPECT_EQ(gitee.NextPageUrl(gurl + "&page=2", Response({{"total_page", "3"}})),
            std::optional<std::string>(gurl + "&page=3"));
  EXPECT_FALSE(gitee.NextPageUrl(gurl + "&page=3", Response({{"total_page", "3"}})).has_value());
  EXPECT_FALSE(gitee.NextPageUrl(gurl, Response({})).has_value());
  EXPECT_EQ(gitee.EstimatedTotal(Response({{"total_count", "1234"}, {"total_page", "13"}}), 100),
            1234);
}

TEST(ForgeUrlTest, EachForgeBuildsItsRequestUrls) {
  GithubTracker github;
  GitlabTracker gitlab;
  GiteeTracker gitee;
  const absl::Time since = absl::FromUnixSeconds(1672531200);  // 2023-01-01T00:00:00Z
  const std::string at = "2023-01-01T00%3A00%3A00Z";
  v1::Issue issue;
  issue.set_number(2299552);
  issue.set_key("I1DACG");
  struct Case {
    const Tracker* tracker;
    std::string base;
    std::string repo, issues, issues_since, comments, comments_since, issue_comments;
  };
  const std::vector<Case> cases = {
      {&github, "https://gh",
       "https://gh/repos/o/r",
       "https://gh/repos/o/r/issues?state=all&sort=updated&direction=asc&per_page=50",
       "https://gh/repos/o/r/issues?state=all&sort=updated&direction=asc&per_page=50&since=" + at,
       "https://gh/repos/o/r/issues/comments?sort=updated&direction=asc&per_page=50",
       "https://gh/repos/o/r/issues/comments?sort=updated&direction=asc&per_page=50&since=" + at,
       "https://gh/repos/o/r/issues/2299552/comments?per_page=50"},
      {&gitee, "https://ge/api/v5",
       "https://ge/api/v5/repos/o/r",
       "https://ge/api/v5/repos/o/r/issues?state=all&sort=updated&direction=asc&per_page=50",
       "https://ge/api/v5/repos/o/r/issues?state=all&sort=updated&direction=asc&per_page=50"
       "&since=" + at,
       "https://ge/api/v5/repos/o/r/issues/comments?sort=updated&direction=asc&per_page=50",
       "https://ge/api/v5/repos/o/r/issues/comments?sort=updated&direction=asc&per_page=50"
       "&since=" + at,
       "https://ge/api/v5/repos/o/r/issues/I1DACG/comments?per_page=50"},
      {&gitlab, "https://gl/api/v4",
       "https://gl/api/v4/projects/o%2Fr",
       "https://gl/api/v4/projects/o%2Fr/issues?scope=all&state=all&order_by=updated_at&sort=asc"
       "&per_page=50",
       "https://gl/api/v4/projects/o%2Fr/issues?scope=all&state=all&order_by=updated_at&sort=asc"
       "&per_page=50&updated_after=" + at,
       "", "",
       "https://gl/api/v4/projects/o%2Fr/issues/2299552/notes?sort=asc&order_by=created_at"
       "&per_page=50"},
  };
  for (const Case& c : cases) {
    const TrackerRepo where{c.base, "o", "r"};
    SCOPED_TRACE(c.base);
    EXPECT_EQ(c.tracker->RepositoryUrl(where), c.repo);
    EXPECT_EQ(c.tracker->IssuesUrl(where, std::nullopt, 50), c.issues);
    EXPECT_EQ(c.tracker->IssuesUrl(where, since, 50), c.issues_since);
    EXPECT_EQ(c.tracker->CommentsUrl(where, std::nullopt, 50), c.comments);
    EXPECT_EQ(c.tracker->CommentsUrl(where, since, 50), c.comments_since);
    EXPECT_EQ(c.tracker->IssueCommentsUrl(where, issue, 50), c.issue_comments);
  }
  EXPECT_EQ(github.comment_listing(), CommentListing::kRepositoryWide);
  EXPECT_EQ(gitee.comment_listing(), CommentListing::kRepositoryWide);
  EXPECT_EQ(gitlab.comment_listing(), CommentListing::kPerIssue);
}

TEST(ForgePagingTest, GithubAndGiteeFollowLinkNextAndReadXRateLimit) {
  GithubTracker github;
  GiteeTracker gitee;
  const std::string url = "https://h/repos/o/r/issues?per_page=100";
  const auto linked = Response({{"Link", "<https://h/p2>; rel=\"next\", <https://h/p?page=9>; rel=\"last\""},
                                {"total_page", "5"},
                                {"X-RateLimit-Limit", "5000"},
                                {"X-RateLimit-Remaining", "4999"},
                                {"X-RateLimit-Reset", "1700000000"}});
  for (const Tracker* t : std::vector<const Tracker*>{&github, &gitee}) {
    EXPECT_EQ(t->NextPageUrl(url, linked), std::optional<std::string>("https://h/p2"));
    const RateLimit rl = t->ParseRateLimit(linked.headers);
    EXPECT_EQ(rl.limit, 5000);
    EXPECT_EQ(rl.remaining, 4999);
    EXPECT_EQ(rl.reset, absl::FromUnixSeconds(1700000000));
    auto info = t->ParseRepository(R"({"full_name": "O/R", "open_issues_count": 7})");
    ASSERT_TRUE(info.ok()) << info.status();
    EXPECT_EQ(info->full_name, "O/R");
    EXPECT_EQ(info->open_issues_count, 7);
  }
  // Without a Link, GitHub has no next page (total_page is Gitee's).
  EXPECT_FALSE(github.NextPageUrl(url, Response({{"total_page", "5"}})).has_value());
  EXPECT_EQ(github.EstimatedTotal(linked, 100), 900);  // rel="last" page 9
}

// A page count near INT64_MAX (the link_header fuzzer's finding: 183877439132592155 × 100
// overflowed, undefined behaviour) saturates instead; a negative or zero count estimates 0.
TEST(ForgeUrlTest, EstimatesFromHugePageCountsSaturate) {
  GithubTracker github;
  GitlabTracker gitlab;
  GiteeTracker gitee;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(github.EstimatedTotal(
                Response({{"Link", "<https://h/r?page=183877439132592155>; rel=\"last\""}}), 100),
            kMax);
  EXPECT_EQ(gitlab.EstimatedTotal(Response({{"X-Total-Pages", "3666666666666666666"}}), 100), kMax);
  EXPECT_EQ(gitee.EstimatedTotal(Response({{"total_page", "3666666666666666666"}}), 100), kMax);
  EXPECT_EQ(gitlab.EstimatedTotal(Response({{"X-Total-Pages", "-4"}}), 100), 0);
  EXPECT_EQ(ItemsInPages(92233720368547758, 100), 9223372036854775800);
  EXPECT_EQ(ItemsInPages(92233720368547759, 100), kMax);
  EXPECT_EQ(ItemsInPages(5, 0), 0);
}

TEST(ForgeAuthTest, TokensGoWhereEachForgeWantsThem) {
  HttpRequest gh, gl, ge;
  gh.url = gl.url = ge.url = "https://h/x?a=1";
  GithubTracker().Authorize("tok", &gh);
  GitlabTracker().Authorize("tok", &gl);
  GiteeTracker().Authorize("t/k", &ge);
  EXPECT_EQ(gh.headers.Get("Authorization"), "Bearer tok");
  EXPECT_EQ(gl.headers.Get("PRIVATE-TOKEN"), "tok");
  EXPECT_FALSE(gl.headers.Has("Authorization"));
  EXPECT_EQ(ge.url, "https://h/x?a=1&access_token=t%2Fk");
  EXPECT_EQ(gh.url, "https://h/x?a=1");
  HttpRequest none;
  none.url = "https://h/x";
  GiteeTracker().Authorize("", &none);
  EXPECT_EQ(none.url, "https://h/x");
}

TEST(QueryParamTest, SetAndRead) {
  struct Case {
    std::string url, name, value, want;
  };
  const std::vector<Case> cases = {
      {"https://h/p", "page", "2", "https://h/p?page=2"},
      {"https://h/p?a=1", "page", "2", "https://h/p?a=1&page=2"},
      {"https://h/p?page=1&a=1", "page", "2", "https://h/p?page=2&a=1"},
      {"https://h/p?per_page=100", "page", "2", "https://h/p?per_page=100&page=2"},
      {"https://h/p?a=1#f", "page", "2", "https://h/p?a=1&page=2#f"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(SetQueryParam(c.url, c.name, c.value), c.want) << c.url;
    EXPECT_EQ(QueryParam(c.want, c.name), c.value) << c.want;
  }
  EXPECT_EQ(QueryParam("https://h/p?per_page=100", "page"), "");
}

}  // namespace
}  // namespace issuescope::crawler

// The forge-neutral crawl loop driving GitLab and Gitee (and GitHub's page budget) through a
// scripted FakeTransport, with the real recordings where they exist: full and incremental
// crawls, GitLab notes only for changed issues, 301 / 404 / 410, max pages per lease, and
// tokens that never leave the request.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/repo_slug.h"
#include "common/time_util.h"
#include "crawler/gitlab_tracker.h"
#include "crawler/repo_crawler.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/crawler/fake_transport.h"
#include "tests/crawler/forge_test_util.h"
#include "tests/crawler/mem_store.h"

namespace issuescope::crawler {
namespace {

using testing::FakeTransport;
using namespace testing;  // NOLINT: recording helpers

constexpr char kGitlabBase[] = "https://gitlab.test/api/v4";
constexpr char kGlProject[] = "https://gitlab.test/api/v4/projects/troyengel%2Farchbuild";
constexpr char kGlToken[] = "glpat-sekrit";
constexpr char kGiteeBase[] = "https://gitee.test/api/v5";
constexpr char kGiteeToken[] = "gitee-sekrit";

std::string T(int second) { return FormatRfc3339(absl::FromUnixSeconds(1672531200 + second)); }
std::string Enc(const std::string& rfc3339) {
  std::string out;
  for (char c : rfc3339) out += c == ':' ? std::string("%3A") : std::string(1, c);
  return out;
}

std::string GlIssues() {
  return absl::StrCat(kGlProject, "/issues?scope=all&state=all&order_by=updated_at&sort=asc",
                      "&per_page=100");
}
std::string GlNotes(int iid) {
  return absl::StrCat(kGlProject, "/issues/", iid, "/notes?sort=asc&order_by=created_at&per_page=100");
}

nlohmann::json GlIssue(int iid, const std::string& updated, int notes) {
  return {{"id", 9000 + iid},      {"iid", iid},
          {"title", "t"},          {"state", "opened"},
          {"created_at", updated}, {"updated_at", updated}, {"user_notes_count", notes},
          {"author", {{"username", "u"}}},
          {"web_url", absl::StrCat("https://gitlab.test/troyengel/archbuild/-/issues/", iid)}};
}
nlohmann::json GlNote(int id, const std::string& updated, bool system) {
  return {{"id", id}, {"body", system ? "closed" : "a note"}, {"updated_at", updated},
          {"created_at", updated}, {"system", system}, {"author", {{"username", "u"}}}};
}
std::string Page(std::vector<nlohmann::json> items) { return nlohmann::json(items).dump(); }

class ForgeCrawlerTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(OpenMemStore(&env_, &store_)); }

  v1::Lease Lease(v1::Tracker kind, const std::string& owner, const std::string& name,
                  const std::string& base, v1::CrawlMode mode = v1::CRAWL_MODE_FULL) {
    v1::Lease lease;
    lease.mutable_repo()->set_tracker(kind);
    lease.mutable_repo()->set_owner(owner);
    lease.mutable_repo()->set_name(name);
    lease.mutable_repo()->set_api_url(base);
    lease.set_repo_slug(RepoSlug(lease.repo()));
    lease.set_epoch(1);
    lease.set_mode(mode);
    return lease;
  }
  v1::Lease GitlabLease(v1::CrawlMode mode = v1::CRAWL_MODE_FULL) {
    return Lease(v1::TRACKER_GITLAB, "troyengel", "archbuild", kGitlabBase, mode);
  }

  absl::StatusOr<CrawlProgress> Crawl(const v1::Lease& lease) {
    RepoCrawler crawler(&http_, store_.get(), &clock_, options_);
    reports_.clear();
    return crawler.Crawl(lease, [&](const CrawlProgress& p) {
      reports_.push_back(p);
      return absl::OkStatus();
    });
  }

  std::vector<std::string> UrlsContaining(const std::string& part) const {
    std::vector<std::string> out;
    for (const std::string& u : http_.Urls()) {
      if (u.find(part) != std::string::npos) out.push_back(u);
    }
    return out;
  }

  std::unique_ptr<rocksdb::Env> env_;
  std::unique_ptr<IssueStore> store_;
  FakeClock clock_;
  FakeTransport http_{&clock_};
  CrawlerOptions options_;
  std::vector<CrawlProgress> reports_;
};

TEST_F(ForgeCrawlerTest, GitlabRecordedFullCrawlWithAGapInIssueNumbers) {
  const auto dir = kGitlabRec / "skipped_issue_number";
  const auto issues_file =
      dir / "GET_%2Fapi%2Fv4%2Fprojects%2F6590996%2Fissues%3Fpage=1&per_page=10&sort=asc&state=all";
  REQUIRE_RECORDING(issues_file);
  options_.tokens[v1::TRACKER_GITLAB] = kGlToken;
  options_.token = "github-token-must-not-go-to-gitlab";
  Recording project = ReadRecording(dir / "GET_%2Fapi%2Fv4%2Fprojects%2Ftroyengel%252Farchbuild");
  Recording issues = ReadRecording(issues_file);
  http_.Respond(kGlProject, 200, project.body, project.headers);
  http_.Respond(GlIssues(), 200, issues.body, issues.headers);
  http_.Respond(GlNotes(2), 200,
                Page({GlNote(11, "2016-03-26T17:00:00Z", false),
                      GlNote(12, "2016-03-27T12:19:27Z", true)}));
  // The cursor moved to the issue's updated_at: one confirmation page from there, whose issue
  // is unchanged, so its notes are not listed again.
  http_.Respond(GlIssues() + "&updated_after=" + Enc("2016-03-27T12:19:27Z"), 200, issues.body,
                issues.headers);

  auto result = Crawl(GitlabLease());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(http_.Pending(), 0u);
  EXPECT_EQ(http_.Urls().size(), 4u);
  EXPECT_TRUE(result->done);
  EXPECT_FALSE(result->paused);
  EXPECT_TRUE(result->moved_to.empty());
  EXPECT_EQ(result->rate_remaining, 1996);  // RateLimit-Remaining of the recording
  EXPECT_EQ(result->counters.issues_stored(), 1);
  EXPECT_EQ(result->counters.comments_stored(), 2);
  EXPECT_EQ(FormatRfc3339(FromProto(result->cursor->issues_since())), "2016-03-27T12:19:27Z");
  EXPECT_FALSE(result->cursor->has_comments_since());  // GitLab has no comment listing
  auto two = store_->GetIssue("gitlab:troyengel/archbuild", 2);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->issue().title(), "vpn unlimited errors");
  ASSERT_EQ(two->comments_size(), 2);
  EXPECT_FALSE(two->comments(0).system());
  EXPECT_TRUE(two->comments(1).system());
  EXPECT_EQ(store_->GetIssue("gitlab:troyengel/archbuild", 1).status().code(),
            absl::StatusCode::kNotFound);  // iid 1 never existed
  for (const auto& r : http_.Requests()) {
    EXPECT_EQ(r.request.headers.Get("PRIVATE-TOKEN"), kGlToken);
    EXPECT_FALSE(r.request.headers.Has("Authorization"));
  }
}

TEST_F(ForgeCrawlerTest, GitlabIncrementalListsNotesOnlyForChangedIssues) {
  const v1::RepositoryRef repo = GitlabLease().repo();
  auto stored = ParseGitlabIssuesPage(Page({GlIssue(1, T(10), 1), GlIssue(2, T(20), 0)}), repo);
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_TRUE(store_->ApplyIssues("gitlab:troyengel/archbuild", 1, *stored).ok());
  v1::Comment note;
  note.set_issue_number(1);
  note.set_id(100);
  *note.mutable_updated_at() = ToProto(absl::FromUnixSeconds(1672531200 + 5));
  ASSERT_TRUE(store_->ApplyComments("gitlab:troyengel/archbuild", 1, {note}).ok());

  v1::Lease lease = GitlabLease(v1::CRAWL_MODE_INCREMENTAL);
  *lease.mutable_cursor()->mutable_issues_since() = ToProto(*ParseRfc3339(T(10)));
  http_.Respond(kGlProject, 200, R"({"id": 6590996, "path_with_namespace": "troyengel/archbuild"})");
  // Issue 1 is unchanged, issue 2 got a note (updated_at and count changed), issue 3 is new.
  http_.Respond(GlIssues() + "&updated_after=" + Enc(T(10)), 200,
                Page({GlIssue(1, T(10), 1), GlIssue(2, T(30), 1), GlIssue(3, T(40), 0)}));
  http_.Respond(GlNotes(2), 200, Page({GlNote(200, T(30), false)}));
  http_.Respond(GlNotes(3), 200, Page({GlNote(300, T(40), true)}));
  http_.Respond(GlIssues() + "&updated_after=" + Enc(T(40)), 200, Page({GlIssue(3, T(40), 0)}));

  auto result = Crawl(lease);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(UrlsContaining("/notes"), (std::vector<std::string>{GlNotes(2), GlNotes(3)}));
  EXPECT_EQ(http_.Pending(), 0u);
  EXPECT_EQ(FormatRfc3339(FromProto(result->cursor->issues_since())), T(40));
  auto two = store_->GetIssue("gitlab:troyengel/archbuild", 2);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->comments_size(), 1);
  EXPECT_EQ(two->comments(0).url(), "https://gitlab.test/troyengel/archbuild/-/issues/2#note_200");
}

TEST_F(ForgeCrawlerTest, GitlabRelistsNotesAnInterruptedCrawlMissed) {
  // Issue 5 is stored with 2 user notes counted but none stored (a crawl stopped after the page).
  auto stored = ParseGitlabIssuesPage(Page({GlIssue(5, T(10), 2)}), GitlabLease().repo());
  ASSERT_TRUE(store_->ApplyIssues("gitlab:troyengel/archbuild", 1, *stored).ok());
  v1::Lease lease = GitlabLease(v1::CRAWL_MODE_INCREMENTAL);
  *lease.mutable_cursor()->mutable_issues_since() = ToProto(*ParseRfc3339(T(10)));
  http_.Respond(kGlProject, 200, R"({"path_with_namespace": "troyengel/archbuild"})");
  http_.Respond(GlIssues() + "&updated_after=" + Enc(T(10)), 200, Page({GlIssue(5, T(10), 2)}));
  http_.Respond(GlNotes(5), 200, Page({GlNote(1, T(9), false), GlNote(2, T(10), false)}));
  auto result = Crawl(lease);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(store_->GetIssue("gitlab:troyengel/archbuild", 5)->comments_size(), 2);
}

// A notes page that never parses fails the crawl after its own bounded re-fetches, naming the
// notes URL; the issue page it belongs to is not fetched again for it (a parse failure of a
// notes page once marked the whole issue page as a bad body, re-listing it max_retries times).
TEST_F(ForgeCrawlerTest, GitlabNotesThatNeverParseFailWithoutRefetchingTheIssuePage) {
  options_.max_retries = 2;
  http_.Respond(kGlProject, 200, R"({"path_with_namespace": "troyengel/archbuild"})");
  http_.Respond(GlIssues(), 200, Page({GlIssue(4, T(4), 1)}));
  for (int i = 0; i < 3; ++i) http_.Respond(GlNotes(4), 200, "[{\"id\": 1, \"body\"");
  auto result = Crawl(GitlabLease());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("/issues/4/notes"), std::string::npos)
      << result.status();
  EXPECT_EQ(UrlsContaining("/notes").size(), 3u);  // the first fetch and two retries
  EXPECT_EQ(UrlsContaining("/issues?").size(), 1u);  // the issue page once
  EXPECT_EQ(http_.Pending(), 0u);
}

TEST_F(ForgeCrawlerTest, GitlabGoneIssueBecomesATombstoneInTheChangeFeed) {
  http_.Respond(kGlProject, 200, R"({"path_with_namespace": "troyengel/archbuild"})");
  http_.Respond(GlIssues(), 200, Page({GlIssue(4, T(4), 0)}));
  http_.Respond(GlNotes(4), 410, R"({"message": "410 Gone"})");
  http_.Respond(GlIssues() + "&updated_after=" + Enc(T(4)), 200, "[]");
  auto result = Crawl(GitlabLease());
  ASSERT_TRUE(result.ok()) << result.status();
  auto four = store_->GetIssue("gitlab:troyengel/archbuild", 4);
  ASSERT_TRUE(four.ok()) << four.status();
  EXPECT_TRUE(four->issue().deleted());
  auto changes = store_->ReadChanges(0, 100);
  ASSERT_TRUE(changes.ok()) << changes.status();
  ASSERT_EQ(changes->events_size(), 1);  // coalesced: the upsert, then the delete
  EXPECT_EQ(changes->events(0).kind(), v1::CHANGE_KIND_DELETE);
  EXPECT_EQ(changes->events(0).number(), 4);
}

TEST_F(ForgeCrawlerTest, GitlabMovedProjectIsFollowedAndReported) {
  const std::string moved = "https://gitlab.test/api/v4/projects/newgroup%2Fsub%2Farchbuild";
  http_.Respond(kGlProject, 301, "", {{"Location", moved}});
  http_.Respond(moved, 200, R"({"path_with_namespace": "newgroup/sub/archbuild"})");
  const std::string issues =
      moved + "/issues?scope=all&state=all&order_by=updated_at&sort=asc&per_page=100";
  http_.Respond(issues, 200, "[]");
  auto result = Crawl(GitlabLease());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->moved_to, "gitlab:newgroup/sub/archbuild");
  EXPECT_EQ(http_.Pending(), 0u);
}

TEST_F(ForgeCrawlerTest, MissingRepositoryIsGoneOnEveryForge) {
  struct Case {
    v1::Lease lease;
    std::string url;
  };
  const std::vector<Case> cases = {
      {GitlabLease(), kGlProject},
      {Lease(v1::TRACKER_GITEE, "o", "r", kGiteeBase),
       absl::StrCat(kGiteeBase, "/repos/o/r?access_token=", kGiteeToken)},
      {Lease(v1::TRACKER_GITHUB, "o", "r", "https://gh.test"), "https://gh.test/repos/o/r"},
  };
  options_.token = kGiteeToken;
  for (const Case& c : cases) {
    http_.Respond(c.url, 404, R"({"message": "Not Found"})");
    auto result = Crawl(c.lease);
    ASSERT_FALSE(result.ok()) << c.url;
    EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound);
    EXPECT_NE(result.status().message().find("gone"), std::string::npos) << result.status();
    EXPECT_EQ(result.status().message().find(kGiteeToken), std::string::npos) << result.status();
  }
}

TEST_F(ForgeCrawlerTest, GiteeRecordedCrawlPagesByTotalPageWithTheTokenOnlyInTheRequest) {
  REQUIRE_RECORDING(kGitee / "gitee_issues1");
  options_.tokens[v1::TRACKER_GITEE] = kGiteeToken;
  const std::string repo = absl::StrCat(kGiteeBase, "/repos/example/example");
  const std::string tok = absl::StrCat("access_token=", kGiteeToken);
  const std::string issues = repo + "/issues?state=all&sort=updated&direction=asc&per_page=100";
  const std::string comments = repo + "/issues/comments?sort=updated&direction=asc&per_page=100";
  http_.Respond(repo + "?" + tok, 200, R"({"full_name": "example/example", "open_issues_count": 1})");
  http_.Respond(issues + "&" + tok, 200, ReadAll(kGitee / "gitee_issues1"),
                {{"total_page", "2"}, {"total_count", "2"}});
  http_.Respond(issues + "&page=2&" + tok, 200, ReadAll(kGitee / "gitee_issues2"),
                {{"total_page", "2"}, {"total_count", "2"}});
  http_.Respond(issues + "&since=" + Enc("2020-04-01T03:06:51Z") + "&" + tok, 200,
                ReadAll(kGitee / "gitee_issues2"), {{"total_page", "1"}});
  nlohmann::json all = nlohmann::json::parse(ReadAll(kGitee / "gitee_issue1_comments"));
  for (auto& c : nlohmann::json::parse(ReadAll(kGitee / "gitee_issue2_comments"))) all.push_back(c);
  http_.Respond(comments + "&" + tok, 200, all.dump(), {{"total_page", "1"}});
  http_.Respond(comments + "&since=" + Enc("2020-01-02T12:36:01Z") + "&" + tok, 200, all.dump());

  auto result = Crawl(Lease(v1::TRACKER_GITEE, "example", "example", kGiteeBase));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(http_.Pending(), 0u);
  EXPECT_TRUE(result->done);
  EXPECT_EQ(result->issues_estimated, 2);  // total_count
  EXPECT_EQ(result->counters.issues_stored(), 2);
  EXPECT_EQ(result->counters.comments_stored(), 2);
  auto first = store_->GetIssue("gitee:example/example", 2299552);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->issue().key(), "I1DACG");
  ASSERT_EQ(first->comments_size(), 1);
  EXPECT_EQ(first->comments(0).body(), "Hey This is comment");
  auto second = store_->GetIssue("gitee:example/example", 2300055);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->issue().state(), v1::ISSUE_STATE_CLOSED);
  EXPECT_EQ(second->comments_size(), 1);
  // The token travels only in the requests: not in the cursor, progress or stored data.
  for (const auto& r : http_.Requests()) {
    EXPECT_NE(r.request.url.find(tok), std::string::npos) << r.request.url;
  }
  EXPECT_EQ(result->cursor->SerializeAsString().find(kGiteeToken), std::string::npos);
  EXPECT_EQ(first->SerializeAsString().find(kGiteeToken), std::string::npos);
}

TEST_F(ForgeCrawlerTest, GiteeErrorsNeverCarryTheToken) {
  options_.tokens[v1::TRACKER_GITEE] = kGiteeToken;
  options_.max_retries = 1;
  const std::string repo = absl::StrCat(kGiteeBase, "/repos/o/r");
  const std::string tok = absl::StrCat("access_token=", kGiteeToken);
  http_.Respond(repo + "?" + tok, 200, R"({"full_name": "o/r"})");
  const std::string issues =
      repo + "/issues?state=all&sort=updated&direction=asc&per_page=100&" + tok;
  http_.Respond(issues, 502, "bad gateway");
  http_.Respond(issues, 503, "unavailable");
  auto result = Crawl(Lease(v1::TRACKER_GITEE, "o", "r", kGiteeBase));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(result.status().ToString().find(kGiteeToken), std::string::npos) << result.status();
  EXPECT_NE(result.status().message().find("/repos/o/r/issues"), std::string::npos);
}

TEST_F(ForgeCrawlerTest, ApiUrlPerTrackerAppliesWhenTheLeaseNamesNone) {
  options_.api_urls[v1::TRACKER_GITLAB] = "https://gitlab.test/api/v4/";
  v1::Lease lease = GitlabLease();
  lease.mutable_repo()->clear_api_url();
  http_.Respond(kGlProject, 404, "{}");
  auto result = Crawl(lease);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(http_.Urls(), std::vector<std::string>{kGlProject});
}

TEST_F(ForgeCrawlerTest, PageBudgetPausesWithTheCursorAndTheNextLeaseContinues) {
  const std::string base = "https://gh.test";
  const std::string repo = base + "/repos/o/r";
  const std::string issues = repo + "/issues?state=all&sort=updated&direction=asc&per_page=100";
  const std::string comments = repo + "/issues/comments?sort=updated&direction=asc&per_page=100";
  auto gh = [&](int n, int second) {
    return nlohmann::json{{"id", n},       {"number", n},       {"title", "t"},
                          {"created_at", T(0)}, {"updated_at", T(second)}, {"state", "open"}};
  };
  const std::string p2 = base + "/repositories/1/issues?page=2";
  const std::string p3 = base + "/repositories/1/issues?page=3";
  options_.max_pages_per_lease = 2;
  http_.Respond(repo, 200, R"({"full_name": "o/r"})");
  http_.Respond(issues, 200, Page({gh(1, 1), gh(2, 2)}),
                {{"Link", absl::StrCat("<", p2, ">; rel=\"next\"")}});
  http_.Respond(p2, 200, Page({gh(3, 3)}), {{"Link", absl::StrCat("<", p3, ">; rel=\"next\"")}});
  auto first = Crawl(Lease(v1::TRACKER_GITHUB, "o", "r", base));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->done);
  EXPECT_TRUE(first->paused);
  EXPECT_TRUE(reports_.back().paused);
  EXPECT_FALSE(reports_.back().done);
  EXPECT_EQ(http_.Urls(), (std::vector<std::string>{repo, issues, p2}));  // page 3 waits
  EXPECT_EQ(FormatRfc3339(FromProto(first->cursor->issues_since())), T(3));
  EXPECT_EQ(first->cursor->issues_etag(), "");
  EXPECT_FALSE(first->cursor->has_comments_since());

  // The next lease resumes from the cursor (since is inclusive: issue 3 again, a no-op).
  options_.max_pages_per_lease = 0;
  v1::Lease next = Lease(v1::TRACKER_GITHUB, "o", "r", base, v1::CRAWL_MODE_INCREMENTAL);
  *next.mutable_cursor() = *first->cursor;
  http_.Respond(repo, 200, R"({"full_name": "o/r"})");
  http_.Respond(issues + "&since=" + Enc(T(3)), 200, Page({gh(3, 3), gh(4, 4)}));
  http_.Respond(issues + "&since=" + Enc(T(4)), 200, Page({gh(4, 4)}), {{"ETag", "\"e4\""}});
  http_.Respond(comments, 200, "[]");
  auto second = Crawl(next);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->done);
  EXPECT_FALSE(second->paused);
  EXPECT_EQ(http_.Pending(), 0u);
  EXPECT_EQ(second->counters.issues_stored(), 1);  // only issue 4 is new
  EXPECT_EQ(FormatRfc3339(FromProto(second->cursor->issues_since())), T(4));
  EXPECT_EQ(second->cursor->issues_etag(), "\"e4\"");
  for (int n = 1; n <= 4; ++n) EXPECT_TRUE(store_->GetIssue("github:o/r", n).ok()) << n;
}

TEST_F(ForgeCrawlerTest, PageBudgetStopsAtARepairStartWhenItemsChangedWhilePaging) {
  // Page 2 is served 10 s after page 1 and issue 1 changed in between: an item may have been
  // skipped at the boundary, so the paused cursor stays at page 1's last updated_at.
  const std::string base = "https://gh.test";
  const std::string repo = base + "/repos/o/r";
  const std::string issues = repo + "/issues?state=all&sort=updated&direction=asc&per_page=100";
  const std::string p2 = base + "/repositories/1/issues?page=2";
  const std::string p3 = base + "/repositories/1/issues?page=3";
  const absl::Time now = clock_.Now();
  auto date = [](absl::Time t) { return absl::FormatTime("%a, %d %b %Y %H:%M:%S GMT", t, absl::UTCTimeZone()); };
  auto at = [&](absl::Time t) { return FormatRfc3339(t); };
  auto gh = [&](int n, const std::string& updated) {
    return nlohmann::json{{"id", n},       {"number", n},          {"title", "t"},
                          {"created_at", updated}, {"updated_at", updated}, {"state", "open"}};
  };
  options_.max_pages_per_lease = 2;
  http_.Respond(repo, 200, R"({"full_name": "o/r"})");
  http_.Respond(issues, 200, Page({gh(2, T(2)), gh(3, T(3))}),
                {{"Link", absl::StrCat("<", p2, ">; rel=\"next\"")}, {"Date", date(now)}});
  http_.Respond(p2, 200, Page({gh(5, T(5)), gh(1, at(now + absl::Seconds(5)))}),
                {{"Link", absl::StrCat("<", p3, ">; rel=\"next\"")},
                 {"Date", date(now + absl::Seconds(10))}});
  auto result = Crawl(Lease(v1::TRACKER_GITHUB, "o", "r", base));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->paused);
  EXPECT_EQ(FormatRfc3339(FromProto(result->cursor->issues_since())), T(3));
}

TEST_F(ForgeCrawlerTest, UnknownTrackerIsRefused) {
  auto result = Crawl(Lease(v1::TRACKER_UNSPECIFIED, "o", "r", "https://x.test"));
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(http_.Urls().empty());
}

}  // namespace
}  // namespace issuescope::crawler

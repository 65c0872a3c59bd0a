// ParseIssue(sPage), ParseComment(sPage), ParseRepository: field mapping, nulls, PRs, and the
// messages of bad input.
#include <ostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/time_util.h"
#include "crawler/github_parse.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace issuescope::crawler {
namespace {

v1::RepositoryRef Repo() {
  v1::RepositoryRef r;
  r.set_tracker(v1::TRACKER_GITHUB);
  r.set_owner("octo");
  r.set_name("hello");
  return r;
}

constexpr char kFullIssue[] = R"({
  "id": 1001, "number": 7, "title": "CUDA OOM", "body": "it breaks",
  "state": "closed", "state_reason": "completed",
  "labels": [{"id": 1, "name": "bug"}, {"id": 2, "name": "module: cuda"}],
  "user": {"login": "alice"},
  "assignee": {"login": "bob"},
  "assignees": [{"login": "bob"}, {"login": "carol"}],
  "created_at": "2024-01-02T03:04:05Z", "updated_at": "2024-02-03T04:05:06Z",
  "closed_at": "2024-02-03T04:05:06Z", "comments": 12,
  "html_url": "https://github.com/octo/hello/issues/7",
  "reactions": {"total_count": 5, "+1": 5}
})";

TEST(ParseIssueTest, MapsEveryField) {
  auto issue = ParseIssue(nlohmann::json::parse(kFullIssue), Repo());
  ASSERT_TRUE(issue.ok()) << issue.status();
  EXPECT_EQ(issue->repo().owner(), "octo");
  EXPECT_EQ(issue->number(), 7);
  EXPECT_EQ(issue->key(), "7");
  EXPECT_EQ(issue->id(), 1001);
  EXPECT_EQ(issue->title(), "CUDA OOM");
  EXPECT_EQ(issue->body(), "it breaks");
  EXPECT_EQ(issue->state(), v1::ISSUE_STATE_CLOSED);
  EXPECT_EQ(issue->state_reason(), "completed");
  ASSERT_EQ(issue->labels_size(), 2);
  EXPECT_EQ(issue->labels(1), "module: cuda");
  EXPECT_EQ(issue->author(), "alice");
  ASSERT_EQ(issue->assignees_size(), 2);
  EXPECT_EQ(issue->assignees(1), "carol");
  EXPECT_EQ(FromProto(issue->created_at()), *ParseRfc3339("2024-01-02T03:04:05Z"));
  EXPECT_EQ(FromProto(issue->updated_at()), *ParseRfc3339("2024-02-03T04:05:06Z"));
  EXPECT_TRUE(issue->has_closed_at());
  EXPECT_EQ(issue->comment_count(), 12);
  EXPECT_FALSE(issue->is_pull_request());
  EXPECT_EQ(issue->url(), "https://github.com/octo/hello/issues/7");
  EXPECT_EQ(issue->reactions(), 5);
  EXPECT_FALSE(issue->has_fetched_at());
}

TEST(ParseIssueTest, ToleratesNullsAndMissingOptionalFields) {
  auto issue = ParseIssue(nlohmann::json::parse(R"({
    "id": 1, "number": 2, "updated_at": "2024-02-03T04:05:06Z", "title": "", "body": null,
    "created_at": "2024-02-03T04:05:06Z", "state": "open", "state_reason": null, "labels": [], "user": null, "assignee": null,
    "assignees": null, "closed_at": null, "reactions": null, "pull_request": null})"),
                          Repo());
  ASSERT_TRUE(issue.ok()) << issue.status();
  EXPECT_EQ(issue->state(), v1::ISSUE_STATE_OPEN);
  EXPECT_EQ(issue->body(), "");
  EXPECT_EQ(issue->author(), "");
  EXPECT_FALSE(issue->has_closed_at());
  EXPECT_FALSE(issue->is_pull_request());
}

TEST(ParseIssueTest, PullRequestKeyMarksPullRequests) {
  auto issue = ParseIssue(nlohmann::json::parse(R"({
    "id": 1, "number": 2, "updated_at": "2024-02-03T04:05:06Z", "title": "t", "state": "open",
    "created_at": "2024-02-03T04:05:06Z",
    "pull_request": {"url": "https://api.github.com/repos/octo/hello/pulls/2"}})"),
                          Repo());
  ASSERT_TRUE(issue.ok()) << issue.status();
  EXPECT_TRUE(issue->is_pull_request());
}

struct BadCase {
  const char* name;
  const char* body;
  const char* want_in_message;
};

// PrintTo names a case by its name in test listings.
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

class BadIssuePageTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadIssuePageTest, InvalidArgumentNamesTheProblem) {
  auto page = ParseIssuesPage(GetParam().body, Repo());
  ASSERT_FALSE(page.ok());
  EXPECT_EQ(page.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(page.status().message().find(GetParam().want_in_message), absl::string_view::npos)
      << page.status();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadIssuePageTest,
    ::testing::Values(
        BadCase{"not_json", "<html>502</html>", "invalid JSON"},
        BadCase{"truncated", "[{\"id\": 1,", "invalid JSON"},
        BadCase{"not_array", R"({"message": "Not Found"})", "expected a JSON array"},
        BadCase{"missing_number", R"([{"id": 1, "updated_at": "2024-01-01T00:00:00Z"}])",
                "item 0: field 'number' is missing"},
        BadCase{"string_number",
                R"([{"id": 1, "number": "3", "updated_at": "2024-01-01T00:00:00Z"}])",
                "item 0: field 'number' is a string"},
        BadCase{"missing_updated_at",
                R"([{"id": 1, "number": 1, "updated_at": "2024-01-01T00:00:00Z",
                     "title": "t", "state": "open", "created_at": "2024-01-01T00:00:00Z"},
                    {"id": 2, "number": 2}])",
                "item 1: field 'updated_at' is missing"},
        BadCase{"bad_updated_at", R"([{"id": 1, "number": 1, "updated_at": "yesterday"}])",
                "field 'updated_at' is invalid"},
        BadCase{"missing_id", R"([{"number": 1, "updated_at": "2024-01-01T00:00:00Z"}])",
                "field 'id' is missing"},
        BadCase{"labels_not_array",
                R"([{"id": 1, "number": 1, "updated_at": "2024-01-01T00:00:00Z", "labels": 3,
                     "title": "t", "state": "open", "created_at": "2024-01-01T00:00:00Z"}])",
                "field 'labels' is not an array"},
        BadCase{"unknown_state",
                R"([{"id": 1, "number": 1, "updated_at": "2024-01-01T00:00:00Z", "state": "x",
                     "title": "t", "created_at": "2024-01-01T00:00:00Z"}])",
                "field 'state' has unknown value"},
        BadCase{"item_not_object", "[1]", "item 0: issue is not a JSON object"},
        // Issue 16 (8): a null is not data: no "unknown" state, empty title or missing date.
        BadCase{"null_state",
                R"([{"id": 1, "number": 1, "updated_at": "2024-01-01T00:00:00Z", "state": null,
                     "title": "t", "created_at": "2024-01-01T00:00:00Z"}])",
                "item 0: field 'state' is null"},
        BadCase{"null_title",
                R"([{"id": 1, "number": 1, "updated_at": "2024-01-01T00:00:00Z", "state": "open",
                     "title": null, "created_at": "2024-01-01T00:00:00Z"}])",
                "item 0: field 'title' is null"},
        BadCase{"null_created_at",
                R"([{"id": 1, "number": 1, "updated_at": "2024-01-01T00:00:00Z", "state": "open",
                     "title": "t", "created_at": null}])",
                "item 0: field 'created_at' is null"},
        BadCase{"missing_state",
                R"([{"id": 1, "number": 1, "updated_at": "2024-01-01T00:00:00Z",
                     "title": "t", "created_at": "2024-01-01T00:00:00Z"}])",
                "item 0: field 'state' is missing"},
        BadCase{"negative_number",
                R"([{"id": 1, "number": -4, "updated_at": "2024-01-01T00:00:00Z"}])",
                "field 'number' is not positive"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(ParseCommentsPageTest, MapsFieldsAndIssueNumberFromIssueUrl) {
  auto page = ParseCommentsPage(R"([{
    "id": 55, "body": "same here", "user": {"login": "dave"},
    "created_at": "2024-01-02T00:00:00Z", "updated_at": "2024-01-03T00:00:00Z",
    "issue_url": "https://api.github.com/repos/octo/hello/issues/1347",
    "html_url": "https://github.com/octo/hello/issues/1347#issuecomment-55"},
    {"id": 56, "body": null, "user": null, "updated_at": "2024-01-04T00:00:00Z",
     "issue_url": "https://api.github.com/repos/octo/hello/issues/9/",
     "html_url": "https://github.com/octo/hello/pull/9#issuecomment-56"}])",
                                Repo());
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->size(), 2u);
  const v1::Comment& c = (*page)[0];
  EXPECT_EQ(c.id(), 55);
  EXPECT_EQ(c.issue_number(), 1347);
  EXPECT_EQ(c.author(), "dave");
  EXPECT_EQ(c.body(), "same here");
  EXPECT_EQ(c.repo().name(), "hello");
  EXPECT_EQ(FromProto(c.updated_at()), *ParseRfc3339("2024-01-03T00:00:00Z"));
  EXPECT_FALSE(IsPullRequestComment(c));
  EXPECT_EQ((*page)[1].issue_number(), 9);
  EXPECT_TRUE(IsPullRequestComment((*page)[1]));
}

TEST(ParseCommentsPageTest, BadCommentsNameFieldAndIndex) {
  const BadCase cases[] = {
      {"no_issue_url", R"([{"id": 1, "updated_at": "2024-01-01T00:00:00Z"}])",
       "item 0: field 'issue_url' is missing"},
      {"bad_issue_url",
       R"([{"id": 1, "updated_at": "2024-01-01T00:00:00Z", "issue_url": "https://x/issues/abc"}])",
       "does not end in an issue number"},
      {"no_id", R"([{"updated_at": "2024-01-01T00:00:00Z", "issue_url": "https://x/issues/1"}])",
       "field 'id' is missing"},
      {"no_updated_at", R"([{"id": 3, "issue_url": "https://x/issues/1"}])",
       "field 'updated_at' is missing"},
  };
  for (const auto& c : cases) {
    auto page = ParseCommentsPage(c.body, Repo());
    ASSERT_FALSE(page.ok()) << c.name;
    EXPECT_EQ(page.status().code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_NE(page.status().message().find(c.want_in_message), absl::string_view::npos)
        << c.name << ": " << page.status();
  }
}

// Issue 16 (8): a comment of another host or repository is not filed under its trailing number.
TEST(ParseCommentsPageTest, IssueUrlMustNameTheListedRepository) {
  const std::string prefix = "https://api.github.com/repos/octo/hello/issues/";
  auto comment = [](const std::string& issue_url) {
    return absl::StrCat(R"([{"id": 1, "updated_at": "2024-01-01T00:00:00Z", "issue_url": ")",
                        issue_url, R"("}])");
  };
  auto ok = ParseCommentsPage(comment(prefix + "12"), Repo(), prefix);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)[0].issue_number(), 12);
  // Host and names compare without case; a trailing '/' is tolerated.
  EXPECT_TRUE(ParseCommentsPage(comment("HTTPS://API.GITHUB.COM/repos/Octo/Hello/issues/12/"),
                                Repo(), prefix)
                  .ok());
  for (const std::string& foreign :
       {std::string("https://evil.example/repos/octo/hello/issues/12"),
        std::string("https://api.github.com/repos/octo/other/issues/12"),
        std::string("https://api.github.com/repos/octo/hello-fork/issues/12"),
        std::string("https://api.github.com/repos/octo/hello/issues/3/x/12")}) {
    auto page = ParseCommentsPage(comment(foreign), Repo(), prefix);
    ASSERT_FALSE(page.ok()) << foreign;
    EXPECT_NE(page.status().message().find("names another host or repository"),
              absl::string_view::npos)
        << page.status();
  }
}

// Issue 16 (9): with a list for bad items, one bad item is set aside and the others parse.
TEST(ParseIssuesPageTest, BadItemsAreSetAsideWhenAsked) {
  const std::string body = R"([
    {"id": 1, "number": 1, "updated_at": "2024-01-01T00:00:00Z", "title": "a", "state": "open",
     "created_at": "2024-01-01T00:00:00Z"},
    {"id": 2, "number": 2, "updated_at": "2024-01-01T00:00:00Z", "title": 5, "state": "open",
     "created_at": "2024-01-01T00:00:00Z"},
    "not an issue",
    {"id": 4, "number": 4, "updated_at": "2024-01-01T00:00:00Z", "title": "d", "state": "closed",
     "created_at": "2024-01-01T00:00:00Z"}])";
  std::vector<BadItem> bad;
  auto page = ParseIssuesPage(body, Repo(), &bad);
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[1].number(), 4);
  ASSERT_EQ(bad.size(), 2u);
  EXPECT_EQ(bad[0].index, 1);
  EXPECT_EQ(bad[0].key, "number 2");
  EXPECT_EQ(bad[0].error, "field 'title' is a number");
  EXPECT_EQ(nlohmann::json::parse(bad[0].raw)["title"], 5);
  EXPECT_EQ(bad[1].index, 2);
  EXPECT_EQ(bad[1].key, "");
  // Without the list, the first bad item fails the page, as before.
  EXPECT_FALSE(ParseIssuesPage(body, Repo()).ok());
}

// The page is parsed as a stream, item by item: an array nested as an item is one item (set
// aside, index 1), a page cut short after good items fails whole, and the item indexes count
// every top-level element.
TEST(ParseIssuesPageTest, StreamedItemsKeepTheirIndexesAndATruncatedPageFailsWhole) {
  const std::string good = R"({"id": 1, "number": 1, "updated_at": "2024-01-01T00:00:00Z",
      "title": "a", "state": "open", "created_at": "2024-01-01T00:00:00Z"})";
  std::vector<BadItem> bad;
  auto page = ParseIssuesPage("[" + good + R"(, [{"id": 9}, 2], null, )" + good + "]", Repo(),
                              &bad);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->size(), 2u);
  ASSERT_EQ(bad.size(), 2u);
  EXPECT_EQ(bad[0].index, 1);
  EXPECT_EQ(nlohmann::json::parse(bad[0].raw), nlohmann::json::parse(R"([{"id": 9}, 2])"));
  EXPECT_EQ(bad[1].index, 2);
  std::vector<BadItem> none;
  auto cut = ParseIssuesPage("[" + good + ", " + good.substr(0, 30), Repo(), &none);
  EXPECT_EQ(cut.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(cut.status().message().find("invalid JSON"), absl::string_view::npos);
  EXPECT_TRUE(none.empty());
}

TEST(ParseRepositoryTest, ReadsFullNameAndCount) {
  auto info = ParseRepository(R"({"full_name": "Octo/Hello", "open_issues_count": 42})");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->full_name, "Octo/Hello");
  EXPECT_EQ(info->open_issues_count, 42);
  EXPECT_FALSE(ParseRepository("[]").ok());
  EXPECT_FALSE(ParseRepository(R"({"open_issues_count": "x"})").ok());
}

}  // namespace
}  // namespace issuescope::crawler

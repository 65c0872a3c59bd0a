// Repository slugs and issue references (common/repo_slug.h): what the CLI, the catalog and the
// coordinator accept, and the errors that name what was wrong.
#include "common/repo_slug.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace issuescope {
namespace {

TEST(RepoSlugTest, RepoSpecsParseWithTheTrackerPrefix) {
  auto gh = ParseRepoSpec("github:PyTorch/pytorch");
  ASSERT_TRUE(gh.ok()) << gh.status();
  EXPECT_EQ(gh->tracker(), v1::TRACKER_GITHUB);
  EXPECT_EQ(gh->owner(), "PyTorch");  // the tracker's casing is kept...
  EXPECT_EQ(gh->name(), "pytorch");
  EXPECT_EQ(RepoSlug(*gh), "github:pytorch/pytorch");  // ...and the slug is lower case
  EXPECT_EQ(RepoFullName(*gh), "PyTorch/pytorch");

  auto gitcode = ParseRepoSpec("gitcode:mindspore/mindspore");
  ASSERT_TRUE(gitcode.ok()) << gitcode.status();
  EXPECT_EQ(gitcode->tracker(), v1::TRACKER_GITEE);
  auto gl = ParseRepoSpec("GitLab:gitlab-org/gitlab-runner");
  ASSERT_TRUE(gl.ok()) << gl.status();
  EXPECT_EQ(RepoSlug(*gl), "gitlab:gitlab-org/gitlab-runner");
  EXPECT_TRUE(ParseRepoSpec("github:vllm-project/vllm.v2_x").ok());
}

TEST(RepoSlugTest, GitlabOwnersMayBeNestedGroups) {
  auto nested = ParseRepoSpec("gitlab:gitlab-org/security/gitlab");
  ASSERT_TRUE(nested.ok()) << nested.status();
  EXPECT_EQ(nested->owner(), "gitlab-org/security");
  EXPECT_EQ(nested->name(), "gitlab");
  EXPECT_EQ(RepoSlug(*nested), "gitlab:gitlab-org/security/gitlab");
  std::string slug;
  int64_t number = 0;
  ASSERT_TRUE(ParseIssueRef("gitlab:gitlab-org/security/gitlab#12", &slug, &number).ok());
  EXPECT_EQ(slug, "gitlab:gitlab-org/security/gitlab");
  // Only GitLab nests; and not deeper than GitLab allows (20 levels of groups).
  EXPECT_FALSE(ParseRepoSpec("github:a/b/c").ok());
  std::string deep = "gitlab:g";
  for (int i = 0; i < 21; ++i) deep += "/g";
  EXPECT_FALSE(ParseRepoSpec(deep).ok());
  EXPECT_FALSE(ParseRepoSpec("gitlab:group//name").ok());
}

TEST(RepoSlugTest, BadRepoSpecsNameWhatIsWrong) {
  struct Case {
    std::string spec;
    std::string says;
  };
  const Case cases[] = {
      {"pytorch/pytorch", "no tracker prefix"},
      {"sourceforge:a/b", "unknown tracker 'sourceforge'"},
      {"github:pytorch", "is not of the form github:OWNER/NAME"},
      {"github:a/b/c", "is not of the form github:OWNER/NAME"},
      {"github:/b", "is not of the form"},
      {"github:a/", "is not of the form"},
      {"github:a/b c", "is not of the form"},
      {"github:../b", "is not of the form"},
      {"github:a/" + std::string(101, 'x'), "is not of the form"},
  };
  for (const Case& c : cases) {
    auto r = ParseRepoSpec(c.spec);
    ASSERT_FALSE(r.ok()) << c.spec;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << c.spec;
    EXPECT_NE(r.status().message().find(c.says), std::string::npos)
        << c.spec << ": " << r.status().message();
  }
}

TEST(RepoSlugTest, IssueRefsParseWithOrWithoutTheTracker) {
  std::string slug;
  int64_t number = 0;
  ASSERT_TRUE(ParseIssueRef("vllm-project/vLLM#4242", &slug, &number).ok());
  EXPECT_EQ(slug, "github:vllm-project/vllm");  // GitHub assumed, lower-cased
  EXPECT_EQ(number, 4242);
  ASSERT_TRUE(ParseIssueRef("gitee:mindspore/mindspore#7", &slug, &number).ok());
  EXPECT_EQ(slug, "gitee:mindspore/mindspore");
  EXPECT_EQ(number, 7);
  EXPECT_EQ(IssueKey(slug, number), "gitee:mindspore/mindspore#7");
}

TEST(RepoSlugTest, BadIssueRefsAreInvalidArguments) {
  for (const char* ref : {"pytorch/pytorch", "pytorch/pytorch#", "pytorch/pytorch#0",
                          "pytorch/pytorch#-3", "pytorch/pytorch#12x", "pytorch#12",
                          "nope:pytorch/pytorch#12", "#12"}) {
    std::string slug = "unchanged";
    int64_t number = 0;
    absl::Status s = ParseIssueRef(ref, &slug, &number);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << ref;
    EXPECT_NE(s.message().find(absl::StrCat("issue '", ref, "'")), std::string::npos)
        << ref << ": " << s.message();
    EXPECT_EQ(slug, "unchanged") << ref;
  }
}

TEST(RepoSlugTest, TrackerAndStateNamesRoundTrip) {
  for (v1::Tracker t : {v1::TRACKER_GITHUB, v1::TRACKER_GITLAB, v1::TRACKER_GITEE}) {
    auto parsed = ParseTrackerName(TrackerName(t));
    ASSERT_TRUE(parsed.ok()) << TrackerName(t);
    EXPECT_EQ(*parsed, t);
    EXPECT_FALSE(DefaultApiUrl(t).empty());
  }
  EXPECT_EQ(TrackerName(v1::TRACKER_UNSPECIFIED), "unknown");
  EXPECT_EQ(DefaultApiUrl(v1::TRACKER_UNSPECIFIED), "");
  EXPECT_EQ(IssueStateName(v1::ISSUE_STATE_CLOSED), "closed");
  EXPECT_EQ(IssueStateName(v1::ISSUE_STATE_REJECTED), "rejected");
}

}  // namespace
}  // namespace issuescope

// HTTP 422 on a deep page (GitHub limits page=N on large listings): the crawl lists again from
// the greatest updated_at stored so far instead of failing, and gives up when that makes no
// progress.
#include <memory>

#include "crawler/repo_crawler.h"
#include "gtest/gtest.h"
#include "tests/crawler/crawl_test_util.h"
#include "tests/crawler/fake_transport.h"
#include "tests/crawler/mem_store.h"

namespace issuescope::crawler {
namespace {

using namespace testing;  // NOLINT: test helpers

constexpr char kDeep422[] =
    R"({"message":"In order to keep the API fast for everyone, pagination is limited for this resource.","documentation_url":"https://docs.github.com/v3/#pagination"})";

class DeepPageTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(OpenMemStore(&env_, &store_)); }

  absl::StatusOr<CrawlProgress> Crawl() {
    RepoCrawler crawler(&http_, store_.get(), &clock_, CrawlerOptions{});
    return crawler.Crawl(TestLease(), [](const CrawlProgress&) { return absl::OkStatus(); });
  }

  std::unique_ptr<rocksdb::Env> env_;
  std::unique_ptr<IssueStore> store_;
  FakeClock clock_;
  FakeTransport http_{&clock_};
};

TEST_F(DeepPageTest, RestartsTheListingFromTheSinceCursor) {
  http_.Respond(kTestRepoUrl, 200, R"({"full_name": "octo/hello"})");
  const std::string p2 = std::string(kTestIssues) + "&page=2";
  http_.Respond(kTestIssues, 200, TestPage({TestIssue(1, 1), TestIssue(2, 2)}),
                {{"Link", "<" + p2 + ">; rel=\"next\""}});
  http_.Respond(p2, 422, kDeep422);
  const std::string restart = std::string(kTestIssues) + SinceParam(2);
  http_.Respond(restart, 200, TestPage({TestIssue(2, 2), TestIssue(3, 3), TestIssue(4, 4)}));
  http_.Respond(std::string(kTestIssues) + SinceParam(4), 200, TestPage({TestIssue(4, 4)}));
  http_.Respond(kTestComments, 200, "[]");
  auto result = Crawl();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->done);
  EXPECT_EQ(http_.Pending(), 0u);
  for (int n = 1; n <= 4; ++n) EXPECT_TRUE(store_->GetIssue("github:octo/hello", n).ok()) << n;
  EXPECT_EQ(FormatRfc3339(FromProto(result->cursor->issues_since())), At(4));
}

TEST_F(DeepPageTest, GivesUpWhenRestartingMakesNoProgress) {
  http_.Respond(kTestRepoUrl, 200, R"({"full_name": "octo/hello"})");
  const std::string p2 = std::string(kTestIssues) + "&page=2";
  const std::string restart = std::string(kTestIssues) + SinceParam(2);
  const std::string r2 = restart + "&page=2";
  http_.Respond(kTestIssues, 200, TestPage({TestIssue(1, 2), TestIssue(2, 2)}),
                {{"Link", "<" + p2 + ">; rel=\"next\""}});
  http_.Respond(p2, 422, kDeep422);
  http_.Respond(restart, 200, TestPage({TestIssue(1, 2), TestIssue(2, 2)}),
                {{"Link", "<" + r2 + ">; rel=\"next\""}});
  http_.Respond(r2, 422, kDeep422);
  auto result = Crawl();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(result.status().message().find("422"), absl::string_view::npos);
}

TEST_F(DeepPageTest, A422OnTheFirstPageIsAnError) {
  http_.Respond(kTestRepoUrl, 200, R"({"full_name": "octo/hello"})");
  http_.Respond(kTestIssues, 422, R"({"message":"Validation Failed"})");
  auto result = Crawl();
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace issuescope::crawler

// WorkerFlags: the crawler worker's command line parsed by CLI11, each check naming its flag,
// and the WorkerOptions it builds (tokens from the environment, never from flags).
#include "crawler/worker_flags.h"

#include <cstdlib>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/parse_flags.h"

namespace issuescope::crawler {
namespace {

using ::testing::HasSubstr;

std::string Parse(const std::vector<std::string>& args, WorkerFlags* flags) {
  return testing::ParseFlags(args, flags);
}

const std::vector<std::string> kRequired = {"--data=/tmp/x", "--coordinator=127.0.0.1:1"};

std::vector<std::string> With(std::vector<std::string> extra) {
  std::vector<std::string> args = kRequired;
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(WorkerFlagsTest, DefaultsAreValidAndBuildOptions) {
  WorkerFlags flags;
  ASSERT_EQ(Parse(kRequired, &flags), "");
  ASSERT_TRUE(flags.Validate().ok()) << flags.Validate();
  auto options = flags.BuildOptions();
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->worker_id, "worker-0");
  EXPECT_EQ(options->capacity, 2);
  EXPECT_EQ(options->drain_timeout, absl::Seconds(30));
  EXPECT_EQ(options->drain_feed_wait, absl::Seconds(600));
  EXPECT_EQ(options->crawler.max_pages_per_lease, 50);
  EXPECT_EQ(options->crawler.request_timeout, absl::Seconds(60));
  EXPECT_EQ(options->crawler.pools.size(), 3u);  // one (empty) pool per tracker
  EXPECT_TRUE(options->crawler.api_urls.empty());
}

TEST(WorkerFlagsTest, RequiredFlagsAreNamed) {
  WorkerFlags flags;
  EXPECT_THAT(Parse({"--coordinator=127.0.0.1:1"}, &flags), HasSubstr("--data"));
  WorkerFlags again;
  EXPECT_THAT(Parse({"--data=/tmp/x"}, &again), HasSubstr("--coordinator"));
}

TEST(WorkerFlagsTest, EveryCheckNamesItsFlag) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--log-level=loud"}, "unknown --log-level 'loud'"},
      {{"--capacity=0"}, "--capacity must be between 1 and 64, got 0"},
      {{"--capacity=65"}, "--capacity must be between 1 and 64, got 65"},
      {{"--max-pages-per-lease=-1"}, "--max-pages-per-lease must be >= 0, got -1"},
      {{"--request-timeout-s=0"}, "--request-timeout-s must be between 1 and 3600, got 0"},
      {{"--max-body-mb=5000"}, "--max-body-mb must be between 1 and 4096, got 5000"},
      {{"--github-api=file:///etc"}, "--github-api 'file:///etc' must start with http://"},
      {{"--gitee-api=ftp://x"}, "--gitee-api 'ftp://x' must start with http://"},
      {{"--drain-timeout-s=-1"}, "--drain-timeout-s must be between 0 and 3600, got -1"},
      {{"--gitee-budget=-5"}, "--gitee-budget and --secondary-backoff-s must be >= 0"},
      {{"--secondary-backoff-s=-1"}, "--gitee-budget and --secondary-backoff-s must be >= 0"},
  };
  for (const Case& c : cases) {
    WorkerFlags flags;
    ASSERT_EQ(Parse(With(c.args), &flags), "") << c.args[0];
    const absl::Status s = flags.Validate();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.args[0];
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.message)) << c.args[0];
  }
}

TEST(WorkerFlagsTest, DrainFeedWaitIsRangeCheckedByTheParser) {
  WorkerFlags flags;
  EXPECT_THAT(Parse(With({"--drain-feed-wait-s=90000"}), &flags), HasSubstr("--drain-feed-wait-s"));
}

TEST(WorkerFlagsTest, TokensComeFromTheNamedVariablesAndMissingOnesAreNamed) {
  setenv("WF_TEST_TOKEN", "tok-from-env", 1);
  setenv("WF_TEST_POOL", "alice=tok-a,bob=tok-b", 1);
  WorkerFlags flags;
  ASSERT_EQ(Parse(With({"--token-env=WF_TEST_TOKEN", "--github-token-env=WF_TEST_POOL",
                        "--github-api=http://127.0.0.1:9", "--gitee-budget=100"}),
                  &flags),
            "");
  ASSERT_TRUE(flags.Validate().ok());
  auto options = flags.BuildOptions();
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->crawler.token, "tok-from-env");
  EXPECT_EQ(options->crawler.api_urls.at(v1::TRACKER_GITHUB), "http://127.0.0.1:9");
  EXPECT_EQ(options->crawler.pools.at(v1::TRACKER_GITHUB)->Snapshot().size(), 2u);
  // Trackers without a pool of their own share --token-env's token.
  EXPECT_EQ(options->crawler.pools.at(v1::TRACKER_GITLAB)->Snapshot().size(), 1u);

  WorkerFlags missing;
  ASSERT_EQ(Parse(With({"--github-token-env=WF_TEST_UNSET_VARIABLE"}), &missing), "");
  auto failed = missing.BuildOptions();
  ASSERT_FALSE(failed.ok());
  EXPECT_THAT(std::string(failed.status().message()), HasSubstr("WF_TEST_UNSET_VARIABLE"));
  EXPECT_THAT(std::string(failed.status().message()), ::testing::Not(HasSubstr("tok-")));
}

}  // namespace
}  // namespace issuescope::crawler

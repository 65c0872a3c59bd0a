// IndexerFlags: the indexer's command line parsed by CLI11, its checks naming the flags, and the
// daemon and writer options it stands for.
#include "indexer/indexer_flags.h"

#include <cstdlib>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/parse_flags.h"

namespace issuescope::indexer {
namespace {

using ::testing::HasSubstr;

std::string Parse(const std::vector<std::string>& args, IndexerFlags* flags) {
  return testing::ParseFlags(args, flags);
}

TEST(IndexerFlagsTest, CoordinatorModeBuildsTheDaemonAndWriterOptions) {
  setenv("IF_TEST_TOKEN", "cluster-secret", 1);
  IndexerFlags flags;
  ASSERT_EQ(Parse({"--index=/tmp/i", "--coordinator=10.0.0.1:50050",
                   "--cluster-token-env=IF_TEST_TOKEN", "--id=indexer-2", "--batch-size=64",
                   "--commit-every=500", "--commit-interval-ms=250"},
                  &flags),
            "");
  ASSERT_TRUE(flags.Validate().ok()) << flags.Validate();
  auto daemon = flags.DaemonOptions();
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  EXPECT_EQ(daemon->coordinator_address, "10.0.0.1:50050");
  EXPECT_EQ(daemon->coordinator_token, "cluster-secret");
  EXPECT_EQ(daemon->indexer_id, "indexer-2");
  EXPECT_EQ(daemon->follower.max_batch, 64);
  EXPECT_TRUE(daemon->store_addresses.empty());
  const IndexWriterOptions writer = flags.WriterOptions();
  EXPECT_EQ(writer.max_pending_events, 500);
  EXPECT_EQ(writer.max_commit_delay, absl::Milliseconds(250));
}

TEST(IndexerFlagsTest, StoresModeAndItsChecks) {
  IndexerFlags flags;
  ASSERT_EQ(Parse({"--index=/tmp/i", "--store", "a:1", "b:2"}, &flags), "");
  ASSERT_TRUE(flags.Validate().ok());
  auto daemon = flags.DaemonOptions();
  ASSERT_TRUE(daemon.ok());
  EXPECT_EQ(daemon->store_addresses, (std::vector<std::string>{"a:1", "b:2"}));

  IndexerFlags neither;
  ASSERT_EQ(Parse({"--index=/tmp/i"}, &neither), "");
  EXPECT_THAT(std::string(neither.Validate().message()), HasSubstr("--coordinator HOST:PORT"));

  IndexerFlags both;
  EXPECT_THAT(Parse({"--index=/tmp/i", "--coordinator=x:1", "--store=y:2"}, &both),
              HasSubstr("excludes"));
  IndexerFlags tls_without_coordinator;
  EXPECT_THAT(Parse({"--index=/tmp/i", "--store=y:2", "--tls-ca=/tmp/ca.pem"},
                    &tls_without_coordinator),
              HasSubstr("--coordinator"));
  IndexerFlags tags;
  EXPECT_THAT(Parse({"--index=/tmp/i", "--store=y:2", "--no-tags", "--model=none"}, &tags),
              HasSubstr("excludes"));
  IndexerFlags missing_key;
  ASSERT_EQ(Parse({"--index=/tmp/i", "--store=y:2", "--store-tls-ca=/nonexistent/ca.pem"},
                  &missing_key),
            "");
  EXPECT_THAT(std::string(missing_key.Validate().message()), HasSubstr("--store-tls-ca"));
}

TEST(IndexerFlagsTest, AnUnsetTokenVariableIsNamed) {
  IndexerFlags flags;
  ASSERT_EQ(Parse({"--index=/tmp/i", "--coordinator=x:1", "--cluster-token-env=IF_TEST_UNSET"},
                  &flags),
            "");
  auto daemon = flags.DaemonOptions();
  ASSERT_FALSE(daemon.ok());
  EXPECT_THAT(std::string(daemon.status().message()), HasSubstr("IF_TEST_UNSET"));
}

}  // namespace
}  // namespace issuescope::indexer

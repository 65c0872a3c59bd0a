// CoordinatorFlags: the coordinator's command line parsed by CLI11 and built into its options,
// catalog, credentials and TLS files; every refusal names the flag, file or variable.
#include "coordinator/coordinator_flags.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/parse_flags.h"

namespace issuescope::coordinator {
namespace {

using ::testing::HasSubstr;

std::string Parse(const std::vector<std::string>& args, CoordinatorFlags* flags) {
  return testing::ParseFlags(args, flags);
}

// WriteConfig writes `text` to a file of this test's own: ctest runs the tests of this program
// in parallel, each a process (a shared name let one test read another's config).
std::string WriteConfig(const std::string& text) {
  const std::string path =
      (std::filesystem::temp_directory_path() /
       ("coordinator_flags_test-" + std::to_string(::getpid()) + "-" +
        ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".toml"))
          .string();
  std::ofstream(path) << text;
  return path;
}

TEST(CoordinatorFlagsTest, DefaultsBuild) {
  CoordinatorFlags flags;
  ASSERT_EQ(Parse({"--data=/tmp/c"}, &flags), "");
  auto setup = flags.Build();
  ASSERT_TRUE(setup.ok()) << setup.status();
  const CoordinatorOptions defaults;
  EXPECT_EQ(setup->options.lease_ttl, defaults.lease_ttl);
  EXPECT_TRUE(setup->config.repositories.empty());
  EXPECT_TRUE(setup->access.admin_token.empty());
  EXPECT_FALSE(setup->access.insecure_admin);
  EXPECT_FALSE(setup->access.bind_worker_ids);
  EXPECT_FALSE(setup->tls.enabled());
}

TEST(CoordinatorFlagsTest, FlagsOverrideTheConfigFile) {
  const std::string config = WriteConfig(
      "[coordinator]\nlease_ttl = \"20s\"\nworker_timeout = \"12s\"\n"
      "[[repository]]\nrepo = \"github:a/b\"\n");
  CoordinatorFlags flags;
  ASSERT_EQ(Parse({"--data=/tmp/c", "--config=" + config, "--lease-ttl-ms=5000",
                   "--home-grace-ms=0", "--account-reserve=7"},
                  &flags),
            "");
  auto setup = flags.Build();
  ASSERT_TRUE(setup.ok()) << setup.status();
  EXPECT_EQ(setup->options.lease_ttl, absl::Seconds(5));        // the flag
  EXPECT_EQ(setup->options.worker_timeout, absl::Seconds(12));  // the file
  EXPECT_EQ(setup->options.home_grace, absl::ZeroDuration());
  EXPECT_EQ(setup->options.account_reserve, 7);
  ASSERT_EQ(setup->config.repositories.size(), 1u);
}

TEST(CoordinatorFlagsTest, RefusalsNameWhatIsWrong) {
  setenv("CF_TEST_SAME", "same-token", 1);
  const std::string bad_config = WriteConfig("[coordinator]\nlease_ttl = \"soon\"\n");
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--admin-token-env=CF_TEST_UNSET"}, "CF_TEST_UNSET"},
      {{"--admin-token-env=CF_TEST_SAME", "--cluster-token-env=CF_TEST_SAME"},
       "must hold different tokens"},
      {{"--listen=0.0.0.0:50050"}, "--listen 0.0.0.0:50050 reaches beyond this host"},
      {{"--config=" + bad_config}, "lease_ttl"},
  };
  for (const Case& c : cases) {
    CoordinatorFlags flags;
    std::vector<std::string> args = {"--data=/tmp/c"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    ASSERT_EQ(Parse(args, &flags), "") << c.args[0];
    auto setup = flags.Build();
    ASSERT_FALSE(setup.ok()) << c.args[0];
    EXPECT_THAT(std::string(setup.status().message()), HasSubstr(c.message)) << c.args[0];
    EXPECT_THAT(std::string(setup.status().message()), ::testing::Not(HasSubstr("same-token")));
  }
  // --insecure-cluster is the explicit way to listen beyond loopback without a cluster token.
  CoordinatorFlags open;
  ASSERT_EQ(Parse({"--data=/tmp/c", "--listen=0.0.0.0:50050", "--insecure-cluster"}, &open), "");
  EXPECT_TRUE(open.Build().ok());
}

TEST(CoordinatorFlagsTest, TheParserChecksRangesAndLevels) {
  CoordinatorFlags a, b, c;
  EXPECT_THAT(Parse({"--data=/tmp/c", "--lease-ttl-ms=0"}, &a), HasSubstr("--lease-ttl-ms"));
  EXPECT_THAT(Parse({"--data=/tmp/c", "--log-level=loud"}, &b), HasSubstr("--log-level"));
  EXPECT_THAT(Parse({"--lease-ttl-ms=5"}, &c), HasSubstr("--data"));
}

TEST(CoordinatorFlagsTest, ClientCertificatesBindWorkerIds) {
  const std::string ca = WriteConfig("not checked here");  // ExistingFile only
  CoordinatorFlags flags;
  ASSERT_EQ(Parse({"--data=/tmp/c", "--tls-client-ca=" + ca}, &flags), "");
  auto setup = flags.Build();
  ASSERT_TRUE(setup.ok()) << setup.status();
  EXPECT_TRUE(setup->access.bind_worker_ids);
  EXPECT_EQ(setup->tls.client_ca, ca);
}

}  // namespace
}  // namespace issuescope::coordinator

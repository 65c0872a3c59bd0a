// Browser end-to-end test of the search page: starts the real binaries (WebCluster), then runs
// tests/web/browser_test.js in Debian's headless Chromium through playwright-core. Labelled
// `e2e` and `browser`; fails with a clear message when Chromium, node or tests/web/node_modules
// is missing (CI installs them: see docs/WEB.md). Screenshots are kept in the build tree
// (tests/web/artifacts/*.png) and their paths printed.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/web/web_cluster.h"

namespace issuescope::testing {
namespace {

// FindNode returns the path of `node` on PATH, or "".
std::string FindNode() {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string candidate = dirs.substr(start, end - start) + "/node";
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

TEST(BrowserE2eTest, SearchFacetIssueChartAndError) {
  const char* env_chromium = std::getenv("ISSUESCOPE_CHROMIUM");
  const std::string chromium = env_chromium ? env_chromium : "/usr/bin/chromium";
  const std::string script_dir = ISSUESCOPE_WEB_TEST_DIR;
  const std::string node = FindNode();
  ASSERT_TRUE(std::filesystem::exists(chromium))
      << "no Chromium at " << chromium
      << ": install Debian's packages `chromium chromium-driver` (or set ISSUESCOPE_CHROMIUM); "
         "run `ctest -LE browser` to skip browser tests";
  ASSERT_FALSE(node.empty()) << "node not found on PATH: install Debian's `nodejs npm`";
  ASSERT_TRUE(std::filesystem::exists(script_dir + "/node_modules/playwright-core"))
      << "playwright-core missing: run `npm ci --prefix " << script_dir << "`";

  WebClusterOptions options;
  auto cluster = WebCluster::Start(options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();

  const std::string artifacts = ISSUESCOPE_WEB_ARTIFACT_DIR;
  std::filesystem::create_directories(artifacts);
  const std::string log = (*cluster)->dir() + "/browser.log";
  auto run = Subprocess::Start({node, script_dir + "/browser_test.js", "--url",
                                (*cluster)->http_url(), "--phrase", options.plant_phrase,
                                "--expect", std::to_string(options.plant_count), "--artifacts",
                                artifacts, "--chromium", chromium},
                               log);
  ASSERT_TRUE(run.ok()) << run.status();
  int status = 0;
  const bool finished = (*run)->Wait(absl::Minutes(4), &status);
  if (!finished) (*run)->Stop();
  const std::string output = ReadTextFile(log);
  std::cout << output;
  ASSERT_TRUE(finished) << "browser test did not finish within 4 minutes";
  const bool passed = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!passed) (*cluster)->keep_dir();
  EXPECT_TRUE(passed) << "browser test failed; logs in " << (*cluster)->dir();
  EXPECT_NE(output.find("screenshot: " + artifacts + "/search.png"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(artifacts + "/search.png"));
}

}  // namespace
}  // namespace issuescope::testing

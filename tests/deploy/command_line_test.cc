// The issuescope command line (deploy/cli/command_line.h) parsed without running anything: each
// subcommand fills its options, the chosen command is recorded, and bad command lines are
// refused by the parser with the flag named.
#include "deploy/cli/command_line.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace issuescope::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Parse parses `args` (without the program name) into a fresh CommandLine; the parser's error
// message, if any, goes to *error.
CommandLine Parse(std::vector<std::string> args, std::string* error = nullptr) {
  CLI::App app{"issuescope"};
  CommandLine line;
  RegisterCommands(&app, &line);
  std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    if (error != nullptr) *error = e.what();
  }
  return line;
}

TEST(CommandLineTest, SearchFillsItsOptions) {
  const CommandLine line = Parse({"--log-level", "info", "search", "kv cache", "--data", "/d",
                                  "--explain", "--facets", "repo,label", "--limit", "5"});
  EXPECT_EQ(line.command, "search");
  EXPECT_EQ(line.log_level, "info");
  EXPECT_EQ(line.search.query, "kv cache");
  EXPECT_EQ(line.search.target.data_dir, "/d");
  EXPECT_TRUE(line.search.explain);
  EXPECT_EQ(line.search.limit, 5);
  EXPECT_THAT(line.search.facets, ElementsAre("repo", "label"));
}

TEST(CommandLineTest, CrawlKeepsItsGlobalFlags) {
  const CommandLine line = Parse({"crawl", "github:o/r", "gitlab:g/p", "--data", "/d",
                                  "--no-pull-requests", "--secondary-backoff-s", "5",
                                  "--parallel", "3"});
  EXPECT_EQ(line.command, "crawl");
  EXPECT_THAT(line.crawl.repos, ElementsAre("github:o/r", "gitlab:g/p"));
  EXPECT_TRUE(line.no_pull_requests);
  EXPECT_EQ(line.secondary_backoff_s, 5);
  EXPECT_EQ(line.crawl.parallel, 3);
}

TEST(CommandLineTest, AdminCommandsRecordTheirAction) {
  CommandLine line = Parse({"repos", "add", "github:o/r", "--coordinator", "h:1",
                            "--recrawl-interval-s", "60"});
  EXPECT_EQ(line.command, "admin");
  EXPECT_EQ(line.admin.action, "add");
  EXPECT_THAT(line.admin.args, ElementsAre("github:o/r"));
  EXPECT_EQ(line.admin.recrawl_interval_s, 60);
  line = Parse({"trigger", "--coordinator", "h:1", "--full"});
  EXPECT_EQ(line.admin.action, "trigger");
  EXPECT_TRUE(line.admin.full);
  line = Parse({"drain", "worker-3", "--coordinator", "h:1"});
  EXPECT_EQ(line.admin.action, "drain");
  EXPECT_THAT(line.admin.args, ElementsAre("worker-3"));
}

TEST(CommandLineTest, NestedCommandsAreNamed) {
  EXPECT_EQ(Parse({"taxonomy", "cv", "--data", "f.jsonl", "--folds", "3"}).command, "tax_cv");
  EXPECT_EQ(Parse({"taxonomy", "train", "--data", "f", "--out", "m"}).command, "tax_train");
  EXPECT_EQ(Parse({"study", "report", "--sample", "S"}).command, "study_report");
  EXPECT_EQ(Parse({"export", "is:open", "--format", "csv"}).export_options.format, "csv");
  EXPECT_EQ(Parse({"up", "--demo", "--workers", "2"}).up.workers, 2);
}

TEST(CommandLineTest, BadCommandLinesAreRefusedNamingTheFlag) {
  std::string error;
  Parse({"search", "--data", "/d"}, &error);
  EXPECT_THAT(error, HasSubstr("query"));
  error.clear();
  Parse({"crawl", "github:o/r", "--data", "/d", "--parallel", "0"}, &error);
  EXPECT_THAT(error, HasSubstr("--parallel"));
  error.clear();
  Parse({"export", "--format", "xml"}, &error);
  EXPECT_THAT(error, HasSubstr("--format"));
  error.clear();
  Parse({"search", "q", "--no-such-flag"}, &error);
  EXPECT_THAT(error, HasSubstr("--no-such-flag"));
  error.clear();
  const CommandLine none = Parse({}, &error);
  EXPECT_FALSE(error.empty());
  EXPECT_EQ(RunCommand(none).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace issuescope::cli

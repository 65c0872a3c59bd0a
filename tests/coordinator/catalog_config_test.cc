// Catalog config loader: a good file, and each kind of bad file with an error naming the
// line and the field.
#include "coordinator/catalog_config.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace issuescope::coordinator {
namespace {

using ::testing::HasSubstr;

TEST(CatalogConfigTest, GoodFile) {
  auto config = ParseCatalogConfig(R"(
[coordinator]
lease_ttl = "15s"            # durations as strings
heartbeat_interval = "500ms"
worker_timeout = "10s"
drain_feed_timeout = "2m"

[[repository]]
repo = "github:pytorch/pytorch"
api_url = "http://127.0.0.1:8080"
recrawl_interval = "1h"

[[repository]]
repo = "gitee:mindspore/mindspore"
include_pull_requests = false
)",
                                   "catalog.toml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->lease_ttl, absl::Seconds(15));
  EXPECT_EQ(config->heartbeat_interval, absl::Milliseconds(500));
  EXPECT_EQ(config->worker_timeout, absl::Seconds(10));
  EXPECT_FALSE(config->retry_failed_after.has_value());
  EXPECT_EQ(config->drain_feed_timeout, absl::Minutes(2));
  ASSERT_EQ(config->repositories.size(), 2u);
  const auto& torch = config->repositories[0];
  EXPECT_EQ(torch.repo().tracker(), v1::TRACKER_GITHUB);
  EXPECT_EQ(torch.repo().owner(), "pytorch");
  EXPECT_EQ(torch.repo().api_url(), "http://127.0.0.1:8080");
  EXPECT_EQ(torch.recrawl_interval_s(), 3600);
  EXPECT_TRUE(torch.include_pull_requests());
  const auto& ms = config->repositories[1];
  EXPECT_EQ(ms.repo().tracker(), v1::TRACKER_GITEE);
  EXPECT_EQ(ms.recrawl_interval_s(), 0);
  EXPECT_FALSE(ms.include_pull_requests());

  CoordinatorOptions options;
  config->ApplyTo(&options);
  EXPECT_EQ(options.heartbeat_interval, absl::Milliseconds(500));
  EXPECT_EQ(options.retry_failed_after, absl::Seconds(30));  // untouched default
  EXPECT_EQ(options.drain_feed_timeout, absl::Minutes(2));
}

TEST(CatalogConfigTest, FullRecrawlIntervalAndAccountReserve) {
  auto config = ParseCatalogConfig(R"(
[coordinator]
account_reserve = 250

[[repository]]
repo = "github:a/b"
recrawl_interval = "1h"
full_recrawl_interval = "168h"
)",
                                   "catalog.toml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->account_reserve, 250);
  ASSERT_EQ(config->repositories.size(), 1u);
  EXPECT_EQ(config->repositories[0].full_recrawl_interval_s(), 168 * 3600);
  CoordinatorOptions options;
  config->ApplyTo(&options);
  EXPECT_EQ(options.account_reserve, 250);

  auto bad = ParseCatalogConfig("[coordinator]\naccount_reserve = -3\n", "c.toml");
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("c.toml:2:19: [coordinator].account_reserve"));
  auto short_full = ParseCatalogConfig(
      "[[repository]]\nrepo = \"github:a/b\"\nfull_recrawl_interval = \"10ms\"\n", "c.toml");
  EXPECT_THAT(std::string(short_full.status().message()),
              HasSubstr("full_recrawl_interval: must be at least 1s"));
}

TEST(CatalogConfigTest, HomeGraceAllowsZero) {
  const std::pair<const char*, absl::Duration> good[] = {{"45s", absl::Seconds(45)},
                                                         {"0s", absl::ZeroDuration()}};
  for (const auto& [text, want] : good) {
    SCOPED_TRACE(text);
    auto config = ParseCatalogConfig(
        absl::StrCat("[coordinator]\nhome_grace = \"", text, "\"\n"), "c.toml");
    ASSERT_TRUE(config.ok()) << config.status();
    CoordinatorOptions options;
    EXPECT_FALSE(options.home_grace.has_value());  // default: 3 × worker_timeout at Open
    config->ApplyTo(&options);
    EXPECT_EQ(options.home_grace, want);
  }
  auto bad = ParseCatalogConfig("[coordinator]\nhome_grace = \"-5s\"\n", "c.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("c.toml:2:14: [coordinator].home_grace: '-5s' is not a duration of "
                        "zero or more"));
}

TEST(CatalogConfigTest, EmptyFileIsEmptyCatalog) {
  auto config = ParseCatalogConfig("", "empty.toml");
  ASSERT_TRUE(config.ok());
  EXPECT_TRUE(config->repositories.empty());
}

struct BadFile {
  const char* name;
  const char* text;
  const char* message;  // substring of the error, starting with file:line
};

TEST(CatalogConfigTest, BadFilesNameLineAndField) {
  const BadFile cases[] = {
      {"syntax error", "[coordinator]\nlease_ttl = \n", "c.toml:2:"},
      {"bad duration", "[coordinator]\nlease_ttl = \"15 parsecs\"\n",
       "c.toml:2:13: [coordinator].lease_ttl: '15 parsecs' is not a duration"},
      {"negative duration", "[coordinator]\n\nworker_timeout = \"-1s\"\n",
       "c.toml:3:18: [coordinator].worker_timeout: duration '-1s' must be positive"},
      {"duration as number", "[coordinator]\nheartbeat_interval = 2\n",
       "c.toml:2:22: [coordinator].heartbeat_interval: expected a string, got integer"},
      {"unknown coordinator key", "[coordinator]\nlease_tll = \"1s\"\n",
       "c.toml:2:13: [coordinator].lease_tll: unknown key"},
      {"unknown table", "[coordinatr]\n", "c.toml:1:1: coordinatr: unknown key or table"},
      {"missing repo", "[[repository]]\napi_url = \"http://x\"\n",
       "c.toml:1:1: [[repository]] #1 repo: missing"},
      {"repo without tracker", "[[repository]]\nrepo = \"pytorch/pytorch\"\n",
       "c.toml:2:8: [[repository]] #1 repo: repository 'pytorch/pytorch' has no tracker prefix"},
      {"unknown tracker", "[[repository]]\nrepo = \"svn:a/b\"\n",
       "c.toml:2:8: [[repository]] #1 repo: repository 'svn:a/b': unknown tracker 'svn'"},
      {"bad api url", "[[repository]]\nrepo = \"github:a/b\"\napi_url = \"127.0.0.1:80\"\n",
       "c.toml:3:11: [[repository]] #1 api_url: '127.0.0.1:80' must start with http://"},
      {"bad recrawl interval",
       "[[repository]]\nrepo = \"github:a/b\"\n[[repository]]\nrepo = \"github:c/d\"\n"
       "recrawl_interval = \"soon\"\n",
       "c.toml:5:20: [[repository]] #2 recrawl_interval: 'soon' is not a duration"},
      {"bad bool", "[[repository]]\nrepo = \"github:a/b\"\ninclude_pull_requests = \"yes\"\n",
       "c.toml:3:25: [[repository]] #1 include_pull_requests: expected true or false"},
      {"unknown repository key", "[[repository]]\nrepo = \"github:a/b\"\nbranch = \"main\"\n",
       "c.toml:3:10: [[repository]] #1 branch: unknown key"},
      {"duplicate repository",
       "[[repository]]\nrepo = \"github:a/b\"\n\n[[repository]]\nrepo = \"github:A/B\"\n",
       "c.toml:4:1: [[repository]] #2 repo: github:a/b is listed twice (first at line 1)"},
      {"repository not a table array", "repository = \"github:a/b\"\n",
       "c.toml:1:14: repository: expected [[repository]] tables"},
  };
  for (const auto& test : cases) {
    SCOPED_TRACE(test.name);
    auto config = ParseCatalogConfig(test.text, "c.toml");
    ASSERT_FALSE(config.ok());
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(config.status().message()), HasSubstr(test.message));
  }
}

TEST(CatalogConfigTest, LoadsFileAndNamesMissingFile) {
  auto path = std::filesystem::path(::testing::TempDir()) / "catalog_config_test.toml";
  {
    std::ofstream out(path);
    out << "[[repository]]\nrepo = \"github:a/b\"\nrecrawl_interval = 7\n";
  }
  auto config = LoadCatalogConfig(path.string());
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()),
              HasSubstr(path.string() + ":3:20: [[repository]] #1 recrawl_interval"));
  std::filesystem::remove(path);

  auto missing = LoadCatalogConfig("/no/such/catalog.toml");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("/no/such/catalog.toml"));
}

}  // namespace
}  // namespace issuescope::coordinator

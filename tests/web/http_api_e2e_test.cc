// End-to-end: the HTTP/JSON API of a real issuescope-search (--http-listen) over an index that
// `issuescope crawl` built from the tracker simulator. Checks what a script with curl sees:
// search JSON round trip, a clear 400 for a bad query, 404 for a missing issue, the issue view,
// and an export that streams exactly `total` JSONL lines.
#include <sys/wait.h>

#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "common/subprocess.h"
#include "tests/web/web_cluster.h"

namespace issuescope::testing {
namespace {

class HttpApiE2eTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto c = WebCluster::Start(options_);
    ASSERT_TRUE(c.ok()) << c.status();
    cluster_ = std::move(*c);
  }
  static void TearDownTestSuite() { cluster_.reset(); }
  void SetUp() override {
    ASSERT_NE(cluster_, nullptr) << "cluster did not start";
    client_ = std::make_unique<httplib::Client>("127.0.0.1", cluster_->http_port());
    client_->set_read_timeout(60, 0);
  }
  void TearDown() override {
    if (HasFailure() && cluster_) {
      cluster_->keep_dir();
      std::cerr << "logs kept in " << cluster_->dir() << "\n";
    }
  }

  nlohmann::json Json(const httplib::Result& res) {
    EXPECT_TRUE(res) << "no response";
    if (!res) return nullptr;
    auto j = nlohmann::json::parse(res->body, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << res->body;
    return j;
  }

  static inline WebClusterOptions options_;
  static inline std::unique_ptr<WebCluster> cluster_;
  std::unique_ptr<httplib::Client> client_;
};

// The crawl's progress lines count what the store holds: the final line of each repository
// (state "done") adds up to the store's totals that the crawl prints last.
TEST_F(HttpApiE2eTest, CrawlProgressCountsWhatIsStored) {
  std::ifstream in(cluster_->dir() + "/crawl.log");
  std::stringstream text;
  text << in.rdbuf();
  const std::string log = text.str();
  auto number = [](const std::string& digits) {
    int64_t n = 0;
    EXPECT_TRUE(absl::SimpleAtoi(absl::StrReplaceAll(digits, {{",", ""}}), &n)) << digits;
    return n;
  };
  std::map<std::string, std::pair<int64_t, int64_t>> last;  // slug -> issues, comments
  std::string store_issues, store_comments;
  const std::regex done(R"(^(\S+)\s+done\s.*issues ([\d,]+).*comments ([\d,]+))");
  const std::regex totals(R"(store holds ([\d,]+) issues and ([\d,]+) comments)");
  for (absl::string_view view : absl::StrSplit(log, '\n')) {
    const std::string line(view);
    std::smatch m;
    if (std::regex_search(line, m, done)) last[m[1]] = {number(m[2]), number(m[3])};
    if (std::regex_search(line, m, totals)) {
      store_issues = m[1];
      store_comments = m[2];
    }
  }
  ASSERT_FALSE(last.empty()) << log;
  ASSERT_FALSE(store_issues.empty()) << log;
  int64_t issues = 0, comments = 0;
  for (const auto& [slug, counts] : last) {
    issues += counts.first;
    comments += counts.second;
  }
  EXPECT_EQ(issues, number(store_issues)) << log;
  EXPECT_EQ(comments, number(store_comments)) << log;
  EXPECT_GT(comments, 0);
}

TEST_F(HttpApiE2eTest, SearchJsonRoundTrip) {
  nlohmann::json request = {{"query", "\"" + options_.plant_phrase + "\""}, {"pageSize", 100}};
  auto res = client_->Post("/v1/search", request.dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  auto body = Json(res);
  EXPECT_EQ(body["total"], std::to_string(options_.plant_count));
  ASSERT_EQ(body["hits"].size(), static_cast<size_t>(options_.plant_count));
  for (const auto& hit : body["hits"]) {
    EXPECT_NE(hit["snippet"].get<std::string>().find("<mark>"), std::string::npos) << hit;
    EXPECT_TRUE(hit["repoSlug"].get<std::string>().rfind("github:", 0) == 0) << hit;
  }

  // The GET form answers the same.
  auto get = client_->Get(("/v1/search?page_size=100&q=" +
                           httplib::detail::encode_query_param("\"" + options_.plant_phrase + "\""))
                              .c_str());
  ASSERT_TRUE(get && get->status == 200);
  EXPECT_EQ(Json(get)["total"], body["total"]);
}

// One export format: `issuescope export` (CLI, local index) writes the same bytes as
// GET /v1/export, in CSV and in JSONL.
TEST_F(HttpApiE2eTest, CliAndHttpExportsAreIdentical) {
  for (const std::string format : {"csv", "jsonl"}) {
    SCOPED_TRACE(format);
    const std::string out = cluster_->dir() + "/export." + format;
    auto cli = Subprocess::Start({BinPath("issuescope"), "export", "--data",
                                  cluster_->dir() + "/data", "is:open", "--format", format,
                                  "--out", out},
                                 cluster_->dir() + "/export-" + format + ".log");
    ASSERT_TRUE(cli.ok()) << cli.status();
    int status = 0;
    ASSERT_TRUE((*cli)->Wait(absl::Minutes(2), &status));
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    std::ifstream in(out, std::ios::binary);
    std::stringstream file;
    file << in.rdbuf();
    auto res = client_->Get(("/v1/export?q=is:open&format=" + format).c_str());
    ASSERT_TRUE(res && res->status == 200);
    EXPECT_FALSE(res->body.empty());
    EXPECT_EQ(file.str(), res->body);
  }
}

TEST_F(HttpApiE2eTest, BadQueryIs400WithTheServersMessage) {
  auto res = client_->Get("/v1/search?q=%28crash");  // "(crash"
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  auto body = Json(res);
  EXPECT_EQ(body["code"], "INVALID_ARGUMENT");
  EXPECT_NE(body["message"].get<std::string>().find("unbalanced parenthesis"), std::string::npos)
      << body;
}

TEST_F(HttpApiE2eTest, IssueViewAndMissingIssue) {
  auto found = Json(client_->Get("/v1/search?page_size=1&q="));
  ASSERT_EQ(found["hits"].size(), 1u) << found;
  const std::string slug = found["hits"][0]["repoSlug"];  // github:owner/name
  const std::string path =
      absl::StrCat("/v1/issues/", absl::StrReplaceAll(slug, {{":", "/"}}), "/",
                   found["hits"][0]["number"].get<std::string>());
  auto res = client_->Get(path.c_str());
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << path << ": " << res->body;
  auto issue = Json(res);
  EXPECT_EQ(issue["issue"]["title"], found["hits"][0]["title"]);
  EXPECT_TRUE(issue["comments"].is_array());

  res = client_->Get(absl::StrCat("/v1/issues/", absl::StrReplaceAll(slug, {{":", "/"}}),
                                  "/987654321").c_str());
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404) << res->body;
  EXPECT_EQ(Json(res)["code"], "NOT_FOUND");
}

TEST_F(HttpApiE2eTest, ExportStreamsTotalJsonlLines) {
  auto search = Json(client_->Get("/v1/search?q=is%3Aopen"));
  const int64_t total = std::stoll(search["total"].get<std::string>());
  ASSERT_GT(total, 0);
  auto res = client_->Get("/v1/export?format=jsonl&q=is%3Aopen");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  std::vector<std::string> lines = absl::StrSplit(res->body, '\n', absl::SkipEmpty());
  EXPECT_EQ(static_cast<int64_t>(lines.size()), total);
  for (const std::string& line : lines) {
    auto hit = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(hit.is_discarded()) << line;
    EXPECT_EQ(hit["state"], "open") << line;
  }

  auto csv = client_->Get("/v1/export?format=csv&q=is%3Aopen");
  ASSERT_TRUE(csv && csv->status == 200);
  std::vector<std::string> rows = absl::StrSplit(csv->body, "\r\n", absl::SkipEmpty());
  EXPECT_GE(static_cast<int64_t>(rows.size()), total + 1);  // header + rows (bodies may wrap)
}

TEST_F(HttpApiE2eTest, StatusAndHealth) {
  auto status = Json(client_->Get("/v1/status"));
  auto everything = Json(client_->Get("/v1/search?q="));
  EXPECT_EQ(status["documents"], everything["total"]) << status;
  EXPECT_NE(status["documents"], "0") << status;
  // `issuescope crawl` records the tagger its tags were made with (the built-in taxonomy).
  EXPECT_EQ(status["tagger"].get<std::string>().rfind("llm-dl/1 ", 0), 0u) << status;
  auto health = client_->Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

}  // namespace
}  // namespace issuescope::testing

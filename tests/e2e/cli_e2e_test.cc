// End-to-end: the `issuescope` command line a lone researcher uses — one-machine crawl against
// the tracker simulator (real HTTP), search, show, incremental re-crawl, its clear errors, and
// queries to a search service over TLS with a client certificate.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/subprocess.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "tests/common/test_certificates.h"

namespace issuescope {
namespace {

constexpr char kPhrase[] = "marmoset quantile drift";
constexpr char kToken[] = "ghp_e2eSecretTokenValue0123456789";

std::string Bin(const std::string& name) { return std::string(ISSUESCOPE_BIN_DIR) + "/" + name; }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct RunResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = absl::StrCat(tmp ? tmp : "/tmp", "/issuescope-cli-XXXXXX");
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    auto sim = Subprocess::Start(
        {Bin("issuescope-simulator"), "--repos=2", "--issues-per-repo=250",
         "--comments-per-issue=2", "--seed=11", std::string("--plant-phrase=") + kPhrase,
         "--plant-count=4", "--port-file=" + dir_ + "/sim.port"},
        dir_ + "/sim.log");
    ASSERT_TRUE(sim.ok()) << sim.status();
    sim_ = std::move(*sim);
    auto port = WaitForPortFile(dir_ + "/sim.port", absl::Seconds(30), sim_.get());
    ASSERT_TRUE(port.ok()) << port.status();
    api_url_ = absl::StrCat("http://127.0.0.1:", *port);
    http_ = std::make_unique<httplib::Client>(api_url_);
    setenv("ISSUESCOPE_E2E_TOKEN", kToken, 1);
  }
  void TearDown() override {
    if (sim_) sim_->Stop();
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  RunResult Run(std::vector<std::string> args) {
    args.insert(args.begin(), Bin("issuescope"));
    const std::string log = absl::StrCat(dir_, "/run-", runs_++, ".log");
    RunResult r;
    auto proc = Subprocess::Start(args, log);
    EXPECT_TRUE(proc.ok()) << proc.status();
    if (!proc.ok()) return r;
    int status = 0;
    EXPECT_TRUE((*proc)->Wait(absl::Minutes(5), &status)) << "issuescope did not finish";
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.output = ReadFile(log);
    EXPECT_EQ(r.output.find(kToken), std::string::npos) << "token leaked into output";
    return r;
  }

  int64_t Requests() {
    auto res = http_->Get("/_sim/stats");
    EXPECT_TRUE(res && res->status == 200);
    return res ? nlohmann::json::parse(res->body).at("requests").get<int64_t>() : -1;
  }

  int64_t NotModified() {
    auto res = http_->Get("/_sim/stats");
    EXPECT_TRUE(res && res->status == 200);
    return res ? nlohmann::json::parse(res->body).at("not_modified").get<int64_t>() : -1;
  }

  std::vector<std::string> Repos() {
    auto res = http_->Get("/_sim/corpus");
    std::set<std::string> repos;
    for (const auto& e : nlohmann::json::parse(res->body)) repos.insert(e.at("repo").get<std::string>());
    std::vector<std::string> out;
    for (const std::string& r : repos) out.push_back("github:" + r);
    return out;
  }

  std::string dir_;
  std::string api_url_;
  std::unique_ptr<Subprocess> sim_;
  std::unique_ptr<httplib::Client> http_;
  int runs_ = 0;
};

TEST_F(CliTest, CrawlSearchShowAndRecrawl) {
  std::vector<std::string> crawl = {"crawl"};
  for (const std::string& r : Repos()) crawl.push_back(r);
  crawl.insert(crawl.end(), {"--data", dir_ + "/data", "--api-url", api_url_, "--token-env",
                             "ISSUESCOPE_E2E_TOKEN"});
  RunResult first = Run(crawl);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_NE(first.output.find("crawled 2 repositories"), std::string::npos) << first.output;

  // --json: one object per hit per line, with repo, number, title, state, score.
  RunResult found = Run({"search", "--data", dir_ + "/data", "--json", "--limit", "100",
                         absl::StrCat("\"", kPhrase, "\"")});
  ASSERT_EQ(found.exit_code, 0) << found.output;
  int lines = 0;
  std::string first_ref;
  for (absl::string_view line : absl::StrSplit(found.output, '\n', absl::SkipEmpty())) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) continue;  // log lines
    ++lines;
    for (const char* key : {"repo", "number", "title", "state", "score"}) {
      EXPECT_TRUE(j.contains(key)) << key << " missing in " << line;
    }
    if (first_ref.empty()) {
      first_ref = absl::StrCat(j["repo"].get<std::string>(), "#", j["number"].get<int64_t>());
    }
  }
  EXPECT_EQ(lines, 4);

  RunResult shown = Run({"show", "--data", dir_ + "/data", first_ref});
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_NE(shown.output.find(kPhrase), std::string::npos) << shown.output;

  // Re-running crawls incrementally: the rate-budget check, then per repository three
  // conditional requests (repository, issues, comments), all answered 304.
  const int64_t before = Requests();
  const int64_t not_modified_before = NotModified();
  RunResult second = Run(crawl);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_EQ(Requests() - before, 1 + 3 * 2);
  EXPECT_EQ(NotModified() - not_modified_before, 3 * 2);
  EXPECT_NE(second.output.find("rate budget"), std::string::npos) << second.output;

  // The token is in no file of the data directory.
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_ + "/data")) {
    if (!entry.is_regular_file()) continue;
    EXPECT_EQ(ReadFile(entry.path()).find(kToken), std::string::npos) << entry.path();
  }
}

// A GitLab project in a nested group (group/subgroup/project) is crawled, searched by its
// repository and shown by its reference, like any other.
TEST_F(CliTest, GitlabProjectInANestedGroup) {
  auto sim = Subprocess::Start({Bin("issuescope-simulator"), "--repo=gitlab:group/sub/project:40",
                                "--comments-per-issue=2", "--seed=3",
                                "--port-file=" + dir_ + "/gitlab.port"},
                               dir_ + "/gitlab-sim.log");
  ASSERT_TRUE(sim.ok()) << sim.status();
  auto port = WaitForPortFile(dir_ + "/gitlab.port", absl::Seconds(30), sim->get());
  ASSERT_TRUE(port.ok()) << port.status();
  const std::string api = absl::StrCat("http://127.0.0.1:", *port, "/api/v4");
  RunResult crawled = Run({"crawl", "gitlab:group/sub/project", "--data", dir_ + "/gl",
                           "--gitlab-api", api});
  (*sim)->Stop();
  ASSERT_EQ(crawled.exit_code, 0) << crawled.output;
  EXPECT_NE(crawled.output.find("store holds 40 issues"), std::string::npos) << crawled.output;
  RunResult found = Run({"search", "--data", dir_ + "/gl", "--json", "--limit", "100",
                         "repo:gitlab:group/sub/project"});
  ASSERT_EQ(found.exit_code, 0) << found.output;
  int hits = 0;
  for (absl::string_view line : absl::StrSplit(found.output, '\n', absl::SkipEmpty())) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded()) ++hits;
  }
  EXPECT_EQ(hits, 40);
  RunResult shown = Run({"show", "--data", dir_ + "/gl", "gitlab:group/sub/project#7"});
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_NE(shown.output.find("group/sub/project#7"), std::string::npos) << shown.output;
}

// The query commands reach a TLS search service with --tls-ca (and present --tls-cert/--tls-key
// to one that requires client certificates); without them they are refused.
TEST_F(CliTest, QueriesATlsSearchService) {
  if (!HasOpenssl()) GTEST_SKIP() << "no openssl command";
  auto certs = MakeTestCertificates(dir_ + "/pki");
  ASSERT_TRUE(certs.ok()) << certs.status();
  std::vector<std::string> crawl = {"crawl"};
  for (const std::string& r : Repos()) crawl.push_back(r);
  crawl.insert(crawl.end(), {"--data", dir_ + "/data", "--api-url", api_url_});
  RunResult crawled = Run(crawl);
  ASSERT_EQ(crawled.exit_code, 0) << crawled.output;
  auto search = Subprocess::Start(
      {Bin("issuescope-search"), "--listen=127.0.0.1:0", "--port-file=" + dir_ + "/search.port",
       "--index=" + dir_ + "/data/index", "--tls-cert=" + certs->server_cert,
       "--tls-key=" + certs->server_key, "--tls-client-ca=" + certs->ca},
      dir_ + "/search.log");
  ASSERT_TRUE(search.ok()) << search.status();
  auto port = WaitForPortFile(dir_ + "/search.port", absl::Seconds(30), search->get());
  ASSERT_TRUE(port.ok()) << port.status() << ReadFile(dir_ + "/search.log");
  const std::string server = absl::StrCat("127.0.0.1:", *port);
  const std::string phrase = absl::StrCat("\"", kPhrase, "\"");
  const std::vector<std::string> tls = {"--tls-ca", certs->ca, "--tls-cert", certs->client_cert,
                                        "--tls-key", certs->client_key};

  std::vector<std::string> args = {"export", "--server", server, phrase};
  args.insert(args.end(), tls.begin(), tls.end());
  RunResult exported = Run(args);
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  auto hits = [](const std::string& output) {  // JSON lines: one per hit
    int n = 0;
    for (absl::string_view line : absl::StrSplit(output, '\n')) n += absl::StartsWith(line, "{");
    return n;
  };
  EXPECT_EQ(hits(exported.output), 4) << exported.output;
  args = {"search", "--server", server, "--json", phrase};
  args.insert(args.end(), tls.begin(), tls.end());
  RunResult found = Run(args);
  ASSERT_EQ(found.exit_code, 0) << found.output;
  EXPECT_EQ(hits(found.output), 4) << found.output;

  RunResult plaintext = Run({"search", "--server", server, phrase});
  EXPECT_EQ(plaintext.exit_code, 1) << plaintext.output;
  EXPECT_EQ(hits(plaintext.output), 0) << plaintext.output;
  RunResult anonymous = Run({"search", "--server", server, "--tls-ca", certs->ca, phrase});
  EXPECT_EQ(anonymous.exit_code, 1) << "no client certificate: " << anonymous.output;
  RunResult missing = Run({"search", "--server", server, "--tls-ca", dir_ + "/none.pem", phrase});
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("--tls-ca " + dir_ + "/none.pem: cannot read"),
            std::string::npos)
      << missing.output;
  RunResult local = Run({"search", "--data", dir_ + "/data", "--tls-ca", certs->ca, phrase});
  EXPECT_EQ(local.exit_code, 2) << local.output;
  EXPECT_NE(local.output.find("--tls-ca needs --server"), std::string::npos) << local.output;
  EXPECT_EQ((*search)->Stop(), "exit 0");
}

struct ErrorCase {
  std::string name;
  std::vector<std::string> args;  // {DATA} and {API} are substituted
  int exit_code;
  std::string message;
};

TEST_F(CliTest, ClearErrors) {
  const std::vector<ErrorCase> cases = {
      {"unknown tracker", {"crawl", "gitbucket:o/r", "--data", "{DATA}"}, 2, "unknown tracker"},
      {"no prefix", {"crawl", "pytorch/pytorch", "--data", "{DATA}"}, 2, "no tracker prefix"},
      {"unreachable api",
       {"crawl", "github:o/r", "--data", "{DATA}", "--api-url", "http://127.0.0.1:1"},
       1, "cannot reach API URL"},
      {"file api url (issue 16)",
       {"crawl", "github:o/r", "--data", "{DATA}", "--api-url", "file:///etc"},
       2, "must start with http:// or https://"},
      {"unset token variable",
       {"crawl", "github:o/r", "--data", "{DATA}", "--api-url", "{API}", "--token-env",
        "ISSUESCOPE_NO_SUCH_VARIABLE"},
       2, "ISSUESCOPE_NO_SUCH_VARIABLE"},
      {"unwritable data dir",
       {"crawl", "github:o/r", "--data", "/proc/issuescope-data", "--api-url", "{API}"},
       1, "cannot create data directory"},
      {"search without index", {"search", "--data", "{DATA}-missing", "x"}, 1, "no index in"},
      {"bad issue reference", {"show", "--data", "{DATA}", "pytorch"}, 2, "OWNER/NAME#NUMBER"},
      // Usage errors exit 2 like the daemons', not with CLI11's own codes (issue 16, item 14).
      {"unknown flag", {"search", "--data", "{DATA}", "--no-such-flag", "x"}, 2, "--no-such-flag"},
      {"missing value", {"crawl", "github:o/r", "--data"}, 2, "--data"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<std::string> args;
    for (std::string a : c.args) {
      if (a.find("{DATA}") == 0) a = dir_ + "/err-data" + a.substr(6);
      if (a == "{API}") a = api_url_;
      args.push_back(a);
    }
    RunResult r = Run(args);
    EXPECT_EQ(r.exit_code, c.exit_code) << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << r.output;
    EXPECT_LE(std::count(r.output.begin(), r.output.end(), '\n'), 3) << r.output;
  }
}

}  // namespace
}  // namespace issuescope

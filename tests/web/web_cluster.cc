#include "tests/web/web_cluster.h"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "httplib.h"
#include "nlohmann/json.hpp"

namespace issuescope::testing {
namespace {

constexpr char kTokenVariable[] = "ISSUESCOPE_WEB_TEST_TOKEN";

// RepoSlugs lists the simulator's repositories as "github:owner/name".
absl::StatusOr<std::vector<std::string>> RepoSlugs(int port) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(30, 0);
  auto res = client.Get("/_sim/corpus");
  if (!res || res->status != 200) {
    return absl::UnavailableError("simulator did not answer GET /_sim/corpus");
  }
  auto corpus = nlohmann::json::parse(res->body, nullptr, false);
  if (!corpus.is_array()) return absl::InternalError("simulator corpus is not a JSON array");
  std::set<std::string> repos;
  for (const auto& entry : corpus) {
    if (entry.contains("repo") && entry["repo"].is_string()) {
      repos.insert("github:" + entry["repo"].get<std::string>());
    }
  }
  return std::vector<std::string>(repos.begin(), repos.end());
}

}  // namespace

std::string BinPath(const std::string& name) {
  return absl::StrCat(ISSUESCOPE_BIN_DIR, "/", name);
}


std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

absl::StatusOr<std::unique_ptr<WebCluster>> WebCluster::Start(const WebClusterOptions& options) {
  std::unique_ptr<WebCluster> c(new WebCluster());
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = absl::StrCat(tmp ? tmp : "/tmp", "/issuescope-web-XXXXXX");
  if (mkdtemp(tmpl.data()) == nullptr) return absl::InternalError("mkdtemp failed");
  c->dir_ = tmpl;

  auto sim = Subprocess::Start(
      {BinPath("issuescope-simulator"), absl::StrCat("--repos=", options.repos),
       absl::StrCat("--issues-per-repo=", options.issues_per_repo),
       absl::StrCat("--comments-per-issue=", options.comments_per_issue),
       absl::StrCat("--seed=", options.seed), "--plant-phrase=" + options.plant_phrase,
       absl::StrCat("--plant-count=", options.plant_count),
       "--port-file=" + c->dir_ + "/sim.port"},
      c->dir_ + "/sim.log");
  if (!sim.ok()) return sim.status();
  c->simulator_ = std::move(*sim);
  auto sim_port = WaitForPortFile(c->dir_ + "/sim.port", absl::Seconds(30), c->simulator_.get());
  if (!sim_port.ok()) return sim_port.status();
  auto repos = RepoSlugs(*sim_port);
  if (!repos.ok()) return repos.status();

  // One-machine crawl into DIR/data (store + index), as a researcher would run it.
  setenv(kTokenVariable, "web-test-token", 1);
  std::vector<std::string> crawl = {BinPath("issuescope"), "crawl"};
  crawl.insert(crawl.end(), repos->begin(), repos->end());
  crawl.insert(crawl.end(), {"--data", c->dir_ + "/data", "--api-url",
                             absl::StrCat("http://127.0.0.1:", *sim_port), "--token-env",
                             kTokenVariable});
  auto crawler = Subprocess::Start(crawl, c->dir_ + "/crawl.log");
  if (!crawler.ok()) return crawler.status();
  int status = 0;
  if (!(*crawler)->Wait(absl::Minutes(5), &status)) {
    return absl::DeadlineExceededError("issuescope crawl did not finish within 5 minutes");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(
        absl::StrCat("issuescope crawl failed: ", ReadTextFile(c->dir_ + "/crawl.log")));
  }

  auto search = Subprocess::Start(
      {BinPath("issuescope-search"), "--index", c->dir_ + "/data/index", "--listen",
       "127.0.0.1:0", "--port-file", c->dir_ + "/search.port", "--http-listen", "127.0.0.1:0",
       "--http-port-file", c->dir_ + "/http.port"},
      c->dir_ + "/search.log");
  if (!search.ok()) return search.status();
  c->search_ = std::move(*search);
  auto http_port = WaitForPortFile(c->dir_ + "/http.port", absl::Seconds(30), c->search_.get());
  if (!http_port.ok()) {
    return absl::UnavailableError(absl::StrCat(http_port.status().message(), "; search log: ",
                                               ReadTextFile(c->dir_ + "/search.log")));
  }
  c->http_port_ = *http_port;
  return c;
}

WebCluster::~WebCluster() {
  if (search_) search_->Stop();
  if (simulator_) simulator_->Stop();
  if (!keep_ && !dir_.empty()) std::filesystem::remove_all(dir_);
}

std::string WebCluster::http_url() const { return absl::StrCat("http://127.0.0.1:", http_port_); }

}  // namespace issuescope::testing

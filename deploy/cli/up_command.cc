#include "up_command.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>

#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "cluster.h"
#include "progress.h"
#include "query_commands.h"
#include "httplib.h"
#include "nlohmann/json.hpp"

namespace issuescope::cli {
namespace {

std::atomic<bool> g_interrupted{false};

void OnSignal(int) { g_interrupted.store(true); }

// SimulatorTotals reads issue and comment totals and the request count from the simulator.
struct SimulatorTotals {
  int64_t issues = 0;
  int64_t comments = 0;
  int64_t repos = 0;
  int64_t requests = 0;
  int64_t not_modified = 0;
  int64_t min_requests = 0;  // sum over repos of ceil(issues/100) + ceil(comments/100)
};

absl::StatusOr<SimulatorTotals> ReadSimulator(const std::string& url) {
  httplib::Client http(url);
  http.set_read_timeout(60, 0);
  auto corpus = http.Get("/_sim/corpus");
  auto stats = http.Get("/_sim/stats");
  if (!corpus || corpus->status != 200 || !stats || stats->status != 200) {
    return absl::UnavailableError("cannot read the simulator's corpus and stats");
  }
  SimulatorTotals t;
  try {
    std::map<std::string, std::pair<int64_t, int64_t>> per_repo;
    for (const auto& e : nlohmann::json::parse(corpus->body)) {
      auto& [issues, comments] = per_repo[e.at("repo").get<std::string>()];
      issues += 1;
      comments += e.at("comments").get<int64_t>();
    }
    for (const auto& [repo, counts] : per_repo) {
      t.issues += counts.first;
      t.comments += counts.second;
      t.min_requests += (counts.first + 99) / 100 + (counts.second + 99) / 100;
    }
    t.repos = static_cast<int64_t>(per_repo.size());
    auto s = nlohmann::json::parse(stats->body);
    t.requests = s.at("requests").get<int64_t>();
    t.not_modified = s.value("not_modified", 0);
  } catch (const nlohmann::json::exception& e) {
    return absl::DataLossError(absl::StrCat("simulator answered unexpected JSON: ", e.what()));
  }
  return t;
}

void ShowStatus(ProgressBoard& board, const v1::GetStatusResponse& status) {
  for (const v1::RepositoryStatus& r : status.repositories()) {
    RepoLine line;
    switch (r.phase()) {
      case v1::REPO_PHASE_PENDING: line.state = "pending"; break;
      case v1::REPO_PHASE_CRAWLING: line.state = "crawling"; break;
      case v1::REPO_PHASE_IDLE: line.state = "done"; break;
      case v1::REPO_PHASE_FAILED: line.state = "failed"; break;
      case v1::REPO_PHASE_GONE: line.state = "gone"; break;
      default: line.state = "?"; break;
    }
    line.counters = r.counters();
    line.issues_estimated = r.issues_estimated();
    line.error = r.last_error();
    if (!r.worker_id().empty()) line.state += "@" + r.worker_id();
    board.Update(r.repo_slug(), line);
  }
  board.Render(absl::Now());
}

absl::Status Crawl(Cluster& cluster, int64_t round, const char* what) {
  ProgressBoard board(stdout, isatty(STDOUT_FILENO) != 0);
  const absl::Time start = absl::Now();
  RETURN_IF_ERROR(cluster.WaitUntilCrawled(
      round, absl::Minutes(15), [&](const v1::GetStatusResponse& s) { ShowStatus(board, s); }));
  RETURN_IF_ERROR(cluster.WaitUntilIndexed(absl::Minutes(5)));
  absl::PrintF("%s finished and indexed in %.1fs\n", what,
               absl::ToDoubleSeconds(absl::Now() - start));
  return absl::OkStatus();
}

void ExampleSearches(Cluster& cluster) {
  const std::vector<std::string> queries = {
      "\"illegal memory access\"",
      "repo:vllm-project/vllm is:open kv cache",
      "label:bug out of memory",
      "author:" ,  // replaced below by the author of the first hit
      "内存",
  };
  QueryTarget target;
  target.server = cluster.search_address();
  std::string first_author;
  for (std::string q : queries) {
    if (q == "author:") {
      if (first_author.empty()) continue;
      q = "author:" + first_author + " is:closed";
    }
    v1::SearchRequest req;
    req.set_query(q);
    req.set_page_size(3);
    absl::PrintF("\n$ issuescope search --server %s '%s' --limit 3\n", cluster.search_address(), q);
    auto resp = SearchVia(target, req);
    if (!resp.ok()) {
      absl::PrintF("  error: %s\n", resp.status().message());
      continue;
    }
    if (first_author.empty() && resp->hits_size() > 0) first_author = resp->hits(0).author();
    PrintHits(*resp, false);
  }
}

absl::Status Mutate(const std::string& url) {
  httplib::Client http(url);
  auto res = http.Post("/_sim/mutate",
                       R"({"seed":7,"new_issues":12,"edited_issues":20,"new_comments":40,"closed_issues":5})",
                       "application/json");
  if (!res || res->status != 200) return absl::UnavailableError("simulator refused the mutation");
  auto j = nlohmann::json::parse(res->body, nullptr, false);
  absl::PrintF("\nThe simulated trackers changed: %d issues touched, %d new comments.\n",
               j.is_discarded() ? 0 : static_cast<int>(j["changed_issues"].size()),
               j.is_discarded() ? 0 : static_cast<int>(j["new_comment_ids"].size()));
  return absl::OkStatus();
}

}  // namespace

absl::Status RunUp(const UpCommandOptions& options) {
  ClusterOptions copts;
  copts.workers = options.workers;
  copts.log_level = options.log_level;
  bool remove_work_dir = false;
  copts.work_dir = options.work_dir;
  if (copts.work_dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = absl::StrCat(tmp ? tmp : "/tmp", "/issuescope-up-XXXXXX");
    if (mkdtemp(tmpl.data()) == nullptr) return absl::InternalError("cannot create a work dir");
    copts.work_dir = tmpl;
    remove_work_dir = options.demo;
  }
  copts.simulator_args = {absl::StrCat("--repos=", options.repos),
                          absl::StrCat("--issues-per-repo=", options.issues_per_repo),
                          absl::StrCat("--comments-per-issue=", options.comments_per_issue),
                          absl::StrCat("--seed=", options.seed)};
  absl::PrintF("Starting the cluster in %s (logs in %s/logs)\n", copts.work_dir, copts.work_dir);
  const absl::Time start = absl::Now();
  ASSIGN_OR_RETURN(auto cluster, Cluster::Start(copts));
  absl::PrintF(
      "  tracker simulator  %s\n  coordinator        %s\n  crawler workers    %d\n"
      "  search service     %s\n",
      cluster->simulator_url(), cluster->coordinator_address(), cluster->num_workers(),
      cluster->search_address());
  ASSIGN_OR_RETURN(std::vector<std::string> repos, cluster->AddSimulatorRepositories());
  absl::PrintF("Added %d repositories to the catalog; crawling...\n", static_cast<int>(repos.size()));
  RETURN_IF_ERROR(Crawl(*cluster, 1, "Full crawl"));
  ASSIGN_OR_RETURN(SimulatorTotals totals, ReadSimulator(cluster->simulator_url()));
  ASSIGN_OR_RETURN(IndexProgress index, cluster->IndexProgressNow());
  absl::PrintF(
      "\nCrawled %s issues and %s comments of %d repositories with %s requests "
      "(minimum possible %s + 1 repository lookup each); the index holds %s documents.\n",
      WithThousands(totals.issues), WithThousands(totals.comments), static_cast<int>(totals.repos),
      WithThousands(totals.requests), WithThousands(totals.min_requests),
      WithThousands(index.documents));
  ExampleSearches(*cluster);

  if (options.demo) {
    RETURN_IF_ERROR(Mutate(cluster->simulator_url()));
    const int64_t before = totals.requests;
    RETURN_IF_ERROR(cluster->TriggerCrawl(v1::CRAWL_MODE_INCREMENTAL));
    RETURN_IF_ERROR(Crawl(*cluster, 2, "Incremental re-crawl"));
    ASSIGN_OR_RETURN(SimulatorTotals after, ReadSimulator(cluster->simulator_url()));
    absl::PrintF("The re-crawl cost %d requests for %d repositories.\n",
                 static_cast<int>(after.requests - before), static_cast<int>(after.repos));
    RETURN_IF_ERROR(cluster->TriggerCrawl(v1::CRAWL_MODE_INCREMENTAL));
    RETURN_IF_ERROR(Crawl(*cluster, 3, "Re-crawl of unchanged trackers"));
    ASSIGN_OR_RETURN(SimulatorTotals last, ReadSimulator(cluster->simulator_url()));
    absl::PrintF("It cost %d requests, %d of them answered 304 Not Modified.\n",
                 static_cast<int>(last.requests - after.requests),
                 static_cast<int>(last.not_modified - after.not_modified));
    for (const std::string& line : cluster->Stop()) absl::PrintF("stopped %s\n", line);
    absl::PrintF("Demo finished in %.1fs.\n", absl::ToDoubleSeconds(absl::Now() - start));
    if (remove_work_dir) {
      std::error_code ec;
      std::filesystem::remove_all(copts.work_dir, ec);
    }
    return absl::OkStatus();
  }

  signal(SIGINT, OnSignal);
  signal(SIGTERM, OnSignal);
  absl::PrintF(
      "\nThe cluster is running. Try:\n  %s/issuescope search --server %s 'is:open oom'\n"
      "  %s/issuescope status --coordinator %s\nPress Ctrl-C to stop.\n",
      cluster->bin_dir(), cluster->search_address(), cluster->bin_dir(),
      cluster->coordinator_address());
  while (!g_interrupted.load()) absl::SleepFor(absl::Milliseconds(200));
  for (const std::string& line : cluster->Stop()) absl::PrintF("stopped %s\n", line);
  return absl::OkStatus();
}

}  // namespace issuescope::cli

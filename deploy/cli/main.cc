// issuescope: the command-line tool. Thin: parses flags, calls the commands in deploy/cli.
#include <cstdio>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "common/logging.h"
#include "deploy/cli/crawl_command.h"
#include "deploy/cli/query_commands.h"
#include "deploy/cli/status_command.h"
#include "deploy/cli/up_command.h"

namespace {

int Finish(const absl::Status& status) {
  if (status.ok()) return 0;
  std::fprintf(stderr, "issuescope: %s\n", std::string(status.message()).c_str());
  return status.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"issuescope: crawl, index and search issue trackers"};
  app.require_subcommand(1);
  std::string log_level = "warn";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error, off")
      ->capture_default_str();

  issuescope::cli::CrawlCommandOptions crawl;
  auto* crawl_cmd = app.add_subcommand(
      "crawl", "crawl repositories into a data directory (one-machine mode); re-run to update");
  crawl_cmd->add_option("repos", crawl.repos, "repositories, e.g. github:pytorch/pytorch")
      ->required();
  crawl_cmd->add_option("--data", crawl.data_dir, "data directory")->required();
  crawl_cmd->add_option("--api-url", crawl.api_url, "API base URL (default: the tracker's)");
  crawl_cmd->add_option("--token-env", crawl.token_env,
                        "name of the environment variable holding the API token");
  crawl_cmd->add_flag("--full", crawl.full, "ignore cursors and crawl everything again");
  crawl_cmd->add_option("--parallel", crawl.parallel, "repositories crawled at once")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  bool no_prs = false;
  crawl_cmd->add_flag("--no-pull-requests", no_prs, "drop pull requests");

  issuescope::cli::SearchCommandOptions search;
  auto* search_cmd = app.add_subcommand("search", "search the index (see docs/QUERY.md)");
  search_cmd->add_option("query", search.query, "query, e.g. '\"out of memory\" is:open'")
      ->required();
  search_cmd->add_option("--data", search.target.data_dir, "data directory of `crawl`");
  search_cmd->add_option("--server", search.target.server, "search service HOST:PORT");
  search_cmd->add_option("--limit", search.limit, "hits to print")->capture_default_str();
  search_cmd->add_flag("--json", search.json, "one JSON object per hit per line");

  issuescope::cli::ShowCommandOptions show;
  auto* show_cmd = app.add_subcommand("show", "show one issue with its comments");
  show_cmd->add_option("issue", show.issue, "OWNER/NAME#N or github:OWNER/NAME#N")->required();
  show_cmd->add_option("--data", show.target.data_dir, "data directory of `crawl`");
  show_cmd->add_option("--server", show.target.server, "search service HOST:PORT");
  show_cmd->add_flag("--json", show.json, "print JSON");

  issuescope::cli::UpCommandOptions up;
  auto* up_cmd = app.add_subcommand(
      "up", "run the cluster as separate processes on loopback, over the tracker simulator");
  up_cmd->add_flag("--demo", up.demo, "run the demo (crawl, search, re-crawl) and exit");
  up_cmd->add_option("--workdir", up.work_dir, "work directory (default: a temporary one)");
  up_cmd->add_option("--workers", up.workers, "crawler workers")->capture_default_str()
      ->check(CLI::Range(1, 32));
  up_cmd->add_option("--repos", up.repos, "simulated repositories")->capture_default_str()
      ->check(CLI::Range(1, 1000));
  up_cmd->add_option("--issues-per-repo", up.issues_per_repo, "simulated issues per repository")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000000));
  up_cmd->add_option("--comments-per-issue", up.comments_per_issue, "mean comments per issue")
      ->capture_default_str();
  up_cmd->add_option("--seed", up.seed, "simulator seed")->capture_default_str();

  issuescope::cli::StatusCommandOptions status;
  auto* status_cmd = app.add_subcommand("status", "show the coordinator's status");
  status_cmd->add_option("--coordinator", status.coordinator, "coordinator HOST:PORT")->required();
  status_cmd->add_flag("--json", status.json, "print JSON");
  status_cmd->add_flag("--watch", status.watch, "refresh every second");

  CLI11_PARSE(app, argc, argv);
  issuescope::InitLogging("issuescope", log_level);

  if (*crawl_cmd) {
    crawl.include_pull_requests = !no_prs;
    return Finish(issuescope::cli::RunCrawl(crawl));
  }
  if (*search_cmd) return Finish(issuescope::cli::RunSearch(search));
  if (*show_cmd) return Finish(issuescope::cli::RunShow(show));
  if (*up_cmd) {
    up.log_level = log_level;
    return Finish(issuescope::cli::RunUp(up));
  }
  if (*status_cmd) return Finish(issuescope::cli::RunStatus(status));
  return 2;
}

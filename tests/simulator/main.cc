// issuescope-simulator: serves a generated or loaded corpus over the GitHub REST v3, GitLab v4
// (/api/v4) and Gitee v5 (/api/v5) issue APIs, with fault injection (see README.md).
// Prints one "listening on" line to stdout, writes the bare port to --port-file (atomically, via
// rename), and stops cleanly on SIGTERM/SIGINT.
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "tests/simulator/tracker_simulator.h"

namespace {

// WritePortFile writes `port` to `path` through a temporary file and rename.
bool WritePortFile(const std::string& path, int port) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << port << "\n";
    if (!out.good()) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  issuescope::sim::SimulatorOptions options;
  std::string listen = "127.0.0.1:0";
  std::string port_file;
  std::string log_level = "info";
  std::vector<std::string> repo_specs, transfers, deletions;
  issuescope::sim::FaultConfig& f = options.faults;
  CLI::App app{"issuescope-simulator: GitHub, GitLab and Gitee issue APIs over a simulated corpus"};
  app.add_option("--listen", listen, "HOST:PORT to listen on (port 0 = ephemeral)");
  app.add_option("--port-file", port_file, "write the bound port to this file");
  app.add_option("--repos", options.repos, "number of generated repositories");
  app.add_option("--issues-per-repo", options.issues_per_repo, "issues per repository");
  app.add_option("--comments-per-issue", options.comments_per_issue, "mean comments per issue");
  app.add_option("--long-thread-fraction", options.long_thread_fraction,
                 "share of issues with a long thread (101..--long-thread-max comments)");
  app.add_option("--long-thread-max", options.long_thread_max, "most comments of a long thread");
  app.add_option("--pr-fraction", options.pr_fraction, "share of GitHub issues that are pull requests");
  app.add_option("--seed", options.seed, "generator seed");
  app.add_option("--corpus", options.corpus_file, "JSONL corpus to serve instead of generating");
  app.add_option("--plant-phrase", options.plant_phrase, "phrase to plant verbatim");
  app.add_option("--plant-count", options.plant_count, "number of issues carrying the phrase");
  app.add_option("--rate-limit", options.rate_limit, "requests per hour per token");
  app.add_option("--threads", options.threads, "HTTP worker threads");
  app.add_option("--repo", repo_specs,
                 "[github|gitlab|gitee:]OWNER/NAME[:ISSUES] (repeatable; replaces --repos)");
  app.add_option("--gitee-cjk-fraction", options.gitee_cjk_fraction,
                 "share of Gitee issues written in Chinese");
  app.add_option("--fault-seed", f.seed, "seed of every fault decision");
  app.add_option("--error-rate", f.error_rate, "fraction answered 500/502/503");
  app.add_option("--truncated-rate", f.truncated_rate, "fraction of 200s cut mid-body");
  app.add_option("--invalid-json-rate", f.invalid_json_rate, "fraction of 200s with invalid JSON");
  app.add_option("--slow-rate", f.slow_rate, "fraction of responses delayed by --slow-ms");
  app.add_option("--slow-ms", f.slow_ms, "delay of a slow response");
  app.add_option("--secondary-limit-rate", f.secondary_limit_rate,
                 "fraction answered as a secondary rate limit");
  app.add_option("--secondary-limit-status", f.secondary_limit_status,
                 "403 or 429 (GitHub, Gitee; GitLab always 429)");
  app.add_option("--with-retry-after", f.with_retry_after,
                 "fraction of secondary limits carrying Retry-After");
  app.add_option("--retry-after-s", f.retry_after_s, "the Retry-After value, seconds");
  app.add_option("--budget", f.budget, "requests per token per window (0 = --rate-limit)");
  app.add_option("--budget-window-s", f.budget_window_s, "budget window, seconds");
  app.add_option("--latency-ms", f.latency_ms, "delay added to every response");
  app.add_option("--deep-page-limit", f.deep_page_limit, "422 for page > N (0 = none)");
  app.add_flag("--no-graphql{false}", f.graphql, "answer POST /graphql with 404 (GitHub without GraphQL)");
  app.add_option("--graphql-budget", f.graphql_budget, "GraphQL points per token per window");
  app.add_option("--graphql-points-per-minute", f.graphql_points_per_minute,
                 "GraphQL secondary limit: points per token per minute");
  app.add_option("--graphql-timeout-nodes", f.graphql_timeout_nodes,
                 "GraphQL queries asking for more nodes time out with 502 (0 = never)");
  app.add_option("--transfer", transfers, "[tracker:]OWNER/NAME=OWNER/NAME (repeatable)");
  app.add_option("--delete", deletions, "[tracker:]OWNER/NAME#N[,N...] (repeatable)");
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error, off");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help and version exit 0; every usage error exits 2, as the daemons do (not CLI11's codes).
    return app.exit(e) == 0 ? 0 : 2;
  }
  issuescope::InitLogging("simulator", log_level);
  for (const std::string& spec : repo_specs) {
    auto parsed = issuescope::sim::ParseRepoSpec(spec);
    if (!parsed.ok()) {
      std::cerr << "--repo: " << parsed.status().message() << "\n";
      return 2;
    }
    options.repo_specs.push_back(*parsed);
  }
  for (const std::string& t : transfers) {
    auto parsed = issuescope::sim::ParseTransferFlag(t);
    if (!parsed.ok()) {
      std::cerr << parsed.status().message() << "\n";
      return 2;
    }
    options.actions.transfers.push_back(*parsed);
  }
  for (const std::string& d : deletions) {
    auto parsed = issuescope::sim::ParseDeleteFlag(d);
    if (!parsed.ok()) {
      std::cerr << parsed.status().message() << "\n";
      return 2;
    }
    options.actions.deletions.push_back(*parsed);
  }

  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || !absl::SimpleAtoi(listen.substr(colon + 1), &options.port)) {
    std::cerr << "--listen must be HOST:PORT, got '" << listen << "'\n";
    return 2;
  }
  options.listen_host = listen.substr(0, colon);

  // Block the stop signals before any thread starts, then wait for them on this thread.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto sim = issuescope::sim::TrackerSimulator::Start(options);
  if (!sim.ok()) {
    spdlog::error("cannot start simulator: {}", sim.status().ToString());
    return 1;
  }
  int64_t repos = 0, issues = 0, comments = 0;
  (*sim)->Counts(&repos, &issues, &comments);
  std::cout << "issuescope-simulator listening on " << (*sim)->base_url() << " (" << repos
            << " repositories, " << issues << " issues, " << comments << " comments)"
            << std::endl;
  if (!port_file.empty() && !WritePortFile(port_file, (*sim)->port())) {
    spdlog::error("cannot write port file {}", port_file);
    return 1;
  }
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  spdlog::info("signal {} received, stopping", signal_number);
  (*sim)->Stop();
  return 0;
}

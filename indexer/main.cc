// issuescope-indexer: follows crawler workers' change feeds into a Xapian index.
//
//   issuescope-indexer --index DIR (--coordinator HOST:PORT | --store HOST:PORT ...)
//                      [--commit-every N] [--commit-delay-ms MS] [--stats-interval S]
//                      [--log-level info]
//
// SIGTERM/SIGINT stop the followers, commit what is pending and exit 0. Bad flags, or an index
// that cannot be opened (e.g. locked by another indexer), print one line on stderr and exit 2.
#include <signal.h>

#include <cerrno>
#include <ctime>
#include <iostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/clock.h"
#include "common/logging.h"
#include "indexer/index_writer.h"
#include "indexer/indexer_daemon.h"

namespace {

constexpr char kProgram[] = "issuescope-indexer";

int Fail(const std::string& message) {
  std::cerr << kProgram << ": " << message << std::endl;
  return 2;
}

// LogStats writes the periodic status line: documents, and each store's position and lag.
void LogStats(const issuescope::indexer::IndexWriter& writer,
              const issuescope::indexer::IndexerDaemon& daemon) {
  std::vector<std::string> stores;
  for (const auto& f : daemon.Followers()) {
    const uint64_t lag = f.store_last_seq > f.position ? f.store_last_seq - f.position : 0;
    stores.push_back(absl::StrCat(f.address, " id=", f.store_id.empty() ? "?" : f.store_id,
                                  " seq=", f.position, " lag=", lag,
                                  f.caught_up ? " caught-up" : " behind",
                                  " reconnects=", f.reconnects));
  }
  spdlog::info("{} documents; {} stores: {}", writer.DocumentCount(), stores.size(),
               stores.empty() ? std::string("none yet") : absl::StrJoin(stores, "; "));
}

}  // namespace

int main(int argc, char** argv) {
  // Signals are taken synchronously by sigtimedwait below; block them before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  CLI::App app{"issuescope indexer: follows crawler workers' change feeds into a Xapian index",
               kProgram};
  std::string index_dir;
  std::string coordinator;
  std::vector<std::string> stores;
  int commit_every = 0;
  int commit_delay_ms = 1000;
  int stats_interval_s = 10;
  std::string log_level = "info";
  app.add_option("--index", index_dir, "Xapian index directory (created if missing)")
      ->required();
  auto* coordinator_opt = app.add_option("--coordinator", coordinator,
                                         "coordinator HOST:PORT to discover workers from");
  auto* store_opt =
      app.add_option("--store", stores, "store HOST:PORT to follow (repeatable)")->take_all();
  coordinator_opt->excludes(store_opt);
  app.add_option("--commit-every", commit_every,
                 "group commits of up to N events (0: commit every batch)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--commit-delay-ms", commit_delay_ms,
                 "with --commit-every, commit a group at the latest after MS milliseconds")
      ->check(CLI::PositiveNumber);
  app.add_option("--stats-interval", stats_interval_s, "seconds between status log lines")
      ->check(CLI::PositiveNumber);
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return Fail(e.what());
  }
  if (coordinator.empty() && stores.empty()) {
    return Fail("give --coordinator HOST:PORT or at least one --store HOST:PORT");
  }

  issuescope::InitLogging("indexer", log_level);
  issuescope::indexer::IndexWriterOptions writer_options;
  writer_options.max_pending_events = commit_every;
  writer_options.max_commit_delay = absl::Milliseconds(commit_delay_ms);
  auto writer = issuescope::indexer::IndexWriter::Open(index_dir, writer_options);
  if (!writer.ok()) return Fail(std::string(writer.status().message()));

  issuescope::indexer::IndexerDaemonOptions daemon_options;
  daemon_options.coordinator_address = coordinator;
  daemon_options.store_addresses = stores;
  issuescope::indexer::IndexerDaemon daemon(writer->get(), issuescope::Clock::Real(),
                                            daemon_options);
  if (absl::Status started = daemon.Start(); !started.ok()) {
    return Fail(std::string(started.message()));
  }
  spdlog::info("indexing into {} from {}", index_dir,
               coordinator.empty() ? absl::StrCat("stores ", absl::StrJoin(stores, ", "))
                                   : absl::StrCat("coordinator ", coordinator));

  const timespec interval{stats_interval_s, 0};
  while (true) {
    siginfo_t info;
    const int signo = sigtimedwait(&signals, &info, &interval);
    if (signo == SIGINT || signo == SIGTERM) {
      spdlog::info("received signal {}; stopping", signo);
      break;
    }
    if (signo < 0 && errno != EAGAIN && errno != EINTR) {
      spdlog::error("waiting for signals failed (errno {}); stopping", errno);
      break;
    }
    LogStats(**writer, daemon);
  }
  daemon.Stop();
  absl::Status flushed = (*writer)->Flush();
  if (!flushed.ok()) {
    spdlog::error("final commit failed: {}", flushed.ToString());
    return 1;
  }
  std::vector<std::string> positions;
  for (const auto& [store_id, seq] : (*writer)->Positions()) {
    positions.push_back(absl::StrCat(store_id, "=", seq));
  }
  spdlog::info("stopped; index committed with {} documents; positions: {}",
               (*writer)->DocumentCount(),
               positions.empty() ? std::string("none") : absl::StrJoin(positions, ", "));
  return 0;
}

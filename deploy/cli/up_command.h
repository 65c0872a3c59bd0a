// `issuescope up`: starts the whole cluster as separate processes on loopback (tracker simulator,
// coordinator, crawler workers, indexer, search service), adds the simulator's repositories,
// shows crawl progress, waits for the index, and prints example searches. With --demo it also
// mutates the simulated trackers, re-crawls incrementally to show what that costs, and exits;
// otherwise it keeps the cluster running until interrupted.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace issuescope::cli {

struct UpCommandOptions {
  // Run the demo script and exit. Default: keep running.
  bool demo = false;
  // Work directory; empty means a fresh directory under $TMPDIR (removed after --demo).
  std::string work_dir;
  int workers = 2;
  // Simulator corpus.
  int repos = 4;
  int issues_per_repo = 750;
  double comments_per_issue = 3.0;
  uint64_t seed = 42;
  std::string log_level = "warn";
};

absl::Status RunUp(const UpCommandOptions& options);

}  // namespace issuescope::cli

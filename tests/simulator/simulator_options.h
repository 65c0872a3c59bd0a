// SimulatorOptions: how a TrackerSimulator serves and what corpus it generates or loads.
// A plain value type; copy freely. ValidateOptions names the first bad field.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "common/clock.h"

namespace issuescope::sim {

struct SimulatorOptions {
  // listen_host is the address to bind. Default: "127.0.0.1".
  std::string listen_host = "127.0.0.1";
  // port to bind; 0 picks an ephemeral port (see TrackerSimulator::port()). Default: 0.
  int port = 0;
  // repos is the number of generated repositories (named after real DL projects, then suffixed
  // "-2", "-3", ...). Default: 3.
  int repos = 3;
  // issues_per_repo is the number of generated issues (pull requests included) per repository.
  // Default: 500.
  int issues_per_repo = 500;
  // comments_per_issue is the mean of the (Poisson) number of comments per issue. Default: 3.0.
  double comments_per_issue = 3.0;
  // seed makes generation deterministic: the same options give a byte-identical corpus.
  // Default: 1.
  uint64_t seed = 1;
  // corpus_file is a JSONL corpus (one issue per line); when set it replaces generation and the
  // generation fields above are ignored. Default: "" (generate).
  std::string corpus_file;
  // plant_phrase is planted verbatim in exactly plant_count issues (body or a comment); each of
  // its words also appears, never adjacent and never in phrase order, in a few other issues.
  // Its words must be outside the generator's vocabulary. Default: "" (nothing planted).
  std::string plant_phrase;
  // plant_count is how many issues carry plant_phrase. Default: 0.
  int plant_count = 0;
  // pr_fraction is the share of generated issues that are pull requests. Default: 0.15.
  double pr_fraction = 0.15;
  // cjk_fraction is the share of generated issues written in Chinese. Default: 0.1.
  double cjk_fraction = 0.1;
  // rate_limit is the number of API requests per hour of simulator time per token (the
  // Authorization header value; requests without one share the "anonymous" budget).
  // Default: 5000.
  int64_t rate_limit = 5000;
  // threads is the size of the HTTP worker pool. Default: 8.
  int threads = 8;
  // clock is the time seam: simulator time advances with it. Not owned; must outlive the
  // simulator. Default: nullptr (the real clock).
  Clock* clock = nullptr;
};

// ValidateOptions returns INVALID_ARGUMENT naming the first out-of-range field.
absl::Status ValidateOptions(const SimulatorOptions& options);

}  // namespace issuescope::sim

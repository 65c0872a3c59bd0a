// `issuescope status`: the coordinator's view of every repository and worker, as a table or
// JSON (protobuf's JSON mapping of GetStatusResponse); with --watch it refreshes until Ctrl-C.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace issuescope::cli {

struct StatusCommandOptions {
  std::string coordinator;  // HOST:PORT
  bool json = false;
  bool watch = false;
};

absl::Status RunStatus(const StatusCommandOptions& options);

}  // namespace issuescope::cli

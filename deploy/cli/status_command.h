// The coordinator's client commands of the CLI. `issuescope status`: every repository (state,
// progress bar of issues fetched against the estimate, comments, requests, request rate, ETA,
// last error; paused and gone ones marked), every worker (alive/draining/dead, leases, assigned
// load), every account's shared rate budget and a "tokens" table (account, tracker, token
// fingerprint, worker, remaining/limit, reset as "in 12m"; never a token) — as text or JSON (protobuf's JSON mapping of
// GetStatusResponse); with --watch it redraws every second until Ctrl-C. The admin commands
// (`issuescope repos add|remove|pause|resume`, `issuescope trigger`, `issuescope drain`) call the
// admin RPCs.
//
// Connection: --coordinator HOST:PORT; --tls-ca FILE connects over TLS trusting that PEM CA (or
// self-signed certificate); --token-env VAR sends "authorization: Bearer $VAR" (the token is
// read from the environment, never from a flag, and never printed); without --token-env, the
// admin token in $ISSUESCOPE_ADMIN_TOKEN when that is set (`issuescope up` makes one per cluster).
//
// Thread-compatible: each Run* call is self-contained.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/grpc_channel.h"
#include "issuescope/v1/coordinator.pb.h"

namespace issuescope::cli {

// kDefaultAdminTokenEnv is the environment variable of the admin token when no --token-env is
// given, and the one `issuescope up` sets for its cluster.
inline constexpr char kDefaultAdminTokenEnv[] = "ISSUESCOPE_ADMIN_TOKEN";
// kDefaultClusterTokenEnv is the environment variable of the cluster token `issuescope up` sets.
inline constexpr char kDefaultClusterTokenEnv[] = "ISSUESCOPE_CLUSTER_TOKEN";

// CoordinatorTarget says how to reach the coordinator.
struct CoordinatorTarget {
  std::string coordinator;  // HOST:PORT
  std::string token_env;    // environment variable holding the admin token ("": none)
  // TLS: the CA to trust ("": plaintext) and the client certificate presented to a
  // coordinator that requires one (its --tls-client-ca).
  ClientTlsFiles tls;
};

// StatusCommandOptions are the flags of `issuescope status`.
struct StatusCommandOptions {
  std::string coordinator;  // HOST:PORT
  std::string token_env;    // as CoordinatorTarget::token_env
  ClientTlsFiles tls;       // as CoordinatorTarget::tls
  bool json = false;
  bool watch = false;
};

// RunStatus prints the coordinator's status (see the file comment).
absl::Status RunStatus(const StatusCommandOptions& options);

// FormatStatus renders a status as the text `issuescope status` prints (without --watch).
std::string FormatStatus(const v1::GetStatusResponse& status, absl::Time now);

// AdminCommandOptions are the flags of the admin commands.
struct AdminCommandOptions {
  CoordinatorTarget target;
  // "add", "remove", "pause", "resume", "trigger" or "drain".
  std::string action;
  // Repositories (TRACKER:OWNER/NAME) for add/remove/pause/resume/trigger (none: all, except
  // for add and remove), or the worker id for drain.
  std::vector<std::string> args;
  // add: API base URL, recrawl intervals in seconds, pull requests.
  std::string api_url;
  int64_t recrawl_interval_s = 0;
  int64_t full_recrawl_interval_s = 0;
  bool include_pull_requests = true;
  // trigger: a full crawl instead of an incremental one.
  bool full = false;
};

// RunAdmin performs one admin action and prints its result, one line per repository.
absl::Status RunAdmin(const AdminCommandOptions& options);

}  // namespace issuescope::cli

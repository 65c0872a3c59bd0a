// CoordinatorFlags: the command line of issuescope-coordinator (coordinator/main.cc) as one
// value: each flag's default, Register (the flags on a CLI11 app, with the checks CLI11 can make)
// and Build (what the flags stand for: the options, from the --config file's [coordinator] table
// with the flags overriding it, its catalog, the credentials read from the environment, the TLS
// files), with the checks that need more than one flag. The main only composes.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "common/tls.h"
#include "catalog_config.h"
#include "coordinator/coordinator_core.h"
#include "coordinator/coordinator_service.h"

namespace CLI {
class App;
}

namespace issuescope::coordinator {

// CoordinatorSetup is what CoordinatorFlags::Build makes.
struct CoordinatorSetup {
  CoordinatorOptions options;
  CatalogConfig config;  // repositories added at start (empty without --config)
  AccessOptions access;
  ServerTlsFiles tls;
};

struct CoordinatorFlags {
  std::string listen = "127.0.0.1:50050";
  std::string port_file;
  std::string data;    // required
  std::string config;  // a TOML file (docs/CONFIG.md), optional
  // Overrides of the config; 0 (or -1 where 0 means something) keeps the config's value.
  int64_t lease_ttl_ms = 0;
  int64_t heartbeat_ms = 0;
  int64_t worker_timeout_ms = 0;
  int64_t home_grace_ms = -1;
  int64_t drain_feed_timeout_ms = 0;
  int64_t account_reserve = -1;
  std::string admin_token_env;
  std::string cluster_token_env;
  bool insecure_admin = false;
  bool insecure_cluster = false;
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  std::string metrics_listen;
  std::string metrics_port_file;
  std::string log_level = "info";

  // Register adds every flag to `app`, bound to these fields.
  void Register(CLI::App* app);
  // Build reads the config file and the tokens and applies the flags. Errors
  // (INVALID_ARGUMENT or the loader's, one line naming the file, flag or variable): a config
  // that does not load, a token variable unset or empty, the same token for admin and cluster,
  // and a --listen beyond loopback without a cluster token unless --insecure-cluster.
  absl::StatusOr<CoordinatorSetup> Build() const;
};

}  // namespace issuescope::coordinator

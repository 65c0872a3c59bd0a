#include "coordinator_flags.h"

#include <tuple>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "common/env_token.h"
#include "security.h"

namespace issuescope::coordinator {

void CoordinatorFlags::Register(CLI::App* app) {
  app->add_option("--listen", listen, "host:port to serve gRPC on (port 0 picks a free one)")
      ->capture_default_str();
  app->add_option("--port-file", port_file, "file to write the bound port to");
  app->add_option("--data", data, "directory of the coordinator's RocksDB state")->required();
  app->add_option("--config", config, "catalog config (TOML); its repositories are added")
      ->check(CLI::ExistingFile);
  app->add_option("--lease-ttl-ms", lease_ttl_ms, "lease TTL (overrides the config)")
      ->check(CLI::PositiveNumber);
  app->add_option("--heartbeat-ms", heartbeat_ms, "heartbeat interval (overrides the config)")
      ->check(CLI::PositiveNumber);
  app->add_option("--worker-timeout-ms", worker_timeout_ms,
                  "silence after which a worker is dead (overrides the config)")
      ->check(CLI::PositiveNumber);
  app->add_option("--home-grace-ms", home_grace_ms,
                  "how long a dead worker's repositories wait for it before moving to another "
                  "worker (a move costs a full crawl); 0: none (overrides the config; default "
                  "3 x the worker timeout)")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--drain-feed-timeout-ms", drain_feed_timeout_ms,
                  "how long a drained worker waits for the indexers to read its store's feed "
                  "before its repositories are crawled again elsewhere (default 600000)")
      ->check(CLI::PositiveNumber);
  app->add_option("--account-reserve", account_reserve,
                  "requests of an account's shared budget kept per running crawl (overrides the "
                  "config)")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--admin-token-env", admin_token_env,
                  "environment variable holding the admin token; admin calls need "
                  "'authorization: Bearer <token>' (without a token they are refused)");
  app->add_flag("--insecure-admin", insecure_admin,
                "accept admin calls without a token when no --admin-token-env is set (a trusted "
                "network only)");
  app->add_option("--cluster-token-env", cluster_token_env,
                  "environment variable holding the cluster token the workers and the indexer "
                  "send; their calls and GetStatus then need it (or the admin token)");
  app->add_flag("--insecure-cluster", insecure_cluster,
                "listen beyond loopback without a cluster token (a trusted network only)");
  app->add_option("--tls-cert", tls_cert, "PEM certificate chain: serve gRPC over TLS")
      ->check(CLI::ExistingFile);
  app->add_option("--tls-key", tls_key, "PEM private key of --tls-cert")
      ->check(CLI::ExistingFile);
  app->add_option("--tls-client-ca", tls_client_ca,
                  "PEM CA: accept only clients presenting a certificate it signed (gRPC and "
                  "metrics), and a worker's calls only when its certificate names its --id")
      ->check(CLI::ExistingFile);
  app->add_option("--metrics-listen", metrics_listen,
                  "HOST:PORT to serve Prometheus metrics on (GET /metrics; HTTPS with "
                  "--tls-cert/--tls-key when given); port 0 picks one");
  app->add_option("--metrics-port-file", metrics_port_file,
                  "file to write the bound metrics port to");
  app->add_option("--log-level", log_level, "trace, debug, info, warn, error, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}))
      ->capture_default_str();
}

absl::StatusOr<CoordinatorSetup> CoordinatorFlags::Build() const {
  CoordinatorSetup setup;
  CoordinatorOptions& options = setup.options;
  if (!config.empty()) {
    absl::StatusOr<CatalogConfig> loaded = LoadCatalogConfig(config);
    if (!loaded.ok()) return loaded.status();
    setup.config = *std::move(loaded);
    setup.config.ApplyTo(&options);
  }
  if (lease_ttl_ms > 0) options.lease_ttl = absl::Milliseconds(lease_ttl_ms);
  if (heartbeat_ms > 0) options.heartbeat_interval = absl::Milliseconds(heartbeat_ms);
  if (worker_timeout_ms > 0) options.worker_timeout = absl::Milliseconds(worker_timeout_ms);
  if (home_grace_ms >= 0) options.home_grace = absl::Milliseconds(home_grace_ms);
  if (drain_feed_timeout_ms > 0) {
    options.drain_feed_timeout = absl::Milliseconds(drain_feed_timeout_ms);
  }
  if (account_reserve >= 0) options.account_reserve = account_reserve;

  AccessOptions& access = setup.access;
  access.insecure_admin = insecure_admin;
  for (auto [var, flag, token] :
       {std::make_tuple(&admin_token_env, "--admin-token-env", &access.admin_token),
        std::make_tuple(&cluster_token_env, "--cluster-token-env", &access.cluster_token)}) {
    absl::StatusOr<std::string> read = TokenFromEnvironment(*var, flag);
    if (!read.ok()) return read.status();
    *token = *std::move(read);
  }
  if (!access.admin_token.empty() && access.admin_token == access.cluster_token) {
    return absl::InvalidArgumentError(
        "--admin-token-env and --cluster-token-env must hold different tokens: every worker "
        "holds the cluster token");
  }
  if (access.cluster_token.empty() && !insecure_cluster && !IsLoopbackListenAddress(listen)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--listen ", listen, " reaches beyond this host, and no --cluster-token-env is "
        "set: anyone who reaches the port could register a worker (and choose what the index "
        "reads) or take its leases. Set --cluster-token-env VAR here and on the workers and the "
        "indexer, or pass --insecure-cluster on a trusted network"));
  }
  setup.tls.cert = tls_cert;
  setup.tls.key = tls_key;
  setup.tls.client_ca = tls_client_ca;
  access.bind_worker_ids = !tls_client_ca.empty();
  return setup;
}

}  // namespace issuescope::coordinator

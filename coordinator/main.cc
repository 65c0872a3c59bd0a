// issuescope-coordinator: serves issuescope.v1.Coordinator over gRPC from a CoordinatorCore
// whose state lives in --data. Flags override the [coordinator] table of --config; the config's
// repositories are added to the catalog at start. --admin-token-env names the environment
// variable holding the admin token (never a flag value); --tls-cert/--tls-key serve TLS;
// --tls-client-ca requires client certificates and binds each worker's calls to the id its
// certificate names (coordinator/security.h); --metrics-listen serves Prometheus metrics at GET /metrics (over HTTPS with the same
// certificate when --tls-cert is given). Errors: one line on stderr, exit code 2.
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "common/env_token.h"
#include "common/grpc_server.h"
#include "common/clock.h"
#include "common/logging.h"
#include "common/subprocess.h"
#include "common/tls.h"
#include "coordinator/catalog_config.h"
#include "coordinator/coordinator_core.h"
#include "coordinator/coordinator_service.h"
#include "coordinator/metrics.h"
#include "coordinator/security.h"

namespace issuescope {
namespace {

using coordinator::CatalogConfig;
using coordinator::CoordinatorCore;
using coordinator::CoordinatorOptions;
using coordinator::CoordinatorService;
using coordinator::LoadCatalogConfig;
using coordinator::MetricsServer;

constexpr int kExitError = 2;

int Fail(const std::string& message) {
  std::cerr << "issuescope-coordinator: error: " << message << std::endl;
  return kExitError;
}

struct Flags {
  std::string listen = "127.0.0.1:50050";
  std::string port_file;
  std::string data;
  std::string config;
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
};

// Ticker calls CoordinatorCore::Tick every `period` until stopped.
class Ticker {
 public:
  Ticker(CoordinatorCore* core, absl::Duration period)
      : thread_([this, core, period] {
          std::unique_lock<std::mutex> lock(mu_);
          while (!stop_) {
            cv_.wait_for(lock, absl::ToChronoMilliseconds(period), [this] { return stop_; });
            if (stop_) break;
            lock.unlock();
            core->Tick();
            lock.lock();
          }
        }) {}
  ~Ticker() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

int Run(const Flags& flags) {
  CoordinatorOptions options;
  CatalogConfig config;
  if (!flags.config.empty()) {
    auto loaded = LoadCatalogConfig(flags.config);
    if (!loaded.ok()) return Fail(std::string(loaded.status().message()));
    config = std::move(*loaded);
    config.ApplyTo(&options);
  }
  if (flags.lease_ttl_ms > 0) options.lease_ttl = absl::Milliseconds(flags.lease_ttl_ms);
  if (flags.heartbeat_ms > 0) options.heartbeat_interval = absl::Milliseconds(flags.heartbeat_ms);
  if (flags.worker_timeout_ms > 0) {
    options.worker_timeout = absl::Milliseconds(flags.worker_timeout_ms);
  }
  if (flags.home_grace_ms >= 0) options.home_grace = absl::Milliseconds(flags.home_grace_ms);
  if (flags.drain_feed_timeout_ms > 0) {
    options.drain_feed_timeout = absl::Milliseconds(flags.drain_feed_timeout_ms);
  }
  if (flags.account_reserve >= 0) options.account_reserve = flags.account_reserve;
  coordinator::AccessOptions access;
  access.insecure_admin = flags.insecure_admin;
  for (auto [var, flag, token] : {std::make_tuple(&flags.admin_token_env, "--admin-token-env",
                                                   &access.admin_token),
                                   std::make_tuple(&flags.cluster_token_env,
                                                   "--cluster-token-env", &access.cluster_token)}) {
    auto read = TokenFromEnvironment(*var, flag);
    if (!read.ok()) return Fail(std::string(read.status().message()));
    *token = std::move(*read);
  }
  if (!access.admin_token.empty() && access.admin_token == access.cluster_token) {
    return Fail("--admin-token-env and --cluster-token-env must hold different tokens: every "
                "worker holds the cluster token");
  }
  if (access.cluster_token.empty() && !flags.insecure_cluster &&
      !coordinator::IsLoopbackListenAddress(flags.listen)) {
    return Fail(absl::StrCat(
        "--listen ", flags.listen, " reaches beyond this host, and no --cluster-token-env is "
        "set: anyone who reaches the port could register a worker (and choose what the index "
        "reads) or take its leases. Set --cluster-token-env VAR here and on the workers and the "
        "indexer, or pass --insecure-cluster on a trusted network"));
  }
  ServerTlsFiles tls;
  tls.cert = flags.tls_cert;
  tls.key = flags.tls_key;
  tls.client_ca = flags.tls_client_ca;
  access.bind_worker_ids = !tls.client_ca.empty();
  auto credentials = ServerCredentialsFor(tls);
  if (!credentials.ok()) return Fail(std::string(credentials.status().message()));

  std::error_code ec;
  std::filesystem::create_directories(flags.data, ec);
  if (ec)
    return Fail(absl::StrCat("cannot create data directory ", flags.data, ": ", ec.message()));
  auto core = CoordinatorCore::Open(flags.data, options, Clock::Real());
  if (!core.ok()) return Fail(std::string(core.status().message()));

  if (!config.repositories.empty()) {
    v1::AddRepositoriesRequest add;
    for (const auto& spec : config.repositories) *add.add_repositories() = spec;
    auto added = (*core)->AddRepositories(add);
    if (!added.ok()) return Fail(std::string(added.status().message()));
  }

  // Signals are taken by sigwait below; block them before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  CoordinatorService service(core->get(), access);
  StandardServices standard({v1::Coordinator::service_full_name()});
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(flags.listen, *credentials, &port);
  builder.RegisterService(&service);
  standard.Register(&builder);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    return Fail(absl::StrCat("cannot listen on ", flags.listen));
  }
  standard.MarkServing(server.get());
  if (!flags.port_file.empty()) {
    absl::Status written = WritePortFile(flags.port_file, port);
    if (!written.ok()) {
      server->Shutdown();
      return Fail(std::string(written.message()));
    }
  }
  MetricsServer metrics(coordinator::CoreMetricsSnapshot(core->get()));
  if (!flags.metrics_listen.empty()) {
    auto metrics_port = metrics.Start(flags.metrics_listen, tls);
    absl::Status written =
        metrics_port.ok() ? absl::OkStatus() : metrics_port.status();
    if (written.ok() && !flags.metrics_port_file.empty()) {
      written = WritePortFile(flags.metrics_port_file, *metrics_port);
    }
    if (!written.ok()) {
      server->Shutdown();
      return Fail(std::string(written.message()));
    }
  }
  spdlog::info(
      "coordinator serving on port {} ({}, admin calls {}, worker calls {}{}; data {}, "
      "lease_ttl {}, worker_timeout {}, home_grace {})",
      port, tls.enabled() ? "TLS" : "plaintext",
      !access.admin_token.empty() ? "need the admin token"
      : access.insecure_admin     ? "open (--insecure-admin)"
                                  : "disabled (no admin token)",
      access.cluster_token.empty() ? "open" : "need the cluster token",
      access.bind_worker_ids ? " and a client certificate naming the worker" : "", flags.data,
      absl::FormatDuration(options.lease_ttl), absl::FormatDuration(options.worker_timeout),
      absl::FormatDuration((*core)->options().home_grace.value_or(absl::ZeroDuration())));

  {
    Ticker ticker(core->get(), absl::Milliseconds(250));
    int sig = 0;
    sigwait(&signals, &sig);
    spdlog::info("received signal {}, shutting down", sig);
    metrics.Stop();
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
    server->Wait();
  }
  spdlog::info("coordinator stopped");
  return 0;
}

}  // namespace
}  // namespace issuescope

int main(int argc, char** argv) {
  issuescope::Flags flags;
  CLI::App app{"issuescope coordinator: catalog, workers, leases and cursors"};
  app.add_option("--listen", flags.listen, "host:port to serve gRPC on (port 0 picks a free one)")
      ->capture_default_str();
  app.add_option("--port-file", flags.port_file, "file to write the bound port to");
  app.add_option("--data", flags.data, "directory of the coordinator's RocksDB state")->required();
  app.add_option("--config", flags.config, "catalog config (TOML); its repositories are added")
      ->check(CLI::ExistingFile);
  app.add_option("--lease-ttl-ms", flags.lease_ttl_ms, "lease TTL (overrides the config)")
      ->check(CLI::PositiveNumber);
  app.add_option("--heartbeat-ms", flags.heartbeat_ms, "heartbeat interval (overrides the config)")
      ->check(CLI::PositiveNumber);
  app.add_option("--worker-timeout-ms", flags.worker_timeout_ms,
                 "silence after which a worker is dead (overrides the config)")
      ->check(CLI::PositiveNumber);
  app.add_option("--home-grace-ms", flags.home_grace_ms,
                 "how long a dead worker's repositories wait for it before moving to another "
                 "worker (a move costs a full crawl); 0: none (overrides the config; default "
                 "3 x the worker timeout)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--drain-feed-timeout-ms", flags.drain_feed_timeout_ms,
                 "how long a drained worker waits for the indexers to read its store's feed "
                 "before its repositories are crawled again elsewhere (default 600000)")
      ->check(CLI::PositiveNumber);
  app.add_option("--account-reserve", flags.account_reserve,
                 "requests of an account's shared budget kept per running crawl (overrides the "
                 "config)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--admin-token-env", flags.admin_token_env,
                 "environment variable holding the admin token; admin calls need "
                 "'authorization: Bearer <token>' (without a token they are refused)");
  app.add_flag("--insecure-admin", flags.insecure_admin,
               "accept admin calls without a token when no --admin-token-env is set (a trusted "
               "network only)");
  app.add_option("--cluster-token-env", flags.cluster_token_env,
                 "environment variable holding the cluster token the workers and the indexer "
                 "send; their calls and GetStatus then need it (or the admin token)");
  app.add_flag("--insecure-cluster", flags.insecure_cluster,
               "listen beyond loopback without a cluster token (a trusted network only)");
  app.add_option("--tls-cert", flags.tls_cert, "PEM certificate chain: serve gRPC over TLS")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-key", flags.tls_key, "PEM private key of --tls-cert")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-client-ca", flags.tls_client_ca,
                 "PEM CA: accept only clients presenting a certificate it signed (gRPC and "
                 "metrics), and a worker's calls only when its certificate names its --id")
      ->check(CLI::ExistingFile);
  app.add_option("--metrics-listen", flags.metrics_listen,
                 "HOST:PORT to serve Prometheus metrics on (GET /metrics; HTTPS with "
                 "--tls-cert/--tls-key when given); port 0 picks one");
  app.add_option("--metrics-port-file", flags.metrics_port_file,
                 "file to write the bound metrics port to");
  app.add_option("--log-level", flags.log_level, "trace, debug, info, warn, error, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : issuescope::kExitError;
  }
  issuescope::InitLogging("coordinator", flags.log_level);
  return issuescope::Run(flags);
}

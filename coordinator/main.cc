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
#include "common/grpc_server.h"
#include "common/clock.h"
#include "common/logging.h"
#include "common/program_main.h"
#include "common/subprocess.h"
#include "common/tls.h"
#include "catalog_config.h"
#include "coordinator/coordinator_core.h"
#include "coordinator_flags.h"
#include "coordinator/coordinator_service.h"
#include "metrics.h"
#include "security.h"

namespace issuescope {
namespace {

using coordinator::CatalogConfig;
using coordinator::CoordinatorCore;
using coordinator::CoordinatorOptions;
using coordinator::CoordinatorService;
using coordinator::MetricsServer;

constexpr char kProgram[] = "issuescope-coordinator";

int Fail(const std::string& message) { return ExitWithError(kProgram, message); }

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

int Run(const coordinator::CoordinatorFlags& flags) {
  absl::StatusOr<coordinator::CoordinatorSetup> setup = flags.Build();
  if (!setup.ok()) return Fail(std::string(setup.status().message()));
  const CoordinatorOptions& options = setup->options;
  const CatalogConfig& config = setup->config;
  const coordinator::AccessOptions& access = setup->access;
  const ServerTlsFiles& tls = setup->tls;
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
  issuescope::coordinator::CoordinatorFlags flags;
  CLI::App app{"issuescope coordinator: catalog, workers, leases and cursors"};
  flags.Register(&app);
  if (std::optional<int> exit = issuescope::ParseCommandLine(app, argc, argv, "issuescope-coordinator")) {
    return *exit;
  }
  issuescope::InitLogging("coordinator", flags.log_level);
  return issuescope::Run(flags);
}

// issuescope-crawler: one crawler worker process. Opens its IssueStore, serves it over gRPC
// (with health checking and reflection), registers with the coordinator and crawls the leases it
// is given. SIGTERM/SIGINT leave gracefully: LeaveWorker, no new leases, running crawls finish
// within --drain-timeout-s (then they are cancelled and their leases released), exit 0. When the
// coordinator drains the worker (`issuescope drain`), it exits 0 once it holds no lease. Either
// way the store is served until the coordinator releases the worker, once the indexers have
// read its feed (at most --drain-feed-wait-s). Bad
// flags or an unusable data directory: one line on stderr, exit code 2.
//
// --tls-ca FILE talks to the coordinator over TLS, trusting that PEM CA (or self-signed
// certificate); without it the coordinator channel is plaintext. --tls-cert/--tls-key serve the
// store over TLS (--tls-client-ca: only to clients with a certificate that CA signed).
// --advertise-address HOST:PORT is the store address registered with the coordinator (what the
// indexer dials); by default the --listen host with the bound port, or for a wildcard listen
// host just ":PORT", completed by the coordinator with the host the worker connects from.
//
// Trackers: --github-api/--gitlab-api/--gitee-api set the API base URL used for repositories
// whose catalog entry names none; --token-env names the environment variable of the token for
// every tracker, --github-token-env/--gitlab-token-env/--gitee-token-env one tracker's own pool
// of tokens (repeatable, "[ACCOUNT=]ENVVAR", each variable a comma-separated token list; see
// crawler/token_pool.h). --gitee-budget counts Gitee's unannounced budget per token and hour.
// Bounds: --request-timeout-s, --max-body-mb, --max-pages-per-lease.
#include <signal.h>
#include <time.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/env_token.h"
#include "common/grpc_server.h"
#include "common/grpc_channel.h"
#include "common/logging.h"
#include "common/program_main.h"
#include "common/subprocess.h"
#include "common/tls.h"
#include "crawler/curl_transport.h"
#include "crawler/issue_store.h"
#include "store_service.h"
#include "crawler/worker.h"
#include "worker_flags.h"
#include "grpcpp/grpcpp.h"

namespace {

constexpr char kProgram[] = "issuescope-crawler";

int Fail(const std::string& message) { return issuescope::ExitWithError(kProgram, message); }

}  // namespace

int main(int argc, char** argv) {
  using namespace issuescope;
  // Block the stop signals before any thread exists; the main thread waits for them below.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  CLI::App app{"issuescope crawler worker"};
  crawler::WorkerFlags flags;
  flags.Register(&app);
  if (std::optional<int> exit = ParseCommandLine(app, argc, argv, kProgram)) return *exit;
  if (absl::Status valid = flags.Validate(); !valid.ok()) return Fail(std::string(valid.message()));
  auto store_credentials = ServerCredentialsFor(flags.store_tls);
  if (!store_credentials.ok()) return Fail(std::string(store_credentials.status().message()));
  // Bad --advertise-address or --listen values fail before anything starts.
  auto checked_address =
      crawler::StoreAddressToAdvertise(flags.listen, 1, flags.advertise_address);
  if (!checked_address.ok()) return Fail(std::string(checked_address.status().message()));
  auto cluster_token = TokenFromEnvironment(flags.cluster_token_env, "--cluster-token-env");
  if (!cluster_token.ok()) return Fail(std::string(cluster_token.status().message()));
  auto channel = CreateCoordinatorChannel(flags.coordinator, flags.coordinator_tls, *cluster_token);
  if (!channel.ok()) return Fail(std::string(channel.status().message()));
  InitLogging("crawler", flags.log_level);
  absl::StatusOr<crawler::WorkerOptions> built = flags.BuildOptions();
  if (!built.ok()) return Fail(std::string(built.status().message()));
  crawler::WorkerOptions options = *std::move(built);
  const std::string& id = flags.id;
  const std::string& listen = flags.listen;
  const std::string& data_dir = flags.data_dir;
  const std::string& coordinator = flags.coordinator;
  const ServerTlsFiles& store_tls = flags.store_tls;
  const int drain_timeout_s = flags.drain_timeout_s;

  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec) return Fail(absl::StrCat("cannot create data directory ", data_dir, ": ", ec.message()));
  auto store = crawler::IssueStore::Open((std::filesystem::path(data_dir) / "store").string());
  if (!store.ok()) {
    return Fail(absl::StrCat("cannot open store in ", data_dir, ": ", store.status().ToString()));
  }

  crawler::StoreService store_service(store->get());
  StandardServices standard({v1::IssueStore::service_full_name()});
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(listen, *store_credentials, &port);
  builder.RegisterService(&store_service);
  standard.Register(&builder);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) return Fail(absl::StrCat("cannot listen on ", listen));
  standard.MarkServing(server.get());
  if (!flags.port_file.empty()) {
    absl::Status s = WritePortFile(flags.port_file, port);
    if (!s.ok()) return Fail(absl::StrCat("cannot write --port-file: ", s.ToString()));
  }
  auto store_address = crawler::StoreAddressToAdvertise(listen, port, flags.advertise_address);
  if (!store_address.ok()) return Fail(std::string(store_address.status().message()));
  options.store_address = *std::move(store_address);
  spdlog::info("worker {} serving store {} on port {} ({}{}), advertised as {}; coordinator {}",
               id, (*store)->store_id(), port, store_tls.enabled() ? "TLS" : "plaintext",
               store_tls.client_ca.empty() ? "" : ", client certificates required",
               options.store_address, coordinator);

  crawler::CurlTransportOptions transport_options;
  transport_options.request_timeout = absl::Seconds(flags.request_timeout_s);
  transport_options.max_body_bytes = int64_t{flags.max_body_mb} << 20;
  crawler::CurlTransport transport(transport_options);
  crawler::CrawlerWorker worker(options, *channel, &transport, store->get(), Clock::Real());
  absl::Status started = worker.Start();
  if (!started.ok()) return Fail(started.ToString());

  // Wait for a stop signal, or for the coordinator to drain this worker.
  for (;;) {
    const timespec poll = {0, 200 * 1000 * 1000};
    const int sig = sigtimedwait(&stop_signals, nullptr, &poll);
    if (sig > 0) {
      spdlog::info("signal {} received; leaving (drain timeout {} s)", sig, drain_timeout_s);
      const int cancelled = worker.Leave();
      if (cancelled > 0) spdlog::info("{} crawls were cancelled at the drain timeout", cancelled);
      break;
    }
    if (worker.drained()) {
      worker.Stop();
      break;
    }
    if (absl::Status fatal = worker.fatal_error(); !fatal.ok()) {
      worker.Stop();
      store_service.Shutdown();
      server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
      server->Wait();
      return Fail(std::string(fatal.message()));
    }
  }
  // The store is served until the worker's crawls ended, so followers see every change.
  store_service.Shutdown();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  server->Wait();
  spdlog::info("worker {} exited cleanly", id);
  return 0;
}

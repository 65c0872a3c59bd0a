// issuescope-crawler: one crawler worker process. Opens its IssueStore, serves it over gRPC
// (with health checking and reflection), registers with the coordinator and crawls the leases it
// is given until SIGTERM/SIGINT. Bad flags or an unusable data directory: one line on stderr,
// exit code 2.
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/logging.h"
#include "common/subprocess.h"
#include "crawler/curl_transport.h"
#include "crawler/issue_store.h"
#include "crawler/store_service.h"
#include "crawler/worker.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"

namespace {

int Fail(const std::string& message) {
  std::cerr << "issuescope-crawler: " << message << std::endl;
  return 2;
}

bool ValidLevel(const std::string& level) {
  for (const char* l : {"trace", "debug", "info", "warn", "warning", "error", "critical", "off"}) {
    if (level == l) return true;
  }
  return false;
}

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
  std::string id = "worker-0", listen = "127.0.0.1:0", port_file, data_dir, coordinator;
  std::string token_env, log_level = "info";
  int capacity = 2;
  app.add_option("--id", id, "worker id ([A-Za-z0-9._-]{1,64})");
  app.add_option("--listen", listen, "host:port to serve the IssueStore on (port 0: any)");
  app.add_option("--port-file", port_file, "file to write the bound port to");
  app.add_option("--data", data_dir, "directory of the worker's RocksDB store")->required();
  app.add_option("--coordinator", coordinator, "coordinator host:port")->required();
  app.add_option("--capacity", capacity, "leases crawled at once");
  app.add_option("--token-env", token_env,
                 "name of an environment variable holding the tracker token");
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return Fail(e.what());
  }
  if (!ValidLevel(log_level)) return Fail(absl::StrCat("unknown --log-level '", log_level, "'"));
  if (capacity < 1 || capacity > 64) {
    return Fail(absl::StrCat("--capacity must be between 1 and 64, got ", capacity));
  }
  InitLogging("crawler", log_level);

  crawler::WorkerOptions options;
  options.worker_id = id;
  options.capacity = capacity;
  options.coordinator_address = coordinator;
  if (!token_env.empty()) {
    const char* token = std::getenv(token_env.c_str());
    if (token == nullptr || *token == '\0') {
      return Fail(absl::StrCat("environment variable ", token_env,
                               " (named by --token-env) is not set or empty"));
    }
    options.crawler.token = token;
  }

  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec) return Fail(absl::StrCat("cannot create data directory ", data_dir, ": ", ec.message()));
  auto store = crawler::IssueStore::Open((std::filesystem::path(data_dir) / "store").string());
  if (!store.ok()) {
    return Fail(absl::StrCat("cannot open store in ", data_dir, ": ", store.status().ToString()));
  }

  crawler::StoreService store_service(store->get());
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&store_service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) return Fail(absl::StrCat("cannot listen on ", listen));
  if (!port_file.empty()) {
    absl::Status s = WritePortFile(port_file, port);
    if (!s.ok()) return Fail(absl::StrCat("cannot write --port-file: ", s.ToString()));
  }
  options.store_address = absl::StrCat("127.0.0.1:", port);
  spdlog::info("worker {} serving store {} on port {}; coordinator {}", id,
               (*store)->store_id(), port, coordinator);

  crawler::CurlTransport transport;
  auto channel = grpc::CreateChannel(coordinator, grpc::InsecureChannelCredentials());
  crawler::CrawlerWorker worker(options, channel, &transport, store->get(), Clock::Real());
  absl::Status started = worker.Start();
  if (!started.ok()) return Fail(started.ToString());

  int sig = 0;
  sigwait(&stop_signals, &sig);
  spdlog::info("signal {} received; stopping", sig);
  store_service.Shutdown();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  worker.Stop();
  server->Wait();
  spdlog::info("worker {} exited cleanly", id);
  return 0;
}

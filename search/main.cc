// issuescope-search: serves issuescope.v1.Search over the Xapian index at --index.
//
//   issuescope-search [--listen 127.0.0.1:50051] --port-file /tmp/search.port --index /data/index
//       --http-listen 127.0.0.1:8080 [--facet-bound N] [--count-bound N] [--max-handles N]
//       [--split-parts N]
//
// --facet-bound, --count-bound, --max-handles and --split-parts set SearcherOptions
// (search/searcher.h): the matches facets are counted over before they are sampled, the
// matches counted exactly before a total is estimated, the calls served in parallel, and the
// cores one search may use while other handles are idle.
// With --http-listen it also serves the same API over HTTP/JSON and the web page (docs/WEB.md)
// through the server's in-process channel; --http-port-file receives that port.
// --tls-cert/--tls-key serve gRPC over TLS and HTTP as HTTPS (--http-tls-cert/--http-tls-key
// give the HTTP listener a certificate of its own); --tls-client-ca serves both only to clients
// presenting a certificate that CA signed.
// --replicate-from HOST:PORT keeps --index a read replica of an index host's index
// (search/replica_follower.h; --replicate-index, --replicate-shards, --replicate-interval), and
// health says NOT_SERVING until its first full copy.
// Starts even when the index does not exist yet (queries answer UNAVAILABLE "index not built
// yet" until it appears). Writes the bound port to --port-file (temp file + rename), serves
// health checking and reflection, and shuts down cleanly on SIGTERM or SIGINT. Errors: one
// line on stderr, exit status 2.
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <iostream>
#include <memory>
#include <string>
#include <utility>

#include "CLI/CLI.hpp"
#include "common/grpc_server.h"
#include "index_reader.h"
#include "common/index_layout.h"
#include "common/index_schema.h"
#include "common/logging.h"
#include "common/program_main.h"
#include "common/subprocess.h"
#include "common/tls.h"
#include "search_flags.h"
#include "search_service.h"
#include "search/replica_follower.h"
#include "search/searcher.h"
#include "search/web/http_gateway.h"

namespace {

// In-flight calls get this long to finish after SIGTERM/SIGINT before they are cancelled. gRPC
// 1.51 waits the whole grace while a client keeps its connection open, so it is kept short
// (a search is bounded by the 4 KB query and 1000-hit page).
constexpr auto kShutdownGrace = std::chrono::seconds(1);

constexpr char kProgram[] = "issuescope-search";

int Fail(const std::string& message) { return issuescope::ExitWithError(kProgram, message); }

}  // namespace

// WarnAboutTextScheme logs a warning when the index holds documents of another free-text scheme
// than this build's (common/index_text.h): its word queries would match nothing.
static void WarnAboutTextScheme(const std::string& index_dir) {
  try {
    Xapian::Database db = issuescope::search::OpenIndexForReading(index_dir);
    const std::string scheme = db.get_metadata(issuescope::index::kTextSchemeKey);
    if (db.get_doccount() > 0 && scheme == issuescope::index::kTextSchemeWithoutSortKeys) {
      spdlog::info("index {} was built with scheme '{}', without the sort keys of '{}': every "
                   "query answers as before; the indexer adds them in the background (offline: "
                   "issuescope reindex), and an index served by shard servers needs them to sort",
                   index_dir, scheme, issuescope::index::kTextScheme);
    } else if (db.get_doccount() > 0 && scheme != issuescope::index::kTextScheme) {
      spdlog::warn("index {} was built with free-text scheme '{}', this build searches '{}': "
                   "free-text queries miss its documents until they are rebuilt (the indexer does it in "
                   "the background; offline: issuescope reindex)",
                   index_dir, scheme.empty() ? "per-field" : scheme,
                   issuescope::index::kTextScheme);
    }
  } catch (const Xapian::Error&) {
    // No index yet: the indexer creates it in the current scheme.
  }
}

int main(int argc, char** argv) {
  CLI::App app{"issuescope search service: answers queries over the Xapian index"};
  issuescope::search::SearchFlags flags;
  flags.Register(&app);
  if (std::optional<int> exit = issuescope::ParseCommandLine(app, argc, argv, kProgram)) {
    return *exit;
  }
  std::pair<std::string, int> http_address;
  if (absl::Status valid = flags.Validate(&http_address); !valid.ok()) {
    return Fail(std::string(valid.message()));
  }
  issuescope::InitLogging("search", flags.log_level);
  auto credentials = issuescope::ServerCredentialsFor(flags.tls);
  if (!credentials.ok()) return Fail(std::string(credentials.status().message()));
  const std::string& index_dir = flags.index_dir;
  const std::string& listen = flags.listen;
  const issuescope::ServerTlsFiles& tls = flags.tls;

  // Block the shutdown signals in every thread (gRPC's inherit the mask); main waits for them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  WarnAboutTextScheme(index_dir);
  std::unique_ptr<issuescope::search::Searcher> searcher =
      issuescope::search::Searcher::ForPath(index_dir, flags.searcher);
  issuescope::search::SearchService service(searcher.get());
  // Set below when --replicate-from starts the follower; read by every call.
  std::atomic<issuescope::search::ReplicaFollower*> replica{nullptr};
  if (!flags.replicate_from.empty()) {
    service.SetReadiness([&replica, from = flags.replicate_from]() -> absl::Status {
      issuescope::search::ReplicaFollower* f = replica.load();
      if (f != nullptr && f->Ready()) return absl::OkStatus();
      return absl::UnavailableError("this search replica is still making its first copy of the "
                                    "index from " + from + "; try another replica");
    });
  }

  issuescope::StandardServices standard({issuescope::v1::Search::service_full_name()});
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(listen, *credentials, &port);
  builder.RegisterService(&service);
  standard.Register(&builder);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) return Fail("cannot listen on " + listen);

  // A replica serves once it holds a full copy; until then health says NOT_SERVING, so
  // clients and load balancers use the other replicas.
  std::unique_ptr<issuescope::search::ReplicaFollower> follower;
  std::thread ready_watch;
  std::atomic<bool> stopping{false};
  struct JoinOnExit {  // every return below ends the watch first
    std::atomic<bool>* stopping;
    std::thread* watch;
    ~JoinOnExit() {
      stopping->store(true);
      if (watch->joinable()) watch->join();
    }
  } join_watch{&stopping, &ready_watch};
  if (!flags.replicate_from.empty()) {
    standard.MarkServing(server.get(), false);
    follower = std::make_unique<issuescope::search::ReplicaFollower>(flags.replica);
    if (absl::Status s = follower->Start(); !s.ok()) {
      server->Shutdown();
      return Fail(std::string(s.message()));
    }
    replica.store(follower.get());
    ready_watch = std::thread([&] {
      while (!stopping.load() && !follower->Ready()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      if (!stopping.load()) standard.MarkServing(server.get());
    });
  } else {
    standard.MarkServing(server.get());
  }

  if (!flags.port_file.empty()) {
    if (absl::Status s = issuescope::WritePortFile(flags.port_file, port); !s.ok()) {
      server->Shutdown();
      return Fail(std::string(s.message()));
    }
  }
  spdlog::info("serving issuescope.v1.Search on port {} ({}{}) over index {}", port,
               tls.enabled() ? "TLS" : "plaintext",
               tls.client_ca.empty() ? "" : ", client certificates required", index_dir);

  // The HTTP gateway calls the service in-process, so HTTP and gRPC behave identically.
  std::unique_ptr<issuescope::search::web::HttpGateway> gateway;
  if (!flags.http_listen.empty()) {
    gateway = std::make_unique<issuescope::search::web::HttpGateway>(
        server->InProcessChannel(grpc::ChannelArguments()), flags.http);
    absl::Status s = gateway->Start(http_address.first, http_address.second);
    if (s.ok() && !flags.http_port_file.empty()) {
      s = issuescope::WritePortFile(flags.http_port_file, gateway->port());
    }
    if (!s.ok()) {
      gateway.reset();
      server->Shutdown();
      return Fail(std::string(s.message()));
    }
  }

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  spdlog::info("signal {} received; shutting down", signal_number);
  stopping.store(true);
  if (ready_watch.joinable()) ready_watch.join();
  standard.MarkServing(server.get(), false);
  if (follower != nullptr) follower->Stop();
  if (gateway != nullptr) gateway->Stop();
  server->Shutdown(std::chrono::system_clock::now() + kShutdownGrace);
  server->Wait();
  spdlog::info("stopped");
  return 0;
}

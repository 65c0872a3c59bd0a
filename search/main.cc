// issuescope-search: serves issuescope.v1.Search over the Xapian index at --index.
//
//   issuescope-search [--listen 127.0.0.1:50051] --port-file /tmp/search.port --index /data/index \
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
// Starts even when the index does not exist yet (queries answer UNAVAILABLE "index not built
// yet" until it appears). Writes the bound port to --port-file (temp file + rename), serves
// health checking and reflection, and shuts down cleanly on SIGTERM or SIGINT. Errors: one
// line on stderr, exit status 2.
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <utility>

#include "CLI/CLI.hpp"
#include "common/grpc_server.h"
#include "common/index_layout.h"
#include "common/index_schema.h"
#include "common/logging.h"
#include "common/subprocess.h"
#include "common/tls.h"
#include "search/search_service.h"
#include "search/searcher.h"
#include "search/web/http_gateway.h"

namespace {

// In-flight calls get this long to finish after SIGTERM/SIGINT before they are cancelled. gRPC
// 1.51 waits the whole grace while a client keeps its connection open, so it is kept short
// (a search is bounded by the 4 KB query and 1000-hit page).
constexpr auto kShutdownGrace = std::chrono::seconds(1);

int Fail(const std::string& message) {
  std::cerr << "issuescope-search: " << message << std::endl;
  return 2;
}

}  // namespace

// WarnAboutTextScheme logs a warning when the index holds documents of another free-text scheme
// than this build's (common/index_text.h): its word queries would match nothing.
static void WarnAboutTextScheme(const std::string& index_dir) {
  try {
    Xapian::Database db = issuescope::index::OpenIndexForReading(index_dir);
    const std::string scheme = db.get_metadata(issuescope::index::kTextSchemeKey);
    if (db.get_doccount() > 0 && scheme != issuescope::index::kTextScheme) {
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
  std::string listen = "127.0.0.1:50051";
  std::string port_file;
  std::string index_dir;
  std::string log_level = "info";
  std::string http_listen;
  std::string http_port_file;
  issuescope::search::SearcherOptions searcher_options;
  app.add_option("--listen", listen, "host:port to serve gRPC on (port 0 picks a free one)")
      ->capture_default_str();
  app.add_option("--port-file", port_file, "file to write the bound port to");
  app.add_option("--index", index_dir, "directory of the Xapian index")->required();
  app.add_option("--http-listen", http_listen,
                 "also serve HTTP/JSON and the web page on host:port (port 0 picks one); "
                 "off by default");
  app.add_option("--http-port-file", http_port_file, "file to write the bound HTTP port to");
  issuescope::search::web::HttpGatewayOptions http_options;
  issuescope::ServerTlsFiles tls;
  app.add_option("--tls-cert", tls.cert,
                 "PEM certificate chain: serve gRPC over TLS, and HTTP as HTTPS (with --tls-key)");
  app.add_option("--tls-key", tls.key, "PEM private key of --tls-cert");
  app.add_option("--tls-client-ca", tls.client_ca,
                 "PEM CA: serve gRPC and HTTP only to clients presenting a certificate it signed");
  issuescope::ServerTlsFiles& http_tls = http_options.tls;
  http_tls.cert_flag = "--http-tls-cert";
  http_tls.key_flag = "--http-tls-key";
  app.add_option("--http-tls-cert", http_tls.cert,
                 "PEM certificate chain of the HTTP listener (default: --tls-cert)");
  app.add_option("--http-tls-key", http_tls.key,
                 "PEM private key of --http-tls-cert (default: --tls-key)");
  app.add_option("--http-cors-origin", http_options.cors_origin,
                 "let pages of this origin (https://host[:port], or * for any) call the HTTP "
                 "API from a browser (CORS); off by default");
  app.add_option("--facet-bound", searcher_options.facet_bound,
                 "facets are counted over an evenly spread sample of about this many matches "
                 "beyond it (default 20000)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  app.add_option("--count-bound", searcher_options.count_bound,
                 "totals are exact up to this many matches and estimated beyond it "
                 "(total_exact false); 0 = always exact (default 20000)")
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 40));
  app.add_option("--max-handles", searcher_options.max_handles,
                 "index handles open at once (queries served in parallel); 0 = cores")
      ->check(CLI::Range(0, 256));
  app.add_option("--split-parts", searcher_options.split_parts,
                 "cores one search or aggregation may run on while index handles are idle "
                 "(a share of the shards each); 0 = cores, 1 = off")
      ->check(CLI::Range(0, 256));
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    return Fail(what.empty() ? "bad command line" : what);
  }
  if (const std::string& o = http_options.cors_origin;
      !o.empty() && o != "*" &&
      !(o.rfind("http://", 0) == 0 || o.rfind("https://", 0) == 0)) {
    return Fail("--http-cors-origin '" + o + "' is not an origin: expected * or "
                "http(s)://host[:port]");
  }
  if (http_options.cors_origin.find_first_of("/", 8) != std::string::npos ||
      http_options.cors_origin.find_first_of(" \r\n,") != std::string::npos) {
    return Fail("--http-cors-origin '" + http_options.cors_origin +
                "' is not an origin: no path, blanks or lists (one origin, or *)");
  }
  issuescope::InitLogging("search", log_level);
  std::pair<std::string, int> http_address;
  if (!http_listen.empty()) {
    auto parsed = issuescope::search::web::ParseHostPort(http_listen);
    if (!parsed.ok()) return Fail("--http-listen: " + std::string(parsed.status().message()));
    http_address = *parsed;
  } else if (!http_port_file.empty()) {
    return Fail("--http-port-file needs --http-listen");
  } else if (http_tls.enabled()) {
    return Fail("--http-tls-cert and --http-tls-key need --http-listen");
  }
  auto credentials = issuescope::ServerCredentialsFor(tls);
  if (!credentials.ok()) return Fail(std::string(credentials.status().message()));
  // The HTTP listener serves the same API: it takes the gRPC certificate unless it has its own,
  // and always the client CA, so HTTP is no way around either.
  if (!http_tls.enabled()) {
    http_tls.cert = tls.cert;
    http_tls.key = tls.key;
    http_tls.cert_flag = tls.cert_flag;
    http_tls.key_flag = tls.key_flag;
  }
  http_tls.client_ca = tls.client_ca;
  if (!http_listen.empty()) {
    if (absl::Status s = issuescope::CheckServerTlsFiles(http_tls); !s.ok()) {
      return Fail(std::string(s.message()));
    }
  }

  // Block the shutdown signals in every thread (gRPC's inherit the mask); main waits for them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  WarnAboutTextScheme(index_dir);
  std::unique_ptr<issuescope::search::Searcher> searcher =
      issuescope::search::Searcher::ForPath(index_dir, searcher_options);
  issuescope::search::SearchService service(searcher.get());

  issuescope::StandardServices standard({issuescope::v1::Search::service_full_name()});
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(listen, *credentials, &port);
  builder.RegisterService(&service);
  standard.Register(&builder);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) return Fail("cannot listen on " + listen);
  standard.MarkServing(server.get());

  if (!port_file.empty()) {
    if (absl::Status s = issuescope::WritePortFile(port_file, port); !s.ok()) {
      server->Shutdown();
      return Fail(std::string(s.message()));
    }
  }
  spdlog::info("serving issuescope.v1.Search on port {} ({}{}) over index {}", port,
               tls.enabled() ? "TLS" : "plaintext",
               tls.client_ca.empty() ? "" : ", client certificates required", index_dir);

  // The HTTP gateway calls the service in-process, so HTTP and gRPC behave identically.
  std::unique_ptr<issuescope::search::web::HttpGateway> gateway;
  if (!http_listen.empty()) {
    gateway = std::make_unique<issuescope::search::web::HttpGateway>(
        server->InProcessChannel(grpc::ChannelArguments()), http_options);
    absl::Status s = gateway->Start(http_address.first, http_address.second);
    if (s.ok() && !http_port_file.empty()) {
      s = issuescope::WritePortFile(http_port_file, gateway->port());
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
  if (gateway != nullptr) gateway->Stop();
  server->Shutdown(std::chrono::system_clock::now() + kShutdownGrace);
  server->Wait();
  spdlog::info("stopped");
  return 0;
}

#include "search_flags.h"

#include "CLI/CLI.hpp"

namespace issuescope::search {

void SearchFlags::Register(CLI::App* app) {
  app->add_option("--listen", listen, "host:port to serve gRPC on (port 0 picks a free one)")
      ->capture_default_str();
  app->add_option("--port-file", port_file, "file to write the bound port to");
  app->add_option("--index", index_dir, "directory of the Xapian index")->required();
  app->add_option("--http-listen", http_listen,
                  "also serve HTTP/JSON and the web page on host:port (port 0 picks one); "
                  "off by default");
  app->add_option("--http-port-file", http_port_file, "file to write the bound HTTP port to");
  app->add_option("--tls-cert", tls.cert,
                  "PEM certificate chain: serve gRPC over TLS, and HTTP as HTTPS (with --tls-key)");
  app->add_option("--tls-key", tls.key, "PEM private key of --tls-cert");
  app->add_option("--tls-client-ca", tls.client_ca,
                  "PEM CA: serve gRPC and HTTP only to clients presenting a certificate it signed");
  http.tls.cert_flag = "--http-tls-cert";
  http.tls.key_flag = "--http-tls-key";
  app->add_option("--http-tls-cert", http.tls.cert,
                  "PEM certificate chain of the HTTP listener (default: --tls-cert)");
  app->add_option("--http-tls-key", http.tls.key,
                  "PEM private key of --http-tls-cert (default: --tls-key)");
  app->add_option("--http-cors-origin", http.cors_origin,
                  "let pages of this origin (https://host[:port], or * for any) call the HTTP "
                  "API from a browser (CORS); off by default");
  app->add_option("--facet-bound", searcher.facet_bound,
                  "facets are counted over an evenly spread sample of about this many matches "
                  "beyond it (default 20000)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  app->add_option("--count-bound", searcher.count_bound,
                  "totals are exact up to this many matches and estimated beyond it "
                  "(total_exact false); 0 = always exact (default 20000)")
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 40));
  app->add_option("--max-handles", searcher.max_handles,
                  "index handles open at once (queries served in parallel); 0 = cores")
      ->check(CLI::Range(0, 256));
  app->add_option("--split-parts", searcher.split_parts,
                  "cores one search or aggregation may run on while index handles are idle "
                  "(a share of the shards each); 0 = cores, 1 = off")
      ->check(CLI::Range(0, 256));
  app->add_option_function<double>(
         "--shard-timeout",
         [this](double s) { searcher.shard_timeout_ms = static_cast<unsigned>(s * 1000); },
         "with an index of shard servers: seconds one exchange with a server may take before "
         "the search gives up on it and tries its alternate (a silent host holds a query this "
         "long; default 10)")
      ->check(CLI::Range(0.1, 600.0));
  app->add_option_function<double>(
         "--shard-connect-timeout",
         [this](double s) { searcher.shard_connect_timeout_ms = static_cast<unsigned>(s * 1000); },
         "with an index of shard servers: seconds to connect to a server before trying its "
         "alternate (default 2)")
      ->check(CLI::Range(0.1, 600.0));
  CLI::Option* from = app->add_option(
      "--replicate-from", replicate_from,
      "keep --index a read replica of an index host's index: HOST:PORT of its "
      "xapian-replicate-server (its indexer with --keep-changesets); NOT_SERVING until the "
      "first full copy");
  app->add_option("--replicate-index", replica.master_index,
                  "the index's path under the directory that server serves")
      ->capture_default_str()
      ->needs(from);
  app->add_option("--replicate-shards", replica.shards,
                  "the index's shards, as the indexer's --shards (1: one database)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 4096u))
      ->needs(from);
  app->add_option_function<double>(
         "--replicate-interval",
         [this](double s) { replica.interval = absl::Milliseconds(static_cast<int64_t>(s * 1000)); },
         "seconds between replication rounds (default 1)")
      ->check(CLI::Range(0.05, 3600.0))
      ->needs(from);
  app->add_option_function<double>(
         "--replicate-timeout",
         [this](double s) { replica.timeout = absl::Milliseconds(static_cast<int64_t>(s * 1000)); },
         "seconds one copy of one database may take before it is stopped and tried again (a "
         "full copy of a large shard takes a while; default 1800)")
      ->check(CLI::Range(10.0, 86400.0))
      ->needs(from);
  app->add_option("--log-level", log_level, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
}

absl::Status SearchFlags::Validate(std::pair<std::string, int>* http_address) {
  const std::string& o = http.cors_origin;
  if (!o.empty() && o != "*" && !(o.rfind("http://", 0) == 0 || o.rfind("https://", 0) == 0)) {
    return absl::InvalidArgumentError("--http-cors-origin '" + o +
                                      "' is not an origin: expected * or http(s)://host[:port]");
  }
  if (o.find_first_of("/", 8) != std::string::npos ||
      o.find_first_of(" \r\n,") != std::string::npos) {
    return absl::InvalidArgumentError("--http-cors-origin '" + o +
                                      "' is not an origin: no path, blanks or lists (one "
                                      "origin, or *)");
  }
  if (!http_listen.empty()) {
    auto parsed = web::ParseHostPort(http_listen);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError("--http-listen: " + std::string(parsed.status().message()));
    }
    *http_address = *parsed;
  } else if (!http_port_file.empty()) {
    return absl::InvalidArgumentError("--http-port-file needs --http-listen");
  } else if (http.tls.enabled()) {
    return absl::InvalidArgumentError("--http-tls-cert and --http-tls-key need --http-listen");
  }
  if (absl::Status s = CheckServerTlsFiles(tls); !s.ok()) return s;
  if (!replicate_from.empty()) {
    if (absl::Status s = ParseReplicaSource(replicate_from, &replica); !s.ok()) return s;
    replica.local_dir = index_dir;
  }
  if (!http.tls.enabled()) {
    http.tls.cert = tls.cert;
    http.tls.key = tls.key;
    http.tls.cert_flag = tls.cert_flag;
    http.tls.key_flag = tls.key_flag;
  }
  http.tls.client_ca = tls.client_ca;
  if (!http_listen.empty()) {
    if (absl::Status s = CheckServerTlsFiles(http.tls); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace issuescope::search

// SearchFlags: the command line of issuescope-search (search/main.cc) as one value: each flag's
// default, Register (the flags on a CLI11 app, with the checks CLI11 can make) and Validate
// (the CORS origin, the HTTP flags that need --http-listen, and the listeners' TLS files), which
// also completes the HTTP listener's TLS from the gRPC one. The main only composes.
#pragma once

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "common/tls.h"
#include "search/replica_follower.h"
#include "search/searcher.h"
#include "search/web/http_gateway.h"

namespace CLI {
class App;
}

namespace issuescope::search {

struct SearchFlags {
  std::string listen = "127.0.0.1:50051";
  std::string port_file;
  std::string index_dir;  // required
  std::string log_level = "info";
  std::string http_listen;  // "" : no HTTP listener
  std::string http_port_file;
  SearcherOptions searcher;
  web::HttpGatewayOptions http;  // its tls: --http-tls-cert/--http-tls-key
  ServerTlsFiles tls;            // --tls-cert/--tls-key/--tls-client-ca
  std::string replicate_from;    // "" : the index is local (the indexer writes it here)
  ReplicaOptions replica;        // --replicate-*; host, port and local_dir set by Validate

  // Register adds every flag to `app`, bound to these fields.
  void Register(CLI::App* app);
  // Validate checks what CLI11 cannot (INVALID_ARGUMENT naming the flag): the CORS origin is
  // "*" or one http(s) origin; --http-port-file and --http-tls-* need --http-listen, which must
  // be HOST:PORT; the TLS files load. Then the HTTP listener takes the gRPC certificate unless
  // it has its own, and always the client CA (so HTTP is no way around either), and
  // `http_address` receives the parsed --http-listen. With --replicate-from, `replica` gets its
  // host, port and local directory (--index).
  absl::Status Validate(std::pair<std::string, int>* http_address);
};

}  // namespace issuescope::search

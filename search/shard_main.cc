// issuescope-shard-server: serves shards of an index over Xapian's remote protocol to search
// services on other hosts, with issuescope's weighting scheme, posting sources and match spies
// registered (search/remote_registry.h), which xapian-tcpsrv lacks.
//
//   issuescope-shard-server --listen HOST:PORT --db DIR [--db DIR ...]
//       [--idle-timeout SECONDS] [--active-timeout SECONDS]
//
// Each --db is one shard database (an index's shard-NNN, or a replica of one); several are
// served as one remote database, interleaving document ids as a stub would. A search service
// reaches it through a `remote HOST:PORT` line of its index's stub. One forked process serves
// each connection (Xapian's TcpServer; search/xapian_remote_server.h). The port must be given
// (the server cannot report a port it picked). No authentication and no encryption: keep it on
// the cluster network. Errors: one line on stderr, exit status 2.
#include <signal.h>

#include <iostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "common/host_port.h"
#include "common/program_main.h"
#include "remote_registry.h"
#include "xapian_remote_server.h"

namespace {

constexpr char kProgram[] = "issuescope-shard-server";

}  // namespace

// ShardTcpServer restores SIGTERM's default action in each connection's process. Xapian's
// handler, inherited from the listening process (TcpServer::run installs it; on SIGTERM the
// whole process group gets one), calls exit() inside the handler: a connection process
// interrupted inside malloc, mid-request, then deadlocks on malloc's lock while exiting and is
// left behind, stuck, after the server was stopped (seen after test runs: single-threaded,
// SIGTERM blocked, waiting on a futex). With the default action it ends at once.
class ShardTcpServer final : public RemoteTcpServer {
 public:
  using RemoteTcpServer::RemoteTcpServer;
  void handle_one_connection(int socket) override {
    signal(SIGTERM, SIG_DFL);
    RemoteTcpServer::handle_one_connection(socket);
  }
};

int main(int argc, char** argv) {
  CLI::App app{"issuescope shard server: serves index shards over Xapian's remote protocol"};
  std::string listen;
  std::vector<std::string> dbs;
  double idle_timeout = 0;
  double active_timeout = 60;
  app.add_option("--listen", listen, "HOST:PORT to serve on (a port above 0)")->required();
  app.add_option("--db", dbs, "shard database directory (repeatable, in shard order)")
      ->required();
  app.add_option("--idle-timeout", idle_timeout,
                 "seconds a connection may wait between searches before it is closed; 0: never "
                 "(a search service keeps its connections open)")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  app.add_option("--active-timeout", active_timeout,
                 "seconds a connection may wait for the next message within one search")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  if (std::optional<int> exit = issuescope::ParseCommandLine(app, argc, argv, kProgram)) {
    return *exit;
  }
  if (absl::Status s = issuescope::search::CheckXapianVersion(); !s.ok()) {
    return issuescope::ExitWithError(kProgram, s.message());
  }
  absl::StatusOr<issuescope::HostPort> address = issuescope::SplitHostPort(listen);
  if (!address.ok() || address->port <= 0) {
    return issuescope::ExitWithError(kProgram,
                                     "--listen '" + listen + "' is not HOST:PORT with a port");
  }
  for (const std::string& db : dbs) {
    try {
      Xapian::Database check(db);  // a clear error now rather than per connection
    } catch (const Xapian::Error& e) {
      return issuescope::ExitWithError(kProgram, "--db " + db + ": " + e.get_msg());
    }
  }
  try {
    ShardTcpServer server(dbs, address->host, address->port, active_timeout, idle_timeout,
                           /*writable=*/false, /*verbose=*/false);
    server.set_registry(issuescope::search::RemoteRegistry());
    std::cerr << kProgram << ": serving " << dbs.size() << " database(s) on " << listen
              << std::endl;
    server.run();
  } catch (const Xapian::Error& e) {
    return issuescope::ExitWithError(kProgram, e.get_description());
  }
  return 0;
}

// Declarations of two classes libxapian 1.4 exports but installs no header for: the TCP server
// of Xapian's remote protocol, which `xapian-tcpsrv` (Debian's xapian-tools) is built from. The
// shard server (search/shard_main.cc) is the same program with issuescope's weighting
// scheme, posting sources and match spies registered (RemoteTcpServer::set_registry), which
// xapian-tcpsrv cannot run.
//
// These must match the library's classes exactly: the constructors and run() are the library's
// (called through the exported symbols), and the layout is fixed by the inline set_registry,
// which writes the registry member. Their layout is unchanged through the 1.4 series (1.4.0 to
// 1.4.32, the headers in xapian-core's net/ directory); the static_asserts below hold it to the
// size measured against Debian 12's libxapian 1.4.22, and CheckXapianVersion refuses any other
// series at run time. The per-connection server class (RemoteServer) is not used: its layout
// changed in 1.4.26.
//
// TcpServer::run accepts connections forever and serves each in a forked child (a fresh
// process, so nothing of one connection's state is shared with another); it installs handlers
// for SIGCHLD and for SIGTERM, on which the whole process group is terminated.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "xapian.h"

// Not in a namespace: these are the library's global classes.
class TcpServer {
  void operator=(const TcpServer&);
  TcpServer(const TcpServer&);
  int listen_socket;

 protected:
  bool verbose;
  int accept_connection();

 public:
  TcpServer(const std::string& host, int port, bool tcp_nodelay, bool verbose);
  virtual ~TcpServer();
  void run();
  void run_once();
  virtual void handle_one_connection(int socket) = 0;
};

class RemoteTcpServer : public TcpServer {
  void operator=(const RemoteTcpServer&);
  RemoteTcpServer(const RemoteTcpServer&);
  const std::vector<std::string> dbpaths;
  bool writable;
  double active_timeout;
  double idle_timeout;
  Xapian::Registry reg;
  int accept_connection();

 public:
  RemoteTcpServer(const std::vector<std::string>& dbpaths, const std::string& host, int port,
                  double active_timeout, double idle_timeout, bool writable, bool verbose);
  void set_registry(const Xapian::Registry& r) { reg = r; }
  void handle_one_connection(int socket) override;
};

static_assert(sizeof(TcpServer) == 16, "TcpServer layout differs from libxapian 1.4's");
static_assert(sizeof(RemoteTcpServer) == 72, "RemoteTcpServer layout differs from libxapian 1.4's");

namespace issuescope::search {

// CheckXapianVersion: FAILED_PRECONDITION unless the running libxapian is of the 1.4 series,
// whose server classes the declarations above match.
inline absl::Status CheckXapianVersion() {
  if (Xapian::major_version() != 1 || Xapian::minor_version() != 4) {
    return absl::FailedPreconditionError(
        std::string("the shard server needs libxapian 1.4 (its remote protocol server classes), "
                    "found ") +
        Xapian::version_string());
  }
  return absl::OkStatus();
}

}  // namespace issuescope::search

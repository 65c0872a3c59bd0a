// TLS of every issuescope listener: gRPC server credentials and HTTPS servers (cpp-httplib) from
// PEM files named on the command line. Every daemon builds its listeners here, so --tls-cert,
// --tls-key and --tls-client-ca mean the same on the coordinator, the crawler workers' stores and
// the search service; the client side (--tls-ca, --store-tls-ca) is common/grpc_channel.h.
//
// A listener given a certificate serves TLS only: a plaintext client's handshake fails. With a
// client CA it also requires every client to present a certificate that CA signed (mTLS).
//
// Pure functions; thread-safe.
#pragma once

#include <grpcpp/security/server_credentials.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace httplib {
class Server;
}

namespace issuescope {

// ServerTlsFiles names the PEM files of one listener's TLS, and the flags that named them (for
// errors: "--tls-cert /etc/x.pem: cannot read").
struct ServerTlsFiles {
  // PEM certificate chain the listener presents; "" (with `key` "") serves plaintext.
  // Default: "".
  std::string cert;
  // PEM private key of `cert`. Default: "".
  std::string key;
  // PEM CA certificate(s); when set, clients must present a certificate it signed (mTLS). Needs
  // `cert`. Default: "" (no client certificate asked for).
  std::string client_ca;
  // The flags naming the three files. Defaults: "--tls-cert", "--tls-key", "--tls-client-ca".
  std::string cert_flag = "--tls-cert";
  std::string key_flag = "--tls-key";
  std::string client_ca_flag = "--tls-client-ca";

  // enabled says whether the listener serves TLS.
  bool enabled() const { return !cert.empty() || !key.empty(); }
};

// CheckServerTlsFiles checks that the files are usable: both or neither of cert and key; a
// client CA only with them; every file readable, PEM of the right kind (a certificate, a private
// key), and the key the certificate's. INVALID_ARGUMENT naming the flag and the file otherwise.
absl::Status CheckServerTlsFiles(const ServerTlsFiles& files);

// ServerCredentialsFor returns TLS credentials for `files` (requiring and verifying client
// certificates when files.client_ca is set), or insecure credentials when no certificate is
// configured. Errors as CheckServerTlsFiles.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentialsFor(
    const ServerTlsFiles& files);

// MakeHttpServer returns an HTTPS server (httplib::SSLServer) for `files`, requiring client
// certificates when files.client_ca is set, or a plain HTTP server when no certificate is
// configured. Errors as CheckServerTlsFiles.
absl::StatusOr<std::unique_ptr<httplib::Server>> MakeHttpServer(const ServerTlsFiles& files);

// ReadPemFile returns the contents of `path`, named on the command line by `flag`, checking it
// holds a PEM block whose label ends with `label` ("CERTIFICATE", "PRIVATE KEY").
// INVALID_ARGUMENT "<flag> <path>: cannot read" / "...: not a PEM <label>" otherwise.
absl::StatusOr<std::string> ReadPemFile(const std::string& path, const std::string& flag,
                                        const std::string& label);

}  // namespace issuescope

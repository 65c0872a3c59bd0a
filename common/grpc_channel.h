// Client side of issuescope's TLS: channel credentials from a PEM root file (and, for a server
// that requires client certificates, the client's own certificate and key). Every gRPC client —
// of the coordinator (crawler workers, the indexer daemon, the CLI's status and admin commands),
// of the workers' stores (the indexer, `--store-tls-ca`) and of the search service (the CLI's
// query commands) — builds its channel here, so `--tls-ca FILE` means the same everywhere. The
// server side is common/tls.h.
//
// Pure functions; thread-safe.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/channel.h"
#include "grpcpp/security/credentials.h"

namespace issuescope {

// ChannelCredentialsFor returns TLS credentials trusting the PEM certificate(s) in `tls_ca_file`
// (a CA or a self-signed server certificate), or insecure (plaintext) credentials when the name
// is empty. INVALID_ARGUMENT naming `flag` and the file when it cannot be read or holds no PEM
// certificate.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentialsFor(
    const std::string& tls_ca_file, const std::string& flag = "--tls-ca");

// ClientTlsFiles names the PEM files of a client's TLS and the flags that named them (errors
// name both: "--store-tls-ca /x.pem: cannot read").
struct ClientTlsFiles {
  // CA (or self-signed server certificate) the client trusts; "" talks plaintext. Default: "".
  std::string ca;
  // The client's certificate chain and key, presented to servers that require one
  // (`--tls-client-ca` on the server); both or neither, and only with `ca`. Default: "".
  std::string cert;
  std::string key;
  // The flags naming the three files. Defaults: "--tls-ca", "--tls-cert", "--tls-key".
  std::string ca_flag = "--tls-ca";
  std::string cert_flag = "--tls-cert";
  std::string key_flag = "--tls-key";
};

// ChannelCredentialsFor returns TLS credentials trusting files.ca and presenting files.cert/key
// when given, or insecure credentials when files.ca is empty. INVALID_ARGUMENT naming the flag and
// the file when a file cannot be read or is not PEM of its kind, when only one of cert and key
// is given, or when they are given without a CA.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentialsFor(
    const ClientTlsFiles& files);

// CreateCoordinatorChannel is grpc::CreateChannel(address, ChannelCredentialsFor(tls)): TLS
// trusting tls.ca (plaintext without one), presenting tls.cert/key to a coordinator that
// requires client certificates (its --tls-client-ca; a worker's certificate must then name the
// worker's id, coordinator/security.h). With a `bearer_token`, every call on the channel carries
// the metadata "authorization: Bearer <token>" (the coordinator's cluster or admin credential);
// put TLS under it on any network but loopback, or the token crosses it in the clear.
absl::StatusOr<std::shared_ptr<grpc::Channel>> CreateCoordinatorChannel(
    const std::string& address, const ClientTlsFiles& tls, const std::string& bearer_token = "");

// SearchChannelTarget turns a search address list, "HOST:PORT" or "HOST:PORT,HOST:PORT,…"
// (the replicas of one index), into a gRPC target: one address as it is (a DNS name that
// resolves to several addresses, a Kubernetes headless Service, is balanced too); several as one
// "ipv4:" (or "ipv6:") list of their addresses, resolved now. INVALID_ARGUMENT naming the
// address that is not HOST:PORT or does not resolve, or a list mixing IPv4 and IPv6.
absl::StatusOr<std::string> SearchChannelTarget(const std::string& servers);

// CreateSearchChannel is the channel of a search client (the CLI's query commands): calls are
// spread round-robin over the replicas that report SERVING (gRPC health checking of
// issuescope.v1.Search, so a replica still copying its index gets none), and a call that
// fails UNAVAILABLE (its replica died, is unreachable or is still copying) or ABORTED (the
// index kept changing under it) is retried on another, up to 5 attempts; searches are
// read-only, so a retry is always safe. A streamed export is retried only before its first
// hit. With TLS, every replica's certificate must name the first address's host (a name they
// share).
absl::StatusOr<std::shared_ptr<grpc::Channel>> CreateSearchChannel(const std::string& servers,
                                                                   const ClientTlsFiles& tls);

}  // namespace issuescope

// Client side of the coordinator's TLS: channel credentials from a PEM root file. Every client of
// the coordinator (crawler workers, the indexer daemon, the CLI's status and admin commands)
// builds its channel here, so `--tls-ca FILE` means the same everywhere.
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

// CreateCoordinatorChannel is grpc::CreateChannel(address, ChannelCredentialsFor(tls_ca_file)).
// With a `bearer_token`, every call on the channel carries the metadata "authorization: Bearer
// <token>" (the coordinator's cluster or admin credential, coordinator/security.h); put TLS
// under it on any network but loopback, or the token crosses it in the clear.
absl::StatusOr<std::shared_ptr<grpc::Channel>> CreateCoordinatorChannel(
    const std::string& address, const std::string& tls_ca_file,
    const std::string& flag = "--tls-ca", const std::string& bearer_token = "");

// TokenFromEnvironment returns the value of environment variable `var` (surrounding whitespace
// removed), "" when `var` is empty. INVALID_ARGUMENT naming `flag` and the variable (never its
// value) when `var` is given but unset or empty.
absl::StatusOr<std::string> TokenFromEnvironment(const std::string& var, const std::string& flag);

}  // namespace issuescope

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
absl::StatusOr<std::shared_ptr<grpc::Channel>> CreateCoordinatorChannel(
    const std::string& address, const std::string& tls_ca_file,
    const std::string& flag = "--tls-ca");

}  // namespace issuescope

#include "common/grpc_channel.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "grpcpp/create_channel.h"

namespace issuescope {

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentialsFor(
    const std::string& tls_ca_file, const std::string& flag) {
  if (tls_ca_file.empty()) return grpc::InsecureChannelCredentials();
  std::ifstream in(tls_ca_file, std::ios::binary);
  std::ostringstream pem;
  pem << in.rdbuf();
  if (!in || pem.str().find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " ", tls_ca_file, ": not a readable PEM certificate"));
  }
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = pem.str();
  return grpc::SslCredentials(ssl);
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> CreateCoordinatorChannel(
    const std::string& address, const std::string& tls_ca_file, const std::string& flag) {
  auto credentials = ChannelCredentialsFor(tls_ca_file, flag);
  if (!credentials.ok()) return credentials.status();
  return grpc::CreateChannel(address, *credentials);
}

}  // namespace issuescope

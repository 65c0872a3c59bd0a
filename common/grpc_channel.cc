#include "common/grpc_channel.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/strings/ascii.h"
#include "common/status_macros.h"
#include "common/tls.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/support/client_interceptor.h"

namespace issuescope {
namespace {

// BearerInterceptor adds "authorization: Bearer <token>" to every call's initial metadata.
class BearerInterceptor : public grpc::experimental::Interceptor {
 public:
  explicit BearerInterceptor(const std::string* header) : header_(header) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->insert({"authorization", *header_});
    }
    methods->Proceed();
  }

 private:
  const std::string* header_;
};

class BearerInterceptorFactory : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit BearerInterceptorFactory(const std::string& token) : header_("Bearer " + token) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo* /*info*/) override {
    return new BearerInterceptor(&header_);
  }

 private:
  const std::string header_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentialsFor(
    const std::string& tls_ca_file, const std::string& flag) {
  ClientTlsFiles files;
  files.ca = tls_ca_file;
  files.ca_flag = flag;
  return ChannelCredentialsFor(files);
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentialsFor(
    const ClientTlsFiles& files) {
  if (files.cert.empty() != files.key.empty()) {
    const std::string& missing = files.cert.empty() ? files.cert_flag : files.key_flag;
    return absl::InvalidArgumentError(absl::StrCat(
        missing, " is missing: a client certificate needs both ", files.cert_flag, " and ",
        files.key_flag));
  }
  if (files.ca.empty()) {
    if (!files.cert.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(files.cert_flag, " needs ", files.ca_flag, " (a client certificate is "
                       "only sent over TLS)"));
    }
    return grpc::InsecureChannelCredentials();
  }
  grpc::SslCredentialsOptions ssl;
  ASSIGN_OR_RETURN(ssl.pem_root_certs, ReadPemFile(files.ca, files.ca_flag, "CERTIFICATE"));
  if (!files.cert.empty()) {
    ASSIGN_OR_RETURN(ssl.pem_cert_chain, ReadPemFile(files.cert, files.cert_flag, "CERTIFICATE"));
    ASSIGN_OR_RETURN(ssl.pem_private_key, ReadPemFile(files.key, files.key_flag, "PRIVATE KEY"));
  }
  return grpc::SslCredentials(ssl);
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> CreateCoordinatorChannel(
    const std::string& address, const ClientTlsFiles& tls, const std::string& bearer_token) {
  auto credentials = ChannelCredentialsFor(tls);
  if (!credentials.ok()) return credentials.status();
  if (bearer_token.empty()) return grpc::CreateChannel(address, *credentials);
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> creators;
  creators.push_back(std::make_unique<BearerInterceptorFactory>(bearer_token));
  return grpc::experimental::CreateCustomChannelWithInterceptors(
      address, *credentials, grpc::ChannelArguments(), std::move(creators));
}

}  // namespace issuescope

#include "common/grpc_channel.h"

#include <netdb.h>
#include <sys/socket.h>
#include <arpa/inet.h>

#include <cstdlib>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/strings/ascii.h"
#include "common/host_port.h"
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

namespace {

// The service config of search channels (CreateSearchChannel).
constexpr char kSearchServiceConfig[] = R"json({
  "loadBalancingConfig": [{"round_robin": {}}],
  "healthCheckConfig": {"serviceName": "issuescope.v1.Search"},
  "methodConfig": [{
    "name": [{"service": "issuescope.v1.Search"}],
    "retryPolicy": {
      "maxAttempts": 5,
      "initialBackoff": "0.05s",
      "maxBackoff": "1s",
      "backoffMultiplier": 2,
      "retryableStatusCodes": ["UNAVAILABLE", "ABORTED"]
    }
  }]
})json";

// SearchAddress splits one search address; it needs a host and a port above 0.
absl::StatusOr<HostPort> SearchAddress(absl::string_view address) {
  absl::StatusOr<HostPort> hp = SplitHostPort(address);
  if (!hp.ok() || hp->host.empty() || hp->port <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("search address '", address, "' is not HOST:PORT"));
  }
  return hp;
}

}  // namespace

absl::StatusOr<std::string> SearchChannelTarget(const std::string& servers) {
  std::vector<std::string> addresses =
      absl::StrSplit(servers, ',', absl::SkipWhitespace());
  for (std::string& a : addresses) a = std::string(absl::StripAsciiWhitespace(a));
  if (addresses.empty()) return absl::InvalidArgumentError("no search address given");
  if (addresses.size() == 1) {
    RETURN_IF_ERROR(SearchAddress(addresses[0]).status());
    return addresses[0];
  }
  std::vector<std::string> resolved;
  int family = AF_UNSPEC;
  for (const std::string& a : addresses) {
    ASSIGN_OR_RETURN(HostPort hp, SearchAddress(a));
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* info = nullptr;
    const int rc = getaddrinfo(hp.host.c_str(), std::to_string(hp.port).c_str(), &hints, &info);
    if (rc != 0 || info == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("search address '", a, "' does not resolve: ",
                                                     gai_strerror(rc)));
    }
    // An IPv4 address where the host has one (localhost has both), so lists do not mix.
    const addrinfo* pick = info;
    for (const addrinfo* ai = info; ai != nullptr; ai = ai->ai_next) {
      if (ai->ai_family == AF_INET) {
        pick = ai;
        break;
      }
    }
    char text[INET6_ADDRSTRLEN] = {};
    const int f = pick->ai_family;
    if (f == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(pick->ai_addr)->sin_addr, text,
                sizeof(text));
    } else {
      inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(pick->ai_addr)->sin6_addr, text,
                sizeof(text));
    }
    freeaddrinfo(info);
    if (family != AF_UNSPEC && family != f) {
      return absl::InvalidArgumentError(absl::StrCat(
          "search addresses '", servers, "' mix IPv4 and IPv6; give addresses of one kind"));
    }
    family = f;
    resolved.push_back(JoinHostPort(text, hp.port));
  }
  return absl::StrCat(family == AF_INET ? "ipv4:" : "ipv6:", absl::StrJoin(resolved, ","));
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> CreateSearchChannel(const std::string& servers,
                                                                   const ClientTlsFiles& tls) {
  ASSIGN_OR_RETURN(std::string target, SearchChannelTarget(servers));
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::ChannelCredentials> credentials,
                   ChannelCredentialsFor(tls));
  grpc::ChannelArguments args;
  args.SetServiceConfigJSON(kSearchServiceConfig);
  if (absl::StartsWith(target, "ipv4:") || absl::StartsWith(target, "ipv6:")) {
    // The certificate names hosts, not the resolved addresses.
    const std::vector<std::string> listed = absl::StrSplit(servers, ',');
    ASSIGN_OR_RETURN(HostPort first, SearchAddress(absl::StripAsciiWhitespace(listed[0])));
    args.SetString(GRPC_ARG_DEFAULT_AUTHORITY, first.host);
  }
  return grpc::CreateCustomChannel(target, credentials, args);
}

}  // namespace issuescope

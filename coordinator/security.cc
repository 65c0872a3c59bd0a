#include "security.h"

#include <grpc/grpc_security_constants.h>
#include <grpcpp/security/auth_context.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace issuescope::coordinator {

bool IsLoopbackListenAddress(absl::string_view address) {
  absl::string_view host = address;
  if (absl::ConsumePrefix(&host, "[")) {
    host = host.substr(0, host.find(']'));
  } else {
    const size_t colon = host.rfind(':');
    if (colon != absl::string_view::npos) host = host.substr(0, colon);
  }
  return host == "localhost" || host == "::1" || absl::StartsWith(host, "127.");
}

bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  // Compare over the longer length so a prefix costs as much as a full mismatch.
  const size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

absl::Status CheckBearerToken(const grpc::ServerContext& context, absl::string_view token) {
  if (token.empty()) return absl::OkStatus();
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) {
    return absl::UnauthenticatedError(
        "this call needs the admin token: send metadata 'authorization: Bearer <token>'");
  }
  absl::string_view value(it->second.data(), it->second.size());
  constexpr absl::string_view kScheme = "Bearer ";
  if (value.size() < kScheme.size() ||
      !absl::EqualsIgnoreCase(value.substr(0, kScheme.size()), kScheme)) {
    return absl::UnauthenticatedError("the authorization metadata must be 'Bearer <token>'");
  }
  if (!ConstantTimeEquals(absl::StripAsciiWhitespace(value.substr(kScheme.size())), token)) {
    return absl::UnauthenticatedError("the admin token is wrong");
  }
  return absl::OkStatus();
}

std::vector<std::string> PeerCertificateNames(const grpc::ServerContext& context) {
  std::vector<std::string> names;
  const std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (auth == nullptr || !auth->IsPeerAuthenticated()) return names;
  for (const char* property : {GRPC_X509_CN_PROPERTY_NAME, GRPC_X509_SAN_PROPERTY_NAME}) {
    for (const grpc::string_ref& value : auth->FindPropertyValues(property)) {
      std::string name(value.data(), value.size());
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        names.push_back(std::move(name));
      }
    }
  }
  return names;
}

absl::Status CheckPeerIsWorker(const grpc::ServerContext& context, absl::string_view worker_id) {
  const std::vector<std::string> names = PeerCertificateNames(context);
  if (names.empty()) {
    return absl::UnauthenticatedError(absl::StrCat(
        "worker calls need a client certificate naming the worker (this coordinator has "
        "--tls-client-ca); the call for worker '", worker_id, "' presented none"));
  }
  if (std::find(names.begin(), names.end(), worker_id) != names.end()) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat(
      "the client certificate names ", absl::StrJoin(names, ", "), ", not worker '", worker_id,
      "': a worker may only act as the id its certificate names"));
}

}  // namespace issuescope::coordinator

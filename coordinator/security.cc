#include "coordinator/security.h"

#include <grpcpp/security/server_credentials.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"

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

absl::StatusOr<std::string> ReadTokenFromEnv(const std::string& var) {
  const char* value = std::getenv(var.c_str());
  std::string token(absl::StripAsciiWhitespace(value == nullptr ? "" : value));
  if (token.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("environment variable ", var, " is unset or empty"));
  }
  return token;
}

absl::StatusOr<std::string> ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  return text.str();
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const std::string& cert_file, const std::string& key_file) {
  if (cert_file.empty() && key_file.empty()) return grpc::InsecureServerCredentials();
  if (cert_file.empty() || key_file.empty()) {
    return absl::InvalidArgumentError("TLS needs both --tls-cert and --tls-key");
  }
  ASSIGN_OR_RETURN(std::string cert, ReadTextFile(cert_file));
  ASSIGN_OR_RETURN(std::string key, ReadTextFile(key_file));
  if (!absl::StrContains(cert, "-----BEGIN CERTIFICATE-----")) {
    return absl::InvalidArgumentError(
        absl::StrCat("TLS certificate ", cert_file, " is not a PEM certificate"));
  }
  if (!absl::StrContains(key, "-----BEGIN") || !absl::StrContains(key, "PRIVATE KEY-----")) {
    return absl::InvalidArgumentError(
        absl::StrCat("TLS key ", key_file, " is not a PEM private key"));
  }
  grpc::SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back({key, cert});
  return grpc::SslServerCredentials(options);
}

}  // namespace issuescope::coordinator

#include "coordinator/security.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
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

absl::StatusOr<std::string> ReadTokenFromEnv(const std::string& var) {
  const char* value = std::getenv(var.c_str());
  std::string token(absl::StripAsciiWhitespace(value == nullptr ? "" : value));
  if (token.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("environment variable ", var, " is unset or empty"));
  }
  return token;
}

}  // namespace issuescope::coordinator

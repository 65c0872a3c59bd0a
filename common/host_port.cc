#include "common/host_port.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace issuescope {

absl::StatusOr<HostPort> SplitHostPort(absl::string_view address) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("address '", address, "' is not HOST:PORT, [IPV6]:PORT or :PORT (", why,
                     ")"));
  };
  HostPort out;
  absl::string_view port;
  if (absl::StartsWith(address, "[")) {
    const size_t close = address.find("]:");
    if (close == absl::string_view::npos) return bad("no ']:' after the IPv6 host");
    out.host = std::string(address.substr(1, close - 1));
    port = address.substr(close + 2);
  } else {
    const size_t colon = address.rfind(':');
    if (colon == absl::string_view::npos) return bad("no port");
    out.host = std::string(address.substr(0, colon));
    if (absl::StrContains(out.host, ':')) return bad("an IPv6 host needs brackets");
    port = address.substr(colon + 1);
  }
  if (port.empty() || port.size() > 5) return bad("port 0..65535");
  for (char c : port) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return bad("port 0..65535");
  }
  if (!absl::SimpleAtoi(port, &out.port) || out.port > 65535) return bad("port 0..65535");
  return out;
}

std::string JoinHostPort(absl::string_view host, int port) {
  if (absl::StrContains(host, ':')) return absl::StrCat("[", host, "]:", port);
  return absl::StrCat(host, ":", port);
}

bool IsWildcardHost(absl::string_view host) {
  return host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]";
}

}  // namespace issuescope

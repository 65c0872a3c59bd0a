// Network addresses as issuescope's flags and the coordinator's registry write them:
// "HOST:PORT", "[IPV6]:PORT", and ":PORT" (any host). Used where a listen address turns into the
// address others dial (a worker's advertised store address, the coordinator completing it).
//
// Pure functions; thread-safe.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace issuescope {

// HostPort is a split address.
struct HostPort {
  // The host without IPv6 brackets ("10.0.0.5", "::1", "db.example.org"); "" for ":PORT".
  std::string host;
  // 0..65535.
  int port = 0;
};

// SplitHostPort splits "HOST:PORT", "[IPV6]:PORT" or ":PORT". INVALID_ARGUMENT naming the
// address when it has no port, a port outside 0..65535, or unbalanced brackets.
absl::StatusOr<HostPort> SplitHostPort(absl::string_view address);

// JoinHostPort writes `host` and `port` back as an address, bracketing an IPv6 host.
std::string JoinHostPort(absl::string_view host, int port);

// IsWildcardHost says whether a listen host means every interface: "", "0.0.0.0", "::", "[::]".
bool IsWildcardHost(absl::string_view host);

}  // namespace issuescope

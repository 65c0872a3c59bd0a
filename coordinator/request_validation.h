// Validation of coordinator RPC input: worker ids, store addresses, repository specs and slugs.
// Every error is INVALID_ARGUMENT and names the offending field (e.g.
// "repositories[2].repo.owner is empty").
//
// Pure functions; thread-safe.
#pragma once

#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "issuescope/v1/coordinator.pb.h"

namespace issuescope::coordinator {

// ValidateWorkerId checks `id` against [A-Za-z0-9._-]{1,64}; `field` names it in the error.
absl::Status ValidateWorkerId(absl::string_view id, absl::string_view field = "worker_id");

// kInProcessStoreAddress is the store address of a worker whose store is not served over the
// network (the CLI's one-machine mode); "" means the same.
inline constexpr char kInProcessStoreAddress[] = "in-process";

// ValidateStoreAddress accepts "" or "in-process" (a worker that serves no store over the
// network), "host:port", "[ipv6]:port" (port 1..65535) and "unix:/path". A wildcard host
// ("0.0.0.0", "[::]") is refused: nobody can dial it (ResolveStoreAddress completes those).
absl::Status ValidateStoreAddress(absl::string_view address);

// ResolveStoreAddress completes the store address a worker registers with. A worker listening
// on every interface sends ":PORT" (or a wildcard host): the host becomes the one its
// RegisterWorker call came from, read from gRPC's `peer` ("ipv4:10.0.0.2:54321",
// "ipv6:[::1]:5", "ipv6:%5B::1%5D:5"; an IPv4-mapped IPv6 address becomes IPv4). Any other
// address is returned unchanged. INVALID_ARGUMENT, naming the peer, when the call did not come
// over IP (an in-process or unix-socket call) or the port is not 1..65535.
absl::StatusOr<std::string> ResolveStoreAddress(absl::string_view address,
                                                absl::string_view peer);

// kCursorSkew is how far a reported cursor may lie after the coordinator's clock (trackers'
// clocks differ a little from ours).
inline constexpr absl::Duration kCursorSkew = absl::Hours(1);

// ValidateCursor refuses a cursor whose issues_since or comments_since lies after `now` +
// kCursorSkew: a cursor in the future would hide every issue updated until then from the
// incremental crawls. `field` names it in the error.
absl::Status ValidateCursor(const v1::Cursor& cursor, absl::Time now, absl::string_view field);

// NormalizeSpec checks one RepositorySpec (known tracker, valid owner/name, http(s) api_url,
// non-negative recrawl intervals) and returns its canonical slug. `field` prefixes errors,
// e.g. "repositories[3]".
absl::StatusOr<std::string> NormalizeSpec(const v1::RepositorySpec& spec, absl::string_view field);

// NormalizeSlug parses a repository slug ("github:owner/name") given in a request and returns
// its canonical (lower-case) form. `field` names it in the error.
absl::StatusOr<std::string> NormalizeSlug(absl::string_view slug, absl::string_view field);

// NormalizeSlugs normalizes the `repo_slugs` field of an admin request, without duplicates;
// errors name the offending element ("repo_slugs[3]: ...").
absl::StatusOr<std::set<std::string>> NormalizeSlugs(
    const google::protobuf::RepeatedPtrField<std::string>& slugs);

// ValidateLeaseRef checks the worker-facing LeaseRef (slug and epoch > 0) and returns the
// canonical slug.
absl::StatusOr<std::string> ValidateLeaseRef(const v1::LeaseRef& lease, absl::string_view field);

}  // namespace issuescope::coordinator

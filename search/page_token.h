// Page tokens of Search: an opaque, URL-safe base64 string holding the offset of the next page
// and a fingerprint of the query it belongs to, so a token cannot be replayed against another
// query. The fingerprint is a stable hash (FNV-1a 64), so tokens work across search replicas
// and restarts. Plain functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace issuescope::search {

// QueryFingerprint returns the stable 64-bit fingerprint of a query string.
uint64_t QueryFingerprint(absl::string_view query);

// EncodePageToken makes the token of the page starting at `offset` of the query with
// `fingerprint`.
std::string EncodePageToken(uint64_t offset, uint64_t fingerprint);

// DecodePageToken returns the offset in `token`. INVALID_ARGUMENT when the token is malformed
// or was made for a query with another fingerprint.
absl::StatusOr<uint64_t> DecodePageToken(absl::string_view token, uint64_t fingerprint);

}  // namespace issuescope::search

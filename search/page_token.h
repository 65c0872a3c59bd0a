// Page tokens of Search: an opaque, URL-safe base64 string holding a PageCursor (where the next
// page starts) and a fingerprint of the query it belongs to, so a token cannot be replayed
// against another query. The fingerprint is a stable hash (FNV-1a 64), so tokens work across
// search replicas and restarts.
//
// Two kinds of cursor: for hits sorted by a value (`sort:created|updated|comments` and the
// default order of listings) a keyset cursor holds the sort key of the last hit returned, so
// the next page starts right after it however many documents were added meanwhile; for
// relevance order a plain offset (scores change as the index grows, so no key is stable).
// Plain functions over values; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace issuescope::search {

// PageCursor is where a page starts.
struct PageCursor {
  // Hits before the page: where it starts for offset cursors; informational for keyset ones.
  uint64_t offset = 0;
  // True for a keyset cursor; the fields below are set only then.
  bool keyset = false;
  // Serialized sort-slot and kNumberSlot values of the last hit returned.
  std::string sort_value;
  std::string number_value;
  // Hits already returned whose two values equal those (they sort first after the filter).
  uint64_t ties = 0;
};

// QueryFingerprint returns the stable 64-bit fingerprint of a query string.
uint64_t QueryFingerprint(absl::string_view query);

// EncodePageCursor makes the token of `cursor` for the query with `fingerprint`.
std::string EncodePageCursor(const PageCursor& cursor, uint64_t fingerprint);

// DecodePageCursor parses a token. INVALID_ARGUMENT when it is malformed or was made for a
// query with another fingerprint.
absl::StatusOr<PageCursor> DecodePageCursor(absl::string_view token, uint64_t fingerprint);

}  // namespace issuescope::search

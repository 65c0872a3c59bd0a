// The one place Xapian exceptions become absl::Status (like common/grpc_status.h and
// common/rocksdb_status.h for theirs). Xapian::Error is not polymorphic, so its subclasses are
// told apart by get_type().
#pragma once

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "xapian.h"

namespace issuescope {

// FromXapianError is `what` (e.g. "committing index /x"), then Xapian's description, with a code
// callers act on: DatabaseLockError FAILED_PRECONDITION (another writer holds the index);
// DatabaseOpeningError, DatabaseNotFoundError, DatabaseVersionError, NetworkError and
// NetworkTimeoutError UNAVAILABLE; DatabaseModifiedError ABORTED (reopen and retry);
// DatabaseCorruptError DATA_LOSS; DocNotFoundError NOT_FOUND; QueryParserError
// INVALID_ARGUMENT (the user's query); UnimplementedError UNIMPLEMENTED; anything else INTERNAL,
// including Xapian's InvalidArgumentError and RangeError (our own misuse of its API, not the
// caller's input).
absl::Status FromXapianError(const Xapian::Error& e, absl::string_view what);

}  // namespace issuescope

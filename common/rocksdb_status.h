// The one place RocksDB statuses become absl::Status.
#pragma once

#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "rocksdb/status.h"

namespace issuescope {

// FromRocksStatus converts, prefixing the message with `what` (e.g. "opening store /x").
absl::Status FromRocksStatus(const rocksdb::Status& status, absl::string_view what);

}  // namespace issuescope

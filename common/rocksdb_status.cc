#include "common/rocksdb_status.h"

#include "absl/strings/str_cat.h"

namespace issuescope {

absl::Status FromRocksStatus(const rocksdb::Status& s, absl::string_view what) {
  if (s.ok()) return absl::OkStatus();
  std::string msg = absl::StrCat(what, ": ", s.ToString());
  if (s.IsNotFound()) return absl::NotFoundError(msg);
  if (s.IsInvalidArgument()) return absl::InvalidArgumentError(msg);
  if (s.IsCorruption()) return absl::DataLossError(msg);
  if (s.IsIOError()) return absl::UnavailableError(msg);
  if (s.IsBusy() || s.IsTimedOut() || s.IsTryAgain()) return absl::UnavailableError(msg);
  return absl::InternalError(msg);
}

}  // namespace issuescope

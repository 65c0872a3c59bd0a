#include "common/xapian_status.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace issuescope {

absl::Status FromXapianError(const Xapian::Error& e, absl::string_view what) {
  const std::string type = e.get_type();
  const std::string message = absl::StrCat(what, ": ", e.get_description());
  if (type == "DatabaseLockError") return absl::FailedPreconditionError(message);
  if (type == "DatabaseOpeningError" || type == "DatabaseNotFoundError" ||
      type == "DatabaseVersionError" || type == "NetworkError" ||
      type == "NetworkTimeoutError") {
    return absl::UnavailableError(message);
  }
  if (type == "DatabaseModifiedError") return absl::AbortedError(message);
  if (type == "DatabaseCorruptError") return absl::DataLossError(message);
  if (type == "DocNotFoundError") return absl::NotFoundError(message);
  if (type == "QueryParserError") return absl::InvalidArgumentError(message);
  if (type == "UnimplementedError") return absl::UnimplementedError(message);
  return absl::InternalError(message);
}

}  // namespace issuescope

#include "common/time_util.h"

#include "absl/strings/str_cat.h"

namespace issuescope {

absl::StatusOr<absl::Time> ParseRfc3339(absl::string_view text) {
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, std::string(text), &t, &err)) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid timestamp '", text.substr(0, 40), "': ", err));
  }
  return t;
}

std::string FormatRfc3339(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

google::protobuf::Timestamp ToProto(absl::Time t) {
  google::protobuf::Timestamp ts;
  const int64_t ns = absl::ToUnixNanos(t);
  int64_t secs = ns / 1000000000;
  int64_t nanos = ns % 1000000000;
  if (nanos < 0) {
    nanos += 1000000000;
    secs -= 1;
  }
  ts.set_seconds(secs);
  ts.set_nanos(static_cast<int32_t>(nanos));
  return ts;
}

absl::Time FromProto(const google::protobuf::Timestamp& ts) {
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

int CompareTimestamps(const google::protobuf::Timestamp& a, const google::protobuf::Timestamp& b) {
  if (a.seconds() != b.seconds()) return a.seconds() < b.seconds() ? -1 : 1;
  if (a.nanos() != b.nanos()) return a.nanos() < b.nanos() ? -1 : 1;
  return 0;
}

}  // namespace issuescope

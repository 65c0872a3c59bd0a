// Time helpers: RFC 3339 (the trackers' timestamp format) and protobuf Timestamps.
#pragma once

#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "google/protobuf/timestamp.pb.h"

namespace issuescope {

// ParseRfc3339 parses "2024-01-31T12:00:00Z" or with an offset ("+08:00") or fraction.
absl::StatusOr<absl::Time> ParseRfc3339(absl::string_view text);

// FormatRfc3339 formats as "2024-01-31T12:00:00Z" (UTC, whole seconds).
std::string FormatRfc3339(absl::Time t);

// ToProto / FromProto convert between absl::Time and google.protobuf.Timestamp.
google::protobuf::Timestamp ToProto(absl::Time t);
absl::Time FromProto(const google::protobuf::Timestamp& ts);

// CompareTimestamps is -1, 0 or 1 as `a` is before, at or after `b`.
int CompareTimestamps(const google::protobuf::Timestamp& a, const google::protobuf::Timestamp& b);

}  // namespace issuescope

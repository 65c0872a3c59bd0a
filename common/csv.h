// CSV (RFC 4180) for every file the tools read or write: `taxonomy train|eval|classify` inputs,
// `study` label files and annotation sheets, `issuescope export --format csv`.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace issuescope {

// CsvQuote quotes a CSV field as RFC 4180 requires (comma, quote or line break inside); any
// other field is returned as it is.
std::string CsvQuote(absl::string_view value);

// CsvRow is one record of a CSV file and the line it starts on (1-based).
struct CsvRow {
  std::vector<std::string> fields;
  int line = 0;
};

// ParseCsvRows splits RFC 4180 text into records (quotes may span lines; "\n", "\r\n" and "\r"
// end a record; a UTF-8 byte order mark is skipped; blank lines are skipped). INVALID_ARGUMENT
// "<source>:<line>: unterminated quoted field".
absl::StatusOr<std::vector<CsvRow>> ParseCsvRows(absl::string_view text, absl::string_view source);

}  // namespace issuescope

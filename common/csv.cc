#include "common/csv.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace issuescope {

std::string CsvQuote(absl::string_view value) {
  if (value.find_first_of(",\"\r\n") == absl::string_view::npos) return std::string(value);
  std::string out = "\"";
  for (char c : value) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

absl::StatusOr<std::vector<CsvRow>> ParseCsvRows(absl::string_view text, absl::string_view source) {
  std::vector<CsvRow> rows;
  CsvRow row;
  std::string field;
  bool quoted = false, in_quotes = false;
  int line = 1, quote_line = 0;
  row.line = 1;
  size_t i = absl::StartsWith(text, "\xEF\xBB\xBF") ? 3 : 0;
  auto end_record = [&] {
    row.fields.push_back(std::move(field));
    field.clear();
    if (!(row.fields.size() == 1 && absl::StripAsciiWhitespace(row.fields[0]).empty())) {
      rows.push_back(std::move(row));
    }
    row = CsvRow();
  };
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field.push_back('"');
        ++i;
      } else if (c == '"') {
        in_quotes = false;
      } else {
        if (c == '\n') ++line;
        field.push_back(c);
      }
      continue;
    }
    if (c == '"' && field.empty() && !quoted) {
      in_quotes = quoted = true;
      quote_line = line;
    } else if (c == ',') {
      row.fields.push_back(std::move(field));
      field.clear();
      quoted = false;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      end_record();
      quoted = false;
      row.line = ++line;
    } else {
      field.push_back(c);
    }
  }
  if (in_quotes) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ":", quote_line, ": unterminated quoted field"));
  }
  if (!field.empty() || !row.fields.empty()) end_record();
  return rows;
}

}  // namespace issuescope

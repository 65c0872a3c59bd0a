#include "indexer/classifier_data.h"

#include <map>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/csv.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"

namespace issuescope::classifier {
namespace {

// Canonical maps a column or key name to the field it fills ("" for unknown ones).
std::string Canonical(absl::string_view name) {
  std::string n = absl::AsciiStrToLower(absl::StripAsciiWhitespace(name));
  static const std::map<std::string, std::string> kAliases = {
      {"title", "title"},       {"issue title", "title"}, {"body", "body"},
      {"issue body", "body"},   {"labels", "labels"},     {"repo", "repo"},
      {"repository", "repo"},   {"kind", "kind"},         {"label", "kind"},
      {"theme", "theme"},       {"subtheme", "subtheme"}, {"sub-theme", "subtheme"},
      {"llm", "llm"},           {"is bug", "is_bug"},     {"is_bug", "is_bug"},
      {"id", "id"},             {"number", "id"},         {"html_url", "url"},
      {"repository_url", "repository_url"}};
  auto it = kAliases.find(n);
  return it == kAliases.end() ? "" : it->second;
}

std::optional<bool> ParseBool(absl::string_view v) {
  std::string s = absl::AsciiStrToLower(absl::StripAsciiWhitespace(v));
  if (s == "true" || s == "1" || s == "yes" || s == "y") return true;
  if (s == "false" || s == "0" || s == "no" || s == "n") return false;
  return std::nullopt;
}

// Set stores one text field of a record by its canonical name.
void Set(const std::string& field, const std::string& value, LabeledIssue* out) {
  if (field == "title") out->issue.title = value;
  else if (field == "body") out->issue.body = value;
  else if (field == "repo") out->issue.repo = value;
  else if (field == "kind") out->kind = NormalizeKind(value);
  else if (field == "theme") out->theme = std::string(absl::StripAsciiWhitespace(value));
  else if (field == "subtheme") out->subtheme = std::string(absl::StripAsciiWhitespace(value));
  else if (field == "llm") out->llm = ParseBool(value);
  else if (field == "is_bug") {
    if (auto b = ParseBool(value)) out->kind = *b ? "bug" : "non-bug";
  } else if (field == "id" || (field == "url" && out->id.empty())) out->id = value;
  else if (field == "repository_url" && out->issue.repo.empty()) {
    // https://api.github.com/repos/OWNER/NAME
    size_t pos = value.find("/repos/");
    if (pos != std::string::npos) out->issue.repo = value.substr(pos + 7);
  } else if (field == "labels") {
    for (absl::string_view l : absl::StrSplit(value, ';', absl::SkipWhitespace())) {
      out->issue.labels.emplace_back(absl::StripAsciiWhitespace(l));
    }
  }
}

std::string ScalarText(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

}  // namespace

std::string NormalizeKind(absl::string_view kind) {
  std::string k = absl::AsciiStrToLower(absl::StripAsciiWhitespace(kind));
  if (k == "feature" || k == "enhancement" || k == "feature request" ||
      k == "feature-request") {
    return "requirement";
  }
  if (k == "bug report") return "bug";
  return k;
}

absl::StatusOr<std::vector<LabeledIssue>> ParseJsonLines(absl::string_view text,
                                                         absl::string_view source) {
  std::vector<LabeledIssue> out;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    auto bad = [&](absl::string_view what) {
      return absl::InvalidArgumentError(absl::StrCat(source, ":", line_no, ": ", what));
    };
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line.begin(), line.end());
    } catch (const nlohmann::json::exception& e) {
      return bad(absl::StrCat("not valid JSON: ", e.what()));
    }
    if (!j.is_object()) return bad("a record must be a JSON object");
    LabeledIssue rec;
    rec.line = line_no;
    for (auto it = j.begin(); it != j.end(); ++it) {
      std::string field = Canonical(it.key());
      if (field.empty()) continue;
      const nlohmann::json& v = it.value();
      if (field == "labels") {
        if (v.is_string()) {
          Set(field, v.get<std::string>(), &rec);
        } else if (v.is_array()) {
          for (const nlohmann::json& l : v) {
            if (l.is_string()) rec.issue.labels.push_back(l.get<std::string>());
            else if (l.is_object() && l.contains("name") && l["name"].is_string())
              rec.issue.labels.push_back(l["name"].get<std::string>());
          }
        } else if (!v.is_null()) {
          return bad("'labels' must be a list of names or label objects");
        }
      } else if (field == "llm" || field == "is_bug") {
        Set(field, v.is_boolean() ? (v.get<bool>() ? "true" : "false") : ScalarText(v), &rec);
      } else if (field == "repo" && v.is_object()) {
        if (v.contains("full_name") && v["full_name"].is_string())
          rec.issue.repo = v["full_name"].get<std::string>();
      } else {
        Set(field, ScalarText(v), &rec);
      }
    }
    if (!j.contains("title") && !j.contains("body") && !j.contains("Title") &&
        !j.contains("Issue Title")) {
      return bad("a record needs a 'title' or a 'body'");
    }
    out.push_back(std::move(rec));
  }
  return out;
}

absl::StatusOr<std::vector<LabeledIssue>> ParseCsv(absl::string_view text,
                                                   absl::string_view source) {
  ASSIGN_OR_RETURN(std::vector<CsvRow> rows, ParseCsvRows(text, source));
  if (rows.empty()) return absl::InvalidArgumentError(absl::StrCat(source, ":1: empty CSV file"));

  std::vector<std::string> columns;
  bool has_text = false;
  for (const std::string& name : rows[0].fields) {
    columns.push_back(Canonical(name));
    has_text |= columns.back() == "title" || columns.back() == "body";
  }
  if (!has_text) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ":1: the CSV header has no 'title' or 'body' column"));
  }
  std::vector<LabeledIssue> out;
  for (size_t r = 1; r < rows.size(); ++r) {
    const std::vector<std::string>& fields = rows[r].fields;
    if (fields.size() != columns.size()) {
      return absl::InvalidArgumentError(absl::StrCat(source, ":", rows[r].line, ": row has ",
                                                     fields.size(), " fields, the header ",
                                                     columns.size()));
    }
    LabeledIssue rec;
    rec.line = rows[r].line;
    for (size_t c = 0; c < columns.size(); ++c) {
      if (!columns[c].empty()) Set(columns[c], fields[c], &rec);
    }
    out.push_back(std::move(rec));
  }
  return out;
}

absl::StatusOr<std::vector<LabeledIssue>> ReadIssuesFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path, "input"));
  if (absl::EndsWithIgnoreCase(path, ".csv")) return ParseCsv(text, path);
  return ParseJsonLines(text, path);
}

}  // namespace issuescope::classifier

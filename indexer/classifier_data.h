// Reading issues for `issuescope taxonomy train|eval|classify`: JSON Lines or CSV files of
// records with `title`, `body`, optional `labels` (a list of native label names, or in CSV a
// ';'-separated string), optional `repo`, and the gold fields `kind`, `theme`, `subtheme`, `llm`.
// A GitHub REST issue object (labels as objects with `name`, `repository_url`) is accepted too.
//
// Aliases, so public labelled sets load unchanged: `Title`/`Issue Title` for title,
// `Body`/`Issue Body` for body, `label` (NLBSE'24) for kind, `Is Bug`/`is_bug` (true → kind
// "bug", false → kind "non-bug"). Gold kinds are normalised: feature, enhancement and
// "feature request" become "requirement".
//
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "indexer/classifier_features.h"

namespace issuescope::classifier {

// LabeledIssue is one input record: the issue and its gold tags (empty when not given).
struct LabeledIssue {
  IssueText issue;
  std::string id;  // "id", "number" or "html_url" when present, else ""
  std::string kind;
  std::string theme;
  std::string subtheme;
  std::optional<bool> llm;
  int line = 0;  // 1-based line where the record starts
};

// NormalizeKind lower-cases a gold kind and maps feature/enhancement/feature request to
// requirement and bug report to bug.
std::string NormalizeKind(absl::string_view kind);

// ParseJsonLines reads one JSON object per non-blank line. INVALID_ARGUMENT "<source>:<line>: …"
// for a line that is not an object or lacks both title and body.
absl::StatusOr<std::vector<LabeledIssue>> ParseJsonLines(absl::string_view text,
                                                         absl::string_view source);

// ParseCsv reads an RFC 4180 CSV file with a header row. INVALID_ARGUMENT naming source and
// line for an unterminated quote, a header without title/body, or a row of the wrong width.
absl::StatusOr<std::vector<LabeledIssue>> ParseCsv(absl::string_view text,
                                                   absl::string_view source);

// ReadIssuesFile reads `path`: CSV when it ends in ".csv", JSON Lines otherwise.
// NOT_FOUND when it cannot be read.
absl::StatusOr<std::vector<LabeledIssue>> ReadIssuesFile(const std::string& path);

}  // namespace issuescope::classifier

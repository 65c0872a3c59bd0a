// Corpus loading from JSONL: one issue per line,
//   {"repo":"o/r","number":1,"title":"…","body":"…","state":"open|closed","state_reason":null,
//    "labels":["bug"],"user":"login","assignees":[],"created_at":"…","updated_at":"…",
//    "closed_at":null,"is_pull_request":false,
//    "comments":[{"id":1,"user":"…","body":"…","created_at":"…","updated_at":"…"}]}
// Required: repo, number, title, state, user, created_at, updated_at. Blank lines are skipped.
// Optional "tracker": github (default), gitlab (repo may be "group/sub/project"; state may be
// "opened"; comments may carry "system": true) or gitee (number is n, stored as
// kGiteeKeyBase + n, or a key "I10001"; state open, progressing, closed or rejected).
// Repositories appear in order of first mention; issue ids are assigned in file order; comment
// ids are taken from the file and must be unique. Pure functions; thread-compatible.
#pragma once

#include <istream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tests/simulator/corpus.h"

namespace issuescope::sim {

// LoadCorpusFile reads a JSONL corpus. Errors are INVALID_ARGUMENT (NOT_FOUND when the file
// cannot be opened) and read "FILE:LINE: field 'F': what is wrong".
absl::StatusOr<Corpus> LoadCorpusFile(const std::string& path);

// LoadCorpusStream reads a JSONL corpus from `in`; `name` stands for the file in errors.
absl::StatusOr<Corpus> LoadCorpusStream(std::istream& in, absl::string_view name);

}  // namespace issuescope::sim

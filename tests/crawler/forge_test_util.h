// Helpers for the GitLab/Gitee tests: where the shared recordings live, reading them, and the
// Forgejo recording format (header lines "Name: value", a blank line, then the body).
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "nlohmann/json.hpp"

namespace issuescope::crawler::testing {

namespace fs = std::filesystem;

// kForgeData is ../shared/data (next to the source tree), as the conformance test finds it.
inline const fs::path kForgeData = ISSUESCOPE_SHARED_DATA_DIR;
inline const fs::path kGitlabRec =
    kForgeData / "gitlab-api/forgejo-migrations/services/migrations/testdata/gitlab";
inline const fs::path kGitlabPerceval = kForgeData / "gitlab-api/perceval/tests/data/gitlab";
inline const fs::path kGitee = kForgeData / "gitee-api/perceval-gitee/tests/data/gitee";

// REQUIRE_RECORDING skips the test (with the reason) when the shared data or a file is absent.
#define REQUIRE_RECORDING(path)                                                           \
  do {                                                                                    \
    if (!::issuescope::crawler::testing::fs::exists(                                      \
            ::issuescope::crawler::testing::kForgeData)) {                                \
      GTEST_SKIP() << "../shared/data is absent ("                                        \
                   << ::issuescope::crawler::testing::kForgeData << ")";                  \
    }                                                                                     \
    if (!::issuescope::crawler::testing::fs::exists(path)) {                              \
      GTEST_SKIP() << "recording missing: " << (path);                                    \
    }                                                                                     \
  } while (0)

// ReadAll returns a file's bytes ("" when unreadable).
inline std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Recording is one Forgejo-format recorded response.
struct Recording {
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

// ReadRecording splits a Forgejo recording into headers and body.
inline Recording ReadRecording(const fs::path& path) {
  Recording rec;
  const std::string text = ReadAll(path);
  const size_t blank = text.find("\n\n");
  const std::string head = text.substr(0, blank);
  rec.body = blank == std::string::npos ? "" : text.substr(blank + 2);
  for (absl::string_view line : absl::StrSplit(head, '\n')) {
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    rec.headers.emplace_back(std::string(line.substr(0, colon)),
                             std::string(absl::StripAsciiWhitespace(line.substr(colon + 1))));
  }
  return rec;
}

// NotesFromDiscussions flattens a GitLab discussions page into a notes page (the recordings
// hold discussions; the crawler lists notes, which are the same objects).
inline std::string NotesFromDiscussions(const std::string& body) {
  nlohmann::json notes = nlohmann::json::array();
  for (const auto& d : nlohmann::json::parse(body)) {
    for (const auto& n : d["notes"]) notes.push_back(n);
  }
  return notes.dump();
}

}  // namespace issuescope::crawler::testing

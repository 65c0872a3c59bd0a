// What the three forge page fuzz targets (github_pages_fuzz.cc, gitlab_pages_fuzz.cc,
// gitee_pages_fuzz.cc) share: one input is a response body given to every parser of the
// forge's Tracker (repository object, issue listing, comment listing), once failing on the
// first bad item and once setting bad items aside. Checked beyond "no crash": the two modes
// agree (a page that parses whole has no bad item and the same items), and every string that
// reaches a protobuf field or the store — parsed issues and comments, a bad item's key and error
// — is valid UTF-8 when the body is (protobuf refuses anything else).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/text_tokens.h"
#include "crawler/github_parse.h"
#include "crawler/tracker.h"
#include "issuescope/v1/model.pb.h"

namespace issuescope::fuzz {

// Check traps (a finding) when `ok` is false.
inline void Check(bool ok) {
  if (!ok) __builtin_trap();
}

// Reparses reports whether `message` survives the wire, which protobuf refuses for a string
// field that is not UTF-8.
template <typename Message>
bool Reparses(const Message& message) {
  std::string wire;
  Message back;
  return message.SerializeToString(&wire) && back.ParseFromString(wire);
}

template <typename Item>
void CheckPage(const absl::StatusOr<std::vector<Item>>& whole,
               const absl::StatusOr<std::vector<Item>>& lenient,
               const std::vector<crawler::BadItem>& bad, bool utf8_body) {
  if (whole.ok()) {
    Check(lenient.ok() && bad.empty() && lenient->size() == whole->size());
  }
  if (!lenient.ok() || !utf8_body) return;
  for (const Item& item : *lenient) Check(Reparses(item));
  for (const crawler::BadItem& b : bad) {
    Check(IsValidUtf8(b.key) && IsValidUtf8(b.error) && IsValidUtf8(b.raw));
  }
  if (!whole.ok()) Check(IsValidUtf8(whole.status().message()));
}

// FuzzTrackerPages runs one input through the parsers of the forge `kind`.
inline void FuzzTrackerPages(v1::Tracker kind, const uint8_t* data, size_t size) {
  const absl::string_view body(reinterpret_cast<const char*>(data), size);
  const bool utf8_body = IsValidUtf8(body);
  auto tracker = crawler::MakeTracker(kind);
  Check(tracker.ok());
  const crawler::Tracker& t = **tracker;

  v1::RepositoryRef repo;
  repo.set_tracker(kind);
  repo.set_owner("owner");
  repo.set_name("repo");
  crawler::TrackerRepo where{"https://api.example.test", "owner", "repo"};

  if (auto info = t.ParseRepository(body); info.ok() && utf8_body) {
    Check(IsValidUtf8(info->full_name));
  }

  std::vector<crawler::BadItem> bad;
  auto issues = t.ParseIssues(body, repo, nullptr);
  auto issues_lenient = t.ParseIssues(body, repo, &bad);
  CheckPage(issues, issues_lenient, bad, utf8_body);

  // Comments: repository-wide (GitHub, Gitee) and of one issue (GitLab notes, Gitee).
  v1::Issue issue;
  *issue.mutable_repo() = repo;
  issue.set_number(7);
  issue.set_key(kind == v1::TRACKER_GITEE ? "I7" : "7");
  issue.set_url("https://example.test/owner/repo/issues/7");
  const v1::Issue* const of_each[] = {nullptr, &issue};
  for (const v1::Issue* of : of_each) {
    if (of == nullptr && t.comment_listing() == crawler::CommentListing::kPerIssue) continue;
    bad.clear();
    auto comments = t.ParseComments(body, repo, of, where, nullptr);
    auto comments_lenient = t.ParseComments(body, repo, of, where, &bad);
    CheckPage(comments, comments_lenient, bad, utf8_body);
    if (comments_lenient.ok()) {
      for (const v1::Comment& c : *comments_lenient) (void)t.IsPullRequestComment(c);
    }
  }
}

}  // namespace issuescope::fuzz

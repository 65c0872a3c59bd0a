// Small helpers for crawler tests that script a GitHub repository "octo/hello" on a
// FakeTransport: URLs, JSON items and pages, and a lease.
#pragma once

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/time_util.h"
#include "issuescope/v1/coordinator.pb.h"
#include "nlohmann/json.hpp"

namespace issuescope::crawler::testing {

inline constexpr char kTestBase[] = "https://api.test";
inline constexpr char kTestRepoUrl[] = "https://api.test/repos/octo/hello";
inline constexpr char kTestIssues[] =
    "https://api.test/repos/octo/hello/issues?state=all&sort=updated&direction=asc&per_page=100";
inline constexpr char kTestComments[] =
    "https://api.test/repos/octo/hello/issues/comments?sort=updated&direction=asc&per_page=100";

// At returns 2023-01-01T00:00:00Z + `second` as RFC 3339.
inline std::string At(int second) {
  return FormatRfc3339(absl::FromUnixSeconds(1672531200 + second));
}

// SinceParam is the `&since=` suffix the crawler appends for At(second).
inline std::string SinceParam(int second) {
  std::string out;
  for (char c : At(second)) out += c == ':' ? std::string("%3A") : std::string(1, c);
  return absl::StrCat("&since=", out);
}

inline nlohmann::json TestIssue(int number, int updated, const std::string& title = "") {
  return {{"id", 1000 + number},
          {"number", number},
          {"title", title.empty() ? absl::StrCat("issue ", number) : title},
          {"state", "open"},
          {"created_at", At(0)},
          {"updated_at", At(updated)},
          {"html_url", absl::StrCat("https://github.com/octo/hello/issues/", number)}};
}

inline nlohmann::json TestComment(int id, int issue, int updated) {
  return {{"id", id},
          {"body", "c"},
          {"updated_at", At(updated)},
          {"issue_url", absl::StrCat("https://api.test/repos/octo/hello/issues/", issue)},
          {"html_url", absl::StrCat("https://github.com/octo/hello/issues/", issue,
                                    "#issuecomment-", id)}};
}

inline std::string TestPage(const std::vector<nlohmann::json>& items) {
  return nlohmann::json(items).dump();
}

inline v1::Lease TestLease(v1::CrawlMode mode = v1::CRAWL_MODE_FULL) {
  v1::Lease lease;
  lease.set_repo_slug("github:octo/hello");
  lease.mutable_repo()->set_tracker(v1::TRACKER_GITHUB);
  lease.mutable_repo()->set_owner("octo");
  lease.mutable_repo()->set_name("hello");
  lease.mutable_repo()->set_api_url(kTestBase);
  lease.set_epoch(1);
  lease.set_mode(mode);
  return lease;
}

}  // namespace issuescope::crawler::testing

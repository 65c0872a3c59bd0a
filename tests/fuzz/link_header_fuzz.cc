// Fuzz target: paging and rate-limit headers (crawler/github_parse.h, crawler/tracker.h): the
// `Link` parser, each forge's next-page discovery (Link rel="next", GitLab's X-Next-Page,
// Gitee's total_page), estimates, X-RateLimit-* / RateLimit-* and Retry-After, and what the
// crawler does with a next URL (its origin, query parameters, redaction for logs).
// Input: the first line is the Link header; each later line "Name: value" is another header.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/logging.h"
#include "crawler/github_parse.h"
#include "crawler/http_transport.h"
#include "crawler/token_binding.h"
#include "crawler/tracker.h"

namespace cr = issuescope::crawler;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  cr::HttpResponse response;
  response.status = 200;
  response.effective_url = "https://api.github.com/repos/o/r/issues?per_page=100&page=2";
  bool first = true;
  for (absl::string_view line : absl::StrSplit(input, '\n')) {
    if (first) {
      response.headers.Add("Link", std::string(line));
      first = false;
      continue;
    }
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    response.headers.Add(std::string(line.substr(0, colon)),
                         std::string(absl::StripLeadingAsciiWhitespace(line.substr(colon + 1))));
  }

  for (const auto& [rel, url] : cr::ParseLinkHeader(response.headers.Get("Link"))) {
    if (rel.empty()) __builtin_trap();  // a rel is entered under its name
    (void)url;
  }
  if (auto next = cr::NextFromLink(response)) {
    (void)cr::ApiOrigin(*next);
    (void)issuescope::Redact(*next);
    (void)cr::QueryParam(*next, "page");
    (void)cr::SetQueryParam(*next, "per_page", "100");
  }
  for (auto kind : {issuescope::v1::TRACKER_GITHUB, issuescope::v1::TRACKER_GITLAB,
                    issuescope::v1::TRACKER_GITEE}) {
    auto tracker = cr::MakeTracker(kind);
    if (!tracker.ok()) __builtin_trap();
    if (auto next = (*tracker)->NextPageUrl(response.effective_url, response)) {
      (void)cr::ApiOrigin(*next);
      (void)issuescope::Redact(*next);
    }
    (void)(*tracker)->EstimatedTotal(response, 100);
    (void)(*tracker)->ParseRateLimit(response.headers);
  }
  (void)cr::ParseRetryAfter(response.headers, absl::FromUnixSeconds(1700000000));
  (void)cr::ParseHttpDate(response.headers.Get("Date"));
  (void)cr::HeaderInt(response.headers, "X-Total");
  return 0;
}

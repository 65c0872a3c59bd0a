// ParseLinkHeader, ParseRateLimit, ParseRetryAfter and HttpStatusToStatus.
#include <map>
#include <ostream>
#include <string>

#include "crawler/github_parse.h"
#include "crawler/http_transport.h"
#include "gtest/gtest.h"

namespace issuescope::crawler {
namespace {

using Links = std::map<std::string, std::string>;

struct LinkCase {
  const char* name;
  const char* header;
  Links want;
};

// PrintTo names a case by its name in test listings.
void PrintTo(const LinkCase& c, std::ostream* os) { *os << c.name; }

class LinkHeaderTest : public ::testing::TestWithParam<LinkCase> {};

TEST_P(LinkHeaderTest, Parses) { EXPECT_EQ(ParseLinkHeader(GetParam().header), GetParam().want); }

INSTANTIATE_TEST_SUITE_P(
    Cases, LinkHeaderTest,
    ::testing::Values(
        LinkCase{"empty", "", {}},
        LinkCase{"github_four",
                 "<https://api.github.com/repositories/1/issues?per_page=3&page=3>; rel=\"next\", "
                 "<https://api.github.com/repositories/1/issues?per_page=3&page=5>; rel=\"last\", "
                 "<https://api.github.com/repositories/1/issues?per_page=3&page=1>; rel=\"first\", "
                 "<https://api.github.com/repositories/1/issues?per_page=3&page=1>; rel=\"prev\"",
                 {{"next", "https://api.github.com/repositories/1/issues?per_page=3&page=3"},
                  {"last", "https://api.github.com/repositories/1/issues?per_page=3&page=5"},
                  {"first", "https://api.github.com/repositories/1/issues?per_page=3&page=1"},
                  {"prev", "https://api.github.com/repositories/1/issues?per_page=3&page=1"}}},
        LinkCase{"spaces_and_unquoted",
                 "  < https://x/a?page=2 > ;rel=next ,<https://x/a?page=9>;  rel = \"last\"  ",
                 {{"next", "https://x/a?page=2"}, {"last", "https://x/a?page=9"}}},
        LinkCase{"several_rels", "<https://x/b>; rel=\"next last\"",
                 {{"next", "https://x/b"}, {"last", "https://x/b"}}},
        LinkCase{"comma_in_url", "<https://x/c?labels=a,b&page=2>; rel=\"next\"",
                 {{"next", "https://x/c?labels=a,b&page=2"}}},
        LinkCase{"other_params", "<https://x/d>; title=\"t\"; rel=\"NEXT\"",
                 {{"next", "https://x/d"}}},
        LinkCase{"malformed_no_close", "<https://x/e; rel=\"next\"", {}},
        LinkCase{"no_rel", "<https://x/f>; title=\"x\"", {}}),
    [](const auto& info) { return std::string(info.param.name); });

HttpHeaders Headers(std::vector<std::pair<std::string, std::string>> h) {
  HttpHeaders out;
  out.entries = std::move(h);
  return out;
}

TEST(RateLimitTest, ReadsHeadersCaseInsensitively) {
  RateLimit rl = ParseRateLimit(Headers({{"x-ratelimit-limit", "5000"},
                                         {"X-RATELIMIT-REMAINING", "0"},
                                         {"X-RateLimit-Used", "5000"},
                                         {"X-RateLimit-Reset", "1700000600"},
                                         {"X-RateLimit-Resource", "core"}}));
  EXPECT_EQ(rl.limit, 5000);
  EXPECT_EQ(rl.remaining, 0);
  EXPECT_EQ(rl.used, 5000);
  EXPECT_EQ(rl.reset, absl::FromUnixSeconds(1700000600));
  EXPECT_EQ(rl.resource, "core");
}

TEST(RateLimitTest, AbsentOrGarbageIsUnknown) {
  RateLimit rl = ParseRateLimit(Headers({{"X-RateLimit-Remaining", "lots"}}));
  EXPECT_EQ(rl.limit, -1);
  EXPECT_EQ(rl.remaining, -1);
  EXPECT_EQ(rl.used, -1);
  EXPECT_EQ(rl.reset, absl::InfinitePast());
  EXPECT_EQ(rl.resource, "");
}

TEST(RetryAfterTest, SecondsDateAndGarbage) {
  const absl::Time now = absl::FromUnixSeconds(1377137590);  // Thu, 22 Aug 2013 02:13:10 GMT
  EXPECT_EQ(ParseRetryAfter(Headers({{"Retry-After", "30"}}), now), absl::Seconds(30));
  EXPECT_EQ(ParseRetryAfter(Headers({{"retry-after", "Thu, 22 Aug 2013 02:14:10 GMT"}}), now),
            absl::Seconds(60));
  EXPECT_EQ(ParseRetryAfter(Headers({{"Retry-After", "Thu, 22 Aug 2013 02:00:00 GMT"}}), now),
            absl::ZeroDuration());
  EXPECT_EQ(ParseRetryAfter(Headers({{"Retry-After", "soon"}}), now), std::nullopt);
  EXPECT_EQ(ParseRetryAfter(Headers({}), now), std::nullopt);
  EXPECT_EQ(ParseHttpDate("Thu, 22 Aug 2013 02:13:10 GMT"), now);
}

struct CodeCase {
  int http;
  bool rate_limited;
  absl::StatusCode want;
};

TEST(HttpStatusToStatusTest, MapsCodes) {
  const CodeCase cases[] = {
      {200, false, absl::StatusCode::kOk},
      {304, false, absl::StatusCode::kOk},
      {429, false, absl::StatusCode::kUnavailable},
      {500, false, absl::StatusCode::kUnavailable},
      {503, false, absl::StatusCode::kUnavailable},
      {404, false, absl::StatusCode::kNotFound},
      {410, false, absl::StatusCode::kNotFound},
      {401, false, absl::StatusCode::kUnauthenticated},
      {403, false, absl::StatusCode::kPermissionDenied},
      {403, true, absl::StatusCode::kResourceExhausted},
      {422, false, absl::StatusCode::kInvalidArgument},
      {400, false, absl::StatusCode::kInvalidArgument},
      {418, false, absl::StatusCode::kInvalidArgument},
      {301, false, absl::StatusCode::kUnknown},
      {600, false, absl::StatusCode::kUnknown},
  };
  for (const auto& c : cases) {
    absl::Status s = HttpStatusToStatus(c.http, "GET https://x/y", c.rate_limited);
    EXPECT_EQ(s.code(), c.want) << c.http;
    if (!s.ok()) {
      EXPECT_NE(s.message().find("GET https://x/y"), absl::string_view::npos) << s;
    }
  }
  EXPECT_NE(HttpStatusToStatus(410, "u").message().find("gone"), absl::string_view::npos);
}

TEST(HttpHeadersTest, CaseInsensitiveLookup) {
  HttpHeaders h = Headers({{"ETag", "\"abc\""}, {"etag", "\"second\""}});
  EXPECT_EQ(h.Get("etag"), "\"abc\"");
  EXPECT_TRUE(h.Has("ETAG"));
  EXPECT_FALSE(h.Has("Link"));
  EXPECT_EQ(h.Get("Link"), "");
}

}  // namespace
}  // namespace issuescope::crawler

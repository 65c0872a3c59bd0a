// crawler/urls.h: origins, same-origin checks and reference resolution on libcurl's parser.
#include "crawler/urls.h"

#include "gtest/gtest.h"

namespace issuescope::crawler {
namespace {

TEST(UrlsTest, OriginIsLowerCaseWithAnExplicitPort) {
  EXPECT_EQ(ApiOrigin("HTTPS://Api.GitHub.test/repos/x").value(), "https://api.github.test:443");
  EXPECT_EQ(ApiOrigin("http://127.0.0.1:8080/api/v4").value(), "http://127.0.0.1:8080");
  EXPECT_EQ(ApiOrigin("file:///etc/passwd").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ApiOrigin("not a url").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(UrlsTest, SameOriginComparesSchemeHostAndPort) {
  EXPECT_TRUE(SameOrigin("https://api.test/a?page=2", "https://API.test:443/b"));
  EXPECT_FALSE(SameOrigin("https://api.test/a", "http://api.test/a"));
  EXPECT_FALSE(SameOrigin("https://api.test/a", "https://api.test:8443/a"));
  EXPECT_FALSE(SameOrigin("https://api.test/a", "https://evil.example/a"));
  EXPECT_FALSE(SameOrigin("https://api.test/a", ""));
  EXPECT_FALSE(SameOrigin("/relative", "/relative"));
}

TEST(UrlsTest, ReferencesResolveAgainstTheBase) {
  EXPECT_EQ(ResolveReference("https://api.test/repos/o/r", "/repositories/42").value(),
            "https://api.test/repositories/42");
  EXPECT_EQ(ResolveReference("https://api.test/repos/o/r", "https://other.test/x").value(),
            "https://other.test/x");
  EXPECT_EQ(ResolveReference("nope", "/x").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace issuescope::crawler

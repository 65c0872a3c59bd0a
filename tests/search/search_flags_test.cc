// SearchFlags: the search service's command line parsed by CLI11; Validate names each bad flag
// and gives the HTTP listener the gRPC certificate and client CA.
#include "search/search_flags.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/parse_flags.h"

namespace issuescope::search {
namespace {

using ::testing::HasSubstr;

std::string Parse(const std::vector<std::string>& args, SearchFlags* flags) {
  return testing::ParseFlags(args, flags);
}

TEST(SearchFlagsTest, DefaultsAndSearcherOptions) {
  SearchFlags flags;
  ASSERT_EQ(Parse({"--index=/tmp/i", "--count-bound=0", "--max-handles=3"}, &flags), "");
  std::pair<std::string, int> http{"unset", -1};
  ASSERT_TRUE(flags.Validate(&http).ok());
  EXPECT_EQ(flags.listen, "127.0.0.1:50051");
  EXPECT_EQ(flags.searcher.count_bound, 0u);
  EXPECT_EQ(flags.searcher.max_handles, 3);
  EXPECT_EQ(http.second, -1) << "no --http-listen, no address";
}

TEST(SearchFlagsTest, HttpListenIsParsed) {
  SearchFlags flags;
  ASSERT_EQ(Parse({"--index=/tmp/i", "--http-listen=127.0.0.1:8080"}, &flags), "");
  std::pair<std::string, int> http;
  ASSERT_TRUE(flags.Validate(&http).ok());
  EXPECT_EQ(http, (std::pair<std::string, int>{"127.0.0.1", 8080}));
}

TEST(SearchFlagsTest, EveryRefusalNamesItsFlag) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--http-cors-origin=example"}, "--http-cors-origin 'example' is not an origin"},
      {{"--http-cors-origin=https://a.test/path"}, "no path, blanks or lists"},
      {{"--http-cors-origin=https://a.test, https://b.test"}, "no path, blanks or lists"},
      {{"--http-port-file=/tmp/p"}, "--http-port-file needs --http-listen"},
      {{"--http-tls-cert=/tmp/c", "--http-tls-key=/tmp/k"}, "need --http-listen"},
      {{"--http-listen=nonsense"}, "--http-listen"},
      {{"--tls-cert=/nonexistent/cert.pem"}, "--tls"},
  };
  for (const Case& c : cases) {
    SearchFlags flags;
    std::vector<std::string> args = {"--index=/tmp/i"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    ASSERT_EQ(Parse(args, &flags), "") << c.args[0];
    std::pair<std::string, int> http;
    const absl::Status s = flags.Validate(&http);
    EXPECT_FALSE(s.ok()) << c.args[0];
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.message)) << c.args[0];
  }
  SearchFlags star;
  ASSERT_EQ(Parse({"--index=/tmp/i", "--http-cors-origin=*"}, &star), "");
  std::pair<std::string, int> http;
  EXPECT_TRUE(star.Validate(&http).ok());
}

TEST(SearchFlagsTest, TheParserChecksRanges) {
  SearchFlags a, b;
  EXPECT_THAT(Parse({"--index=/tmp/i", "--max-handles=999"}, &a), HasSubstr("--max-handles"));
  EXPECT_THAT(Parse({"--max-handles=1"}, &b), HasSubstr("--index"));
}

}  // namespace
}  // namespace issuescope::search

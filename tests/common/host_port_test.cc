// Addresses as flags and the coordinator write them (common/host_port.h).
#include "common/host_port.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace issuescope {
namespace {

TEST(HostPortTest, SplitsAndJoins) {
  struct Case {
    std::string address;
    std::string host;  // "!" = an error
    int port;
  };
  const std::vector<Case> cases = {
      {"10.0.0.5:50052", "10.0.0.5", 50052}, {"db.example.org:1", "db.example.org", 1},
      {"[::1]:50052", "::1", 50052},          {"[::]:0", "::", 0},
      {":50052", "", 50052},                  {"0.0.0.0:80", "0.0.0.0", 80},
      {"no-port", "!", 0},                    {"host:", "!", 0},
      {"host:65536", "!", 0},                 {"host:-1", "!", 0},
      {"::1:80", "!", 0},                     {"[::1:80", "!", 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.address);
    auto split = SplitHostPort(c.address);
    if (c.host == "!") {
      EXPECT_EQ(split.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_NE(split.status().message().find(c.address), absl::string_view::npos);
      continue;
    }
    ASSERT_TRUE(split.ok()) << split.status();
    EXPECT_EQ(split->host, c.host);
    EXPECT_EQ(split->port, c.port);
    EXPECT_EQ(JoinHostPort(split->host, split->port), c.address);
  }
}

TEST(HostPortTest, WildcardHosts) {
  for (const char* host : {"", "0.0.0.0", "::", "[::]"}) EXPECT_TRUE(IsWildcardHost(host)) << host;
  for (const char* host : {"127.0.0.1", "::1", "localhost", "10.0.0.5"}) {
    EXPECT_FALSE(IsWildcardHost(host)) << host;
  }
}

}  // namespace
}  // namespace issuescope

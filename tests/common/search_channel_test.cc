// The search clients' target (common/grpc_channel.h, SearchChannelTarget): one address as it
// is, a list of replicas as one ipv4:/ipv6: list, and a clear error for what is not an address.
#include "absl/strings/match.h"
#include "common/grpc_channel.h"
#include "gtest/gtest.h"

namespace issuescope {
namespace {

TEST(SearchChannelTargetTest, OneAddressStaysAsItIs) {
  auto t = SearchChannelTarget("search.internal:50051");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t, "search.internal:50051");
}

TEST(SearchChannelTargetTest, ReplicasBecomeOneAddressList) {
  auto t = SearchChannelTarget("127.0.0.1:7001, 127.0.0.2:7002");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t, "ipv4:127.0.0.1:7001,127.0.0.2:7002");
  // A name with an IPv4 address resolves to it (localhost also has ::1).
  t = SearchChannelTarget("localhost:7001,127.0.0.1:7002");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t, "ipv4:127.0.0.1:7001,127.0.0.1:7002");
  t = SearchChannelTarget("[::1]:7001,[::1]:7002");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t, "ipv6:[::1]:7001,[::1]:7002");
}

TEST(SearchChannelTargetTest, BadAddressesAreNamed) {
  for (const char* bad : {"", "nohost", "host:0", "127.0.0.1:1,:7", "127.0.0.1:1,x:y",
                          "127.0.0.1:70000"}) {
    auto t = SearchChannelTarget(bad);
    EXPECT_FALSE(t.ok()) << bad;
    EXPECT_TRUE(absl::IsInvalidArgument(t.status())) << bad << ": " << t.status();
  }
  auto mixed = SearchChannelTarget("127.0.0.1:1,[::1]:2");
  ASSERT_FALSE(mixed.ok());
  EXPECT_TRUE(absl::StrContains(mixed.status().message(), "mix IPv4 and IPv6")) << mixed.status();
  auto unknown = SearchChannelTarget("127.0.0.1:1,no-such-host.invalid:2");
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(absl::StrContains(unknown.status().message(), "no-such-host.invalid:2"))
      << unknown.status();
}

}  // namespace
}  // namespace issuescope

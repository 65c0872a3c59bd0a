// Redact (common/logging.h): what URLs in logs and errors keep and what they lose.
#include "common/logging.h"

#include "gtest/gtest.h"

namespace issuescope {
namespace {

TEST(RedactTest, UserInfoAndSecretParametersAreReplaced) {
  EXPECT_EQ(Redact("https://user:s3cret@api.test/repos/o/r"),
            "https://REDACTED@api.test/repos/o/r");
  EXPECT_EQ(Redact("https://api.test/issues?access_token=abc&page=2"),
            "https://api.test/issues?access_token=REDACTED&page=2");
  EXPECT_EQ(Redact("https://api.test/x?page=1&PRIVATE_TOKEN=abc#frag"),
            "https://api.test/x?page=1&PRIVATE_TOKEN=REDACTED#frag");
  EXPECT_EQ(Redact("https://api.test/x?token=a&client_secret=b"),
            "https://api.test/x?token=REDACTED&client_secret=REDACTED");
}

TEST(RedactTest, OtherUrlsAreLeftAsTheyAre) {
  EXPECT_EQ(Redact("https://api.test/repos/o/r/issues?page=3&per_page=100"),
            "https://api.test/repos/o/r/issues?page=3&per_page=100");
  EXPECT_EQ(Redact("https://api.test/search?q=tokenizer&mytoken=1"),
            "https://api.test/search?q=tokenizer&mytoken=1");
  EXPECT_EQ(Redact(""), "");
}

}  // namespace
}  // namespace issuescope

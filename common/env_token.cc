#include "common/env_token.h"

#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace issuescope {

absl::StatusOr<std::string> TokenFromEnvironment(const std::string& var,
                                                 const std::string& flag) {
  if (var.empty()) return std::string();
  const char* value = std::getenv(var.c_str());
  std::string token = value == nullptr ? "" : std::string(absl::StripAsciiWhitespace(value));
  if (token.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": environment variable ", var, " is unset or empty"));
  }
  return token;
}

}  // namespace issuescope

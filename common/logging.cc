#include "common/logging.h"

#include <regex>

#include "spdlog/sinks/stdout_color_sinks.h"

namespace issuescope {

void InitLogging(absl::string_view component, absl::string_view level) {
  auto logger = spdlog::stderr_color_mt(std::string(component));
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ [%n] %v");
  spdlog::set_level(spdlog::level::from_str(std::string(level)));
}

std::string Redact(absl::string_view url) {
  static const std::regex kUserInfo(R"(://[^/@]+@)");
  static const std::regex kSecretParam(
      R"(([?&](access_token|token|private_token|client_secret)=)[^&#]*)",
      std::regex::icase);
  std::string out = std::regex_replace(std::string(url), kUserInfo, "://REDACTED@");
  return std::regex_replace(out, kSecretParam, "$1REDACTED");
}

}  // namespace issuescope

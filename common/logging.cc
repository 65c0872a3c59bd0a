#include "common/logging.h"

#include "re2/re2.h"
#include "spdlog/sinks/stdout_color_sinks.h"

namespace issuescope {

void InitLogging(absl::string_view component, absl::string_view level) {
  auto logger = spdlog::stderr_color_mt(std::string(component));
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ [%n] %v");
  spdlog::set_level(spdlog::level::from_str(std::string(level)));
}

std::string Redact(absl::string_view url) {
  static const re2::RE2 kUserInfo(R"(://[^/@]+@)");
  static const re2::RE2 kSecretParam(
      R"((?i)([?&](access_token|token|private_token|client_secret)=)[^&#]*)");
  std::string out(url);
  re2::RE2::GlobalReplace(&out, kUserInfo, "://REDACTED@");
  re2::RE2::GlobalReplace(&out, kSecretParam, "\\1REDACTED");
  return out;
}

}  // namespace issuescope

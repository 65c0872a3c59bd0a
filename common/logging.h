// Logging: spdlog, configured once in each binary's main(). Logs go to stderr.
// Never log a token: log Redact(url) for URLs that may carry credentials in the query.
#pragma once

#include <string>
#include "absl/strings/string_view.h"

#include "spdlog/spdlog.h"

namespace issuescope {

// InitLogging sets the process-wide level ("trace".."off") and pattern, with `component` in
// every line.
void InitLogging(absl::string_view component, absl::string_view level);

// Redact removes credentials from a URL: the userinfo part and the values of query parameters
// named access_token, token, private_token, client_secret.
std::string Redact(absl::string_view url);

}  // namespace issuescope

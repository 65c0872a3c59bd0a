// Secrets from the environment: tokens are named by flags (--token-env VAR, --cluster-token-env
// VAR, ...) and read from the process environment, never from the command line, so they do not
// show in `ps` or shell history.
//
// Thread-safe as getenv is (no concurrent setenv).
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace issuescope {

// TokenFromEnvironment returns the value of environment variable `var` (surrounding whitespace
// removed), "" when `var` is empty. INVALID_ARGUMENT naming `flag` and the variable (never its
// value) when `var` is given but unset or empty.
absl::StatusOr<std::string> TokenFromEnvironment(const std::string& var, const std::string& flag);

}  // namespace issuescope

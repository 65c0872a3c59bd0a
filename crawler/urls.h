// URL helpers of the crawler, on libcurl's URL parser (curl_url): the origin a token is bound
// to, and where a redirect or a next-page link may lead.
//
// Plain functions; thread-safe.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace issuescope::crawler {

// ApiOrigin returns "scheme://host:port" of an http(s) URL: scheme and host in lower case, the
// port explicit (80/443 by default). INVALID_ARGUMENT for other schemes or an unparsable URL.
absl::StatusOr<std::string> ApiOrigin(absl::string_view url);

// SameOrigin reports whether two http(s) URLs have one origin (false when either is not one).
bool SameOrigin(absl::string_view a, absl::string_view b);

// ResolveReference resolves `reference` (absolute, or relative such as "/repos/1") against the
// absolute URL `base`; INVALID_ARGUMENT when either does not parse.
absl::StatusOr<std::string> ResolveReference(absl::string_view base, absl::string_view reference);

}  // namespace issuescope::crawler

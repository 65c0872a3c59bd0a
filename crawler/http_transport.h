// HttpTransport: the crawler's seam to the network. A request and a response are plain structs;
// `HttpTransport::Send` performs one exchange. Production uses CurlTransport (libcurl); tests use
// a scripted fake (tests/crawler/fake_transport.h) or the tracker simulator.
//
// Contract: Send returns a response for every HTTP status, including 4xx/5xx (an HTTP error is
// not a transport error). Its errors: DEADLINE_EXCEEDED for a timeout; INVALID_ARGUMENT for a URL
// that is malformed or not http(s); RESOURCE_EXHAUSTED for a body over the transport's size
// limit; INTERNAL when the HTTP library cannot be set up; UNAVAILABLE for every other failure
// (connection refused or reset, DNS, TLS). Redirects are never followed by a transport.
// Implementations must be safe to call from several threads at once.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace issuescope::crawler {

// HttpHeaders is an ordered list of (name, value) pairs with case-insensitive lookup.
struct HttpHeaders {
  // The headers in the order received or to be sent.
  std::vector<std::pair<std::string, std::string>> entries;

  // Add appends a header.
  void Add(std::string name, std::string value) {
    entries.emplace_back(std::move(name), std::move(value));
  }
  // Get returns the value of the first header named `name` (any case), or "" when absent.
  std::string Get(absl::string_view name) const;
  // Has reports whether a header named `name` (any case) is present.
  bool Has(absl::string_view name) const;
};

// HttpRequest is one request to send.
struct HttpRequest {
  // "GET", "HEAD", ...
  std::string method = "GET";
  // Absolute URL, e.g. "https://api.github.com/repos/o/r/issues?per_page=100".
  std::string url;
  // Request headers (e.g. Authorization, If-None-Match, User-Agent).
  HttpHeaders headers;
  // Whole-request timeout; zero means the transport's default.
  absl::Duration timeout = absl::ZeroDuration();
  // Request body, sent with POST (e.g. a GraphQL query); empty for GET.
  std::string body;
};

// HttpResponse is what the server answered.
struct HttpResponse {
  // HTTP status code, e.g. 200, 304, 404.
  int status = 0;
  // Response headers (the final response's, when the transport saw several).
  HttpHeaders headers;
  // Decoded body (gzip already undone).
  std::string body;
  // The URL that produced this response (the request URL; redirects are not followed).
  std::string effective_url;
};

// HttpTransport sends requests. Thread-safe.
class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  // Send performs one HTTP exchange; see the file comment for the error contract.
  virtual absl::StatusOr<HttpResponse> Send(const HttpRequest& request) = 0;
};

// HttpStatusToStatus maps an HTTP status to an absl::Status: 2xx/304 → OK; 429 and 5xx →
// UNAVAILABLE; 404 → NOT_FOUND; 410 → NOT_FOUND ("gone"); 401 → UNAUTHENTICATED;
// 403 → RESOURCE_EXHAUSTED when `rate_limited`, else PERMISSION_DENIED; 422 and every other 4xx →
// INVALID_ARGUMENT ("refused by the tracker"); 3xx other than 304 and anything else → UNKNOWN.
// FAILED_PRECONDITION is never returned: it is kept for fencing (a stale lease epoch).
// `what` (e.g. a redacted URL) starts the message.
absl::Status HttpStatusToStatus(int http_status, absl::string_view what,
                                bool rate_limited = false);

}  // namespace issuescope::crawler

// CurlTransport: the production HttpTransport, on libcurl. Each Send uses its own easy handle,
// so one CurlTransport is safe to share between threads. It fetches only http:// and https://
// URLs (any other scheme, e.g. file://, is INVALID_ARGUMENT before libcurl sees it, and libcurl
// is restricted to those two protocols as well), accepts gzip/deflate (the body is
// returned decoded), never follows redirects (the caller sees 301/302/307 with Location), and
// aborts a response whose body exceeds a size limit. Error messages carry the URL through
// Redact() and never a request header (so never a token).
#pragma once

#include <cstdint>

#include "crawler/http_transport.h"

namespace issuescope::crawler {

// CurlTransportOptions configure a CurlTransport.
struct CurlTransportOptions {
  // Whole-request timeout when the request sets none. Default: 60 s.
  absl::Duration request_timeout = absl::Seconds(60);
  // Time allowed to establish the connection. Default: 10 s.
  absl::Duration connect_timeout = absl::Seconds(10);
  // Largest accepted (decoded) body in bytes; larger responses fail with RESOURCE_EXHAUSTED.
  // Default: 64 MiB.
  int64_t max_body_bytes = int64_t{64} << 20;
};

// CurlTransport sends requests with libcurl. Thread-safe.
class CurlTransport : public HttpTransport {
 public:
  // CurlTransport initialises libcurl globally once per process.
  explicit CurlTransport(CurlTransportOptions options = {});
  // Send performs one exchange; see HttpTransport.
  absl::StatusOr<HttpResponse> Send(const HttpRequest& request) override;

 private:
  CurlTransportOptions options_;
};

}  // namespace issuescope::crawler

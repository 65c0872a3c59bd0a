#include "crawler/curl_transport.h"

#include <curl/curl.h>

#include <memory>
#include <mutex>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace issuescope::crawler {
namespace {

// Collects the body and the headers of the final response while curl reads.
struct Collector {
  HttpResponse* response;
  int64_t max_body_bytes;
  CURL* handle = nullptr;
  bool too_large = false;
};

size_t WriteBody(char* data, size_t size, size_t nmemb, void* user) {
  auto* c = static_cast<Collector*>(user);
  const size_t n = size * nmemb;
  if (static_cast<int64_t>(c->response->body.size() + n) > c->max_body_bytes) {
    c->too_large = true;
    return 0;  // makes curl abort with CURLE_WRITE_ERROR
  }
  if (c->response->body.empty() && c->handle != nullptr) {
    // Sized once from Content-Length (when sent, and within the limit): a large page is not
    // grown by doubling, which would hold up to twice its size while it is copied.
    curl_off_t length = -1;
    if (curl_easy_getinfo(c->handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK &&
        length > 0 && length <= c->max_body_bytes) {
      c->response->body.reserve(static_cast<size_t>(length));
    }
  }
  c->response->body.append(data, n);
  return n;
}

size_t WriteHeader(char* data, size_t size, size_t nmemb, void* user) {
  auto* c = static_cast<Collector*>(user);
  const size_t n = size * nmemb;
  absl::string_view line(data, n);
  line = absl::StripTrailingAsciiWhitespace(line);
  if (absl::StartsWith(line, "HTTP/")) {
    c->response->headers.entries.clear();  // a new response (e.g. after 100 Continue)
    return n;
  }
  const size_t colon = line.find(':');
  if (colon != absl::string_view::npos) {
    c->response->headers.Add(
        std::string(absl::StripAsciiWhitespace(line.substr(0, colon))),
        std::string(absl::StripAsciiWhitespace(line.substr(colon + 1))));
  }
  return n;
}

struct EasyDeleter {
  void operator()(CURL* h) const { curl_easy_cleanup(h); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

long Millis(absl::Duration d) { return static_cast<long>(absl::ToInt64Milliseconds(d)); }

// IsHttpUrl reports whether `url` starts with http:// or https:// (any case).
bool IsHttpUrl(absl::string_view url) {
  return absl::StartsWithIgnoreCase(url, "http://") || absl::StartsWithIgnoreCase(url, "https://");
}

}  // namespace

CurlTransport::CurlTransport(CurlTransportOptions options) : options_(options) {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

absl::StatusOr<HttpResponse> CurlTransport::Send(const HttpRequest& request) {
  const std::string where = Redact(request.url);
  if (!IsHttpUrl(request.url)) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": only http:// and https:// URLs are fetched (the tracker API URL must be one)"));
  }
  std::unique_ptr<CURL, EasyDeleter> easy(curl_easy_init());
  if (!easy) return absl::InternalError("curl_easy_init failed");
  CURL* h = easy.get();
  // Defence in depth behind IsHttpUrl: libcurl itself refuses every other scheme (file://,
  // ftp://, gopher://, ...), for the request and for any redirect (none is followed anyway).
  // CURLOPT_PROTOCOLS_STR exists since libcurl 7.85 (Debian 12 has 7.88); older ones take the
  // bitmask.
#if LIBCURL_VERSION_NUM >= 0x075500
  if (curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
      curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https") != CURLE_OK) {
    return absl::InternalError("libcurl refused to restrict protocols to http and https");
  }
#else
  curl_easy_setopt(h, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
  curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS,
                   static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif

  HttpResponse response;
  response.effective_url = request.url;
  Collector collector{&response, options_.max_body_bytes, h};

  std::unique_ptr<curl_slist, SlistDeleter> header_list;
  for (const auto& [name, value] : request.headers.entries) {
    const std::string line = absl::StrCat(name, ": ", value);
    curl_slist* next = curl_slist_append(header_list.get(), line.c_str());
    if (next == nullptr) return absl::InternalError("curl_slist_append failed");
    header_list.release();
    header_list.reset(next);
  }

  const absl::Duration timeout =
      request.timeout > absl::ZeroDuration() ? request.timeout : options_.request_timeout;
  curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
  if (request.method == "POST") {
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
  }
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  if (request.method == "HEAD") curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, header_list.get());
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "gzip, deflate");
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, Millis(timeout));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, Millis(options_.connect_timeout));
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &WriteBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &collector);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &WriteHeader);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &collector);

  const CURLcode rc = curl_easy_perform(h);
  if (collector.too_large) {
    return absl::ResourceExhaustedError(absl::StrCat(
        where, ": response body exceeds the limit of ", options_.max_body_bytes, " bytes"));
  }
  if (rc != CURLE_OK) {
    const std::string msg = absl::StrCat(where, ": ", curl_easy_strerror(rc));
    switch (rc) {
      case CURLE_OPERATION_TIMEDOUT: return absl::DeadlineExceededError(msg);
      case CURLE_URL_MALFORMAT:
      case CURLE_UNSUPPORTED_PROTOCOL: return absl::InvalidArgumentError(msg);
      default: return absl::UnavailableError(msg);
    }
  }
  long code = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
  response.status = static_cast<int>(code);
  return response;
}

}  // namespace issuescope::crawler

#include "urls.h"

#include <curl/curl.h>

#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace issuescope::crawler {
namespace {

struct UrlDeleter {
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};

// Part returns one part of a parsed URL ("" when absent).
std::string Part(CURLU* url, CURLUPart part, unsigned int flags = 0) {
  char* value = nullptr;
  if (curl_url_get(url, part, &value, flags) != CURLUE_OK || value == nullptr) return "";
  std::string out(value);
  curl_free(value);
  return out;
}

}  // namespace

absl::StatusOr<std::string> ApiOrigin(absl::string_view url) {
  std::unique_ptr<CURLU, UrlDeleter> parsed(curl_url());
  if (parsed == nullptr) return absl::ResourceExhaustedError("curl_url: out of memory");
  const std::string text(url);
  if (curl_url_set(parsed.get(), CURLUPART_URL, text.c_str(), 0) != CURLUE_OK) {
    return absl::InvalidArgumentError(absl::StrCat("'", url, "' is not a URL"));
  }
  const std::string scheme = absl::AsciiStrToLower(Part(parsed.get(), CURLUPART_SCHEME));
  if (scheme != "http" && scheme != "https") {
    return absl::InvalidArgumentError(
        absl::StrCat("'", url, "' is not an http:// or https:// URL"));
  }
  const std::string host = absl::AsciiStrToLower(Part(parsed.get(), CURLUPART_HOST));
  const std::string port = Part(parsed.get(), CURLUPART_PORT, CURLU_DEFAULT_PORT);
  if (host.empty()) return absl::InvalidArgumentError(absl::StrCat("'", url, "' names no host"));
  return absl::StrCat(scheme, "://", host, ":", port);
}

bool SameOrigin(absl::string_view a, absl::string_view b) {
  absl::StatusOr<std::string> oa = ApiOrigin(a);
  absl::StatusOr<std::string> ob = ApiOrigin(b);
  return oa.ok() && ob.ok() && *oa == *ob;
}

absl::StatusOr<std::string> ResolveReference(absl::string_view base, absl::string_view reference) {
  std::unique_ptr<CURLU, UrlDeleter> parsed(curl_url());
  if (parsed == nullptr) return absl::ResourceExhaustedError("curl_url: out of memory");
  const std::string b(base);
  const std::string r(reference);
  if (curl_url_set(parsed.get(), CURLUPART_URL, b.c_str(), 0) != CURLUE_OK) {
    return absl::InvalidArgumentError(absl::StrCat("'", base, "' is not a URL"));
  }
  if (curl_url_set(parsed.get(), CURLUPART_URL, r.c_str(), 0) != CURLUE_OK) {
    return absl::InvalidArgumentError(absl::StrCat("'", reference, "' is not a URL reference"));
  }
  char* out = nullptr;
  if (curl_url_get(parsed.get(), CURLUPART_URL, &out, 0) != CURLUE_OK || out == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("'", reference, "' does not resolve"));
  }
  std::string resolved(out);
  curl_free(out);
  return resolved;
}

}  // namespace issuescope::crawler

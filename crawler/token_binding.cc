#include "crawler/token_binding.h"

#include <curl/curl.h>

#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/repo_slug.h"

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

std::string FlagOf(v1::Tracker tracker) {
  switch (tracker) {
    case v1::TRACKER_GITLAB: return "--gitlab-api";
    case v1::TRACKER_GITEE: return "--gitee-api";
    default: return "--github-api";
  }
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

absl::Status CheckTokenDestination(absl::string_view api_url, absl::string_view configured_url,
                                   v1::Tracker tracker) {
  absl::StatusOr<std::string> want = ApiOrigin(configured_url);
  if (!want.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(FlagOf(tracker), ": ", want.status().message()));
  }
  absl::StatusOr<std::string> got = ApiOrigin(api_url);
  if (!got.ok()) return got.status();
  if (*got == *want) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat(
      "the repository's API ", *got, " is not this worker's API for its tracker (", *want,
      "): the worker's tokens are sent only there. Start the worker with ", FlagOf(tracker),
      " ", *got, " if that API is to be crawled with them"));
}

absl::Status CheckRepositoryTokenBinding(const CrawlerOptions& options,
                                         const v1::RepositoryRef& repo) {
  if (repo.api_url().empty()) return absl::OkStatus();  // the worker's own API
  const v1::Tracker kind = repo.tracker();
  bool secret = false;
  if (auto pool = options.pools.find(kind); pool != options.pools.end() && pool->second) {
    secret = pool->second->HasSecret();
  } else if (auto token = options.tokens.find(kind); token != options.tokens.end()) {
    secret = !token->second.empty();
  } else {
    secret = !options.token.empty();
  }
  if (!secret) return absl::OkStatus();
  const auto api = options.api_urls.find(kind);
  const std::string configured = api != options.api_urls.end() && !api->second.empty()
                                     ? api->second
                                     : DefaultApiUrl(kind);
  absl::Status bound = CheckTokenDestination(repo.api_url(), configured, kind);
  if (bound.ok()) return bound;
  return absl::Status(bound.code(), absl::StrCat(RepoSlug(repo), ": ", bound.message()));
}

}  // namespace issuescope::crawler

#include "token_binding.h"

#include "absl/strings/str_cat.h"
#include "common/repo_slug.h"

namespace issuescope::crawler {
namespace {

std::string FlagOf(v1::Tracker tracker) {
  switch (tracker) {
    case v1::TRACKER_GITLAB: return "--gitlab-api";
    case v1::TRACKER_GITEE: return "--gitee-api";
    default: return "--github-api";
  }
}

}  // namespace

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

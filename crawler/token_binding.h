// Token binding: a tracker token goes only to the API it was configured for. A lease names its
// repository's API base URL (RepositoryRef.api_url, set by whoever added the repository); a
// worker that holds tokens for that tracker crawls it only when the URL's origin (scheme, host,
// port) is the worker's own API for the tracker (--github-api, --gitlab-api, --gitee-api, or the
// tracker's public API). Otherwise the crawl fails before any request, with an error naming both
// origins (never the token): whoever can add a repository must not be able to make the workers
// send their tokens to a host of their choosing (issue 16).
//
// Pure functions; thread-safe.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "crawler/repo_crawler.h"
#include "urls.h"
#include "issuescope/v1/model.pb.h"

namespace issuescope::crawler {

// CheckTokenDestination returns OK when `api_url` (the crawl's API base URL) has the origin of
// `configured_url` (the worker's API for `tracker`); PERMISSION_DENIED naming both origins and
// the flag that configures the tracker's API otherwise.
absl::Status CheckTokenDestination(absl::string_view api_url, absl::string_view configured_url,
                                   v1::Tracker tracker);

// CheckRepositoryTokenBinding applies CheckTokenDestination to a crawl of `repo` with `options`:
// OK when the crawl would send no secret for the repository's tracker (no token, or anonymous
// pool) or names no API of its own (it then uses the worker's); the repository's slug leads the
// error message.
absl::Status CheckRepositoryTokenBinding(const CrawlerOptions& options,
                                         const v1::RepositoryRef& repo);

}  // namespace issuescope::crawler

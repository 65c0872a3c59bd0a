// `issuescope crawl`: the one-machine mode. A local coordinator (its core and gRPC service on an
// in-process channel), the real CrawlerWorker (several repositories in parallel) and the indexer
// run in this process over a data directory:
//
//   DIR/coordinator  catalog, cursors, progress (RocksDB)
//   DIR/store        issues, comments, change log (RocksDB)
//   DIR/index        Xapian index
//
// Re-running it crawls incrementally from the stored cursors (conditional requests). GitHub,
// GitLab and Gitee repositories may be mixed; each tracker has its own API URL and TokenPool
// (several tokens crawl several repositories in parallel). With a page limit per lease, paused
// crawls are leased again until every repository is done.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "crawler/issue_store.h"
#include "indexer/index_writer.h"
#include "issuescope/v1/model.pb.h"

namespace issuescope::cli {

struct CrawlCommandOptions {
  // Repositories as "github:OWNER/NAME", "gitlab:GROUP[/SUB]/NAME" or "gitee:OWNER/NAME".
  std::vector<std::string> repos;
  // Data directory (created if missing).
  std::string data_dir;
  // API base URL for every tracker without an entry in `api_urls`; empty means the tracker's
  // public default.
  std::string api_url;
  // API base URL per tracker (--github-api, --gitlab-api, --gitee-api).
  std::map<v1::Tracker, std::string> api_urls;
  // Name of the environment variable holding the token of every tracker without an entry in
  // `token_envs`; empty means anonymous.
  std::string token_env;
  // Per tracker: "[ACCOUNT=]ENVVAR" specs whose tokens form the tracker's pool
  // (crawler::TokensFromEnv; each variable may hold a comma-separated list).
  std::map<v1::Tracker, std::vector<std::string>> token_envs;
  // Requests per Gitee token and hour to assume (Gitee sends no rate headers); 0: not counted.
  int64_t gitee_budget = 0;
  // Listing pages per lease before a crawl pauses and continues under a new lease; 0: no limit.
  int max_pages_per_lease = 0;
  // List GitHub issues over GraphQL (crawler::CrawlerOptions::github_graphql).
  bool graphql = false;
  // Hours between presence sweeps with --graphql (0: every crawl; negative: never).
  double presence_sweep_h = 24;
  double presence_sweep_budget = 0.25;  // CrawlerOptions::presence_sweep_budget
  // First bench of a token after a secondary limit without Retry-After.
  absl::Duration secondary_backoff = absl::Seconds(60);
  // Ignore cursors and crawl everything again.
  bool full = false;
  // Repositories crawled at once.
  int parallel = 4;
  // Keep pull requests (they come through the issues API).
  bool include_pull_requests = true;
  // Print JSON summary instead of text.
  bool quiet = false;
};

// RunCrawl runs the crawl and prints progress to stderr and a summary to stdout. Returns a
// non-OK status naming what went wrong (bad repository, unreachable API, unset token variable,
// unwritable data directory, a repository that failed).
absl::Status RunCrawl(const CrawlCommandOptions& options);


// CatchUpIndex applies every change of `store` not yet in `writer`; returns events applied.
absl::StatusOr<int64_t> CatchUpIndex(crawler::IssueStore& store, indexer::IndexWriter& writer);

// EnsureDirectory creates `dir` (and parents) and checks it is writable.
absl::Status EnsureDirectory(const std::string& dir);

}  // namespace issuescope::cli

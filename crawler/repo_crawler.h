// RepoCrawler crawls one lease: one repository's issue listing and its comments (a
// repository-wide listing, or per changed issue), from the lease's cursor, into the worker's
// IssueStore under the lease's fencing epoch. What differs per forge (URLs, auth, parsing,
// paging and rate-limit headers) is a Tracker (crawler/tracker.h: GitHub, GitLab, Gitee), chosen
// by the lease's RepositoryRef.tracker; this loop is the same for all of them.
//
// Requests are minimal: the repository GET (a 301/302/307/308 to the same host is
// followed once and the new full name reported as moved_to; 404/410 → NOT_FOUND "repository
// gone"), then each listing sorted by updated_at ascending (100 per page), following the
// tracker's next page; incremental crawls send the tracker's since parameter and
// `If-None-Match` on the first page. Listing pages are pipelined
// (CrawlerOptions.pipeline_pages): page n+1, whose URL page n's headers give, is requested while
// page n is parsed and stored, so a crawl has at most two requests in flight (the prefetch, and
// a GitLab notes request or the re-fetch of a page whose body did not parse), each on its own
// token. Pages are stored in order and the cursor only moves after they are; a stopped crawl
// (error, revoked lease, Cancel) abandons the prefetch: it is not retried and its response is
// dropped, so at most the one request already sent is spent. With max_pages_per_lease the crawl
// pauses after that many pages with its cursor saved (CrawlProgress.paused; not done), so a
// huge repository does not hold a worker for hours: the next lease continues from the cursor.
// A shift repair pass re-lists the tail
// of a listing when items changed while it was paged (see repo_crawler.cc).
// Hostile or broken listings: a next page that repeats a URL already listed in the same pass, or
// a next page named by a page with no items, stops the crawl with INVALID_ARGUMENT naming the
// repository and the URL (pages stored so far stay; the listing's cursor does not move). An item
// that cannot be used (crawler/github_parse.h, BadItem; or an updated_at more than
// max_clock_skew after the response's Date) is quarantined (IssueStore::PutQuarantined, counted
// in CrawlCounters.items_quarantined, logged with the repository and the item) and the rest of
// its page is stored: such errors are deterministic, so they are not retried. Every request takes
// a token from the tracker's TokenPool (serial per token; a spent token waits for its reset; a
// 403/429 secondary limit benches the token until Retry-After or an exponential backoff, and the
// request is retried with another token); 5xx/transport errors are retried with a seeded,
// jittered exponential backoff. A 422 on a deep page (GitHub limits page=N on large listings)
// restarts the listing from the greatest updated_at stored so far (the since cursor).
//
// Ownership: borrows the transport, store and clock (all must outlive the crawler).
// Thread-safety: one thread runs Crawl (which runs each prefetch on a thread of its own and joins
// it before returning); Cancel may be called from any thread.
// The token is added only to the request being sent (a header, or Gitee's access_token query
// parameter); it never appears in a status, a log line or stored data.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "crawler/http_transport.h"
#include "crawler/issue_store.h"
#include "crawler/token_pool.h"
#include "issuescope/v1/coordinator.pb.h"

namespace issuescope::crawler {

// CrawlerOptions configure a RepoCrawler. Every field documents its Default.
struct CrawlerOptions {
  // Tracker token for every tracker without an entry in `tokens` (GitHub: "Authorization:
  // Bearer", GitLab: "PRIVATE-TOKEN", Gitee: access_token); never logged. Default: none.
  std::string token;
  // Tokens per tracker; a crawl uses only its own tracker's. Default: empty.
  std::map<v1::Tracker, std::string> tokens;
  // API base URL per tracker, for leases whose RepositoryRef.api_url is empty (which otherwise
  // use the tracker's public default). Default: empty.
  std::map<v1::Tracker, std::string> api_urls;
  // Most listing pages (issue, comment and note pages) fetched under one lease; 0 = no limit.
  // The crawl then pauses with its cursor saved (the notes of the last issue page complete it,
  // so a lease may exceed the limit by those). Default: 0.
  int max_pages_per_lease = 0;
  // Items per listing page. Default: 100 (GitHub's maximum).
  int per_page = 100;
  // Retries of one request after 5xx, transport errors or rate limiting. Default: 5.
  int max_retries = 5;
  // First backoff after a 5xx/transport error; doubles per retry. Default: 1 s.
  absl::Duration initial_backoff = absl::Seconds(1);
  // Upper bound of one backoff (and of a rate-limit wait without a reset time). Default: 60 s.
  absl::Duration max_backoff = absl::Seconds(60);
  // User-Agent header (GitHub requires one). Default: "issuescope/0.1".
  std::string user_agent = "issuescope/0.1";
  // Timeout of one request. Default: 60 s.
  absl::Duration request_timeout = absl::Seconds(60);
  // Shift repair passes per listing before giving up on stability. Default: 3.
  int max_repair_passes = 3;
  // Seed of the backoff jitter (deterministic under a FakeClock). Default: 1.
  uint64_t jitter_seed = 1;
  // Token pools per tracker, shared by every crawl of the process (crawler/token_pool.h): a
  // crawl takes a token from its tracker's pool for each request (serial per token, never over
  // budget, benched on secondary limits, waiting for a spent token's reset). A tracker without
  // one gets a pool of its one token (`tokens`, else `token`; OneTokenPool) when the RepoCrawler
  // is made, shared by all its crawls. Default: empty.
  std::map<v1::Tracker, std::shared_ptr<TokenPool>> pools;
  // Request the next listing page while the current one is parsed and stored (see the file
  // comment); false sends every request after the previous page is stored. Request counts are
  // the same either way. Default: true.
  bool pipeline_pages = true;
  // Keep the raw body of every listing page in the store (IssueStore::PutRawPage) so
  // `issuescope reparse` can re-derive the records. Default: true.
  bool keep_raw_pages = true;
  // List GitHub issues over GraphQL (crawler/graphql_lister.h): issue pages with their comments
  // nested, charged to the token's GraphQL budget (points) instead of REST requests; REST still
  // confirms an unchanged repository (304s cost nothing) and takes over when GraphQL is not
  // served or its budget is spent. Needs a token (GraphQL refuses anonymous requests) and is not
  // used for leases that include pull requests (GraphQL's issues are issues only). Default: false.
  bool github_graphql = false;
  // The GitHub tokens' GraphQL budget, shared by every crawl of the process; null: a pool of
  // the crawl's one GitHub token. Default: null.
  std::shared_ptr<TokenPool> graphql_pool;
  // The node cap a GraphQL comments pass starts with (comments asked for per query; it adapts
  // to the tracker's cut-offs, crawler/graphql_lister.h: kStartNodesPerQuery). Default: 5,000.
  int64_t graphql_max_nodes = 5000;
  // With github_graphql: how often the presence sweep (deleted and transferred issues,
  // crawler/graphql_lister.h) runs per repository in incremental crawls; it costs one GraphQL
  // point per 100 issues plus one REST request per vanished issue. A full crawl sweeps with
  // the numbers its REST listing found (free). InfiniteDuration: never; zero: every crawl.
  // Default: 24 hours.
  absl::Duration presence_sweep_interval = absl::Hours(24);
  // A due sweep that must list the numbers runs only when that costs at most this share of the
  // GraphQL points left; else it waits for a later crawl (still due). Default: 0.25.
  double presence_sweep_budget = 0.25;
  // How far an item's updated_at may lie after the tracker's clock (the response's Date, else
  // ours) before it counts as an anomaly: such an item is quarantined, not stored, and never
  // moves the cursor. Default: 5 minutes.
  absl::Duration max_clock_skew = absl::Minutes(5);
};

// CrawlProgress is what a crawl reports after each stored page and at the end.
struct CrawlProgress {
  // Cumulative counters of this crawl.
  v1::CrawlCounters counters;
  // The new cursor, set once a listing completed and moved it (and on the final report).
  std::optional<v1::Cursor> cursor;
  // Estimated total (the repository's open_issues_count); 0 when unknown.
  int64_t issues_estimated = 0;
  // Remaining rate budget as last reported by the tracker; -1 when unknown.
  int64_t rate_remaining = -1;
  // When the rate budget resets; InfinitePast when unknown.
  absl::Time rate_reset = absl::InfinitePast();
  // Set on the final report: the crawl is complete and `cursor` covers everything.
  bool done = false;
  // Set on the final report instead of `done` when max_pages_per_lease stopped the crawl: the
  // cursor says where the next lease continues.
  bool paused = false;
  // "github:Owner/Name" when the tracker redirected or renamed the repository (renamed or
  // transferred; "gitlab:group/sub/name" for GitLab subgroups).
  // Issues are still stored under the lease's slug.
  std::string moved_to;
};

// RepoCrawler: see the file comment.
class RepoCrawler {
 public:
  RepoCrawler(HttpTransport* transport, IssueStore* store, Clock* clock, CrawlerOptions options);

  // Crawl runs one lease to completion, or until `on_progress` returns non-OK (e.g. the lease
  // was revoked or fenced: it stops at once and returns that status), or Cancel is called
  // (CANCELLED). on_progress is called after every stored page and once at the end with
  // done=true (or paused=true) and the final cursor. Errors: INVALID_ARGUMENT for a lease of an
  // unknown tracker, NOT_FOUND "repository gone" (404/410), the mapped
  // HTTP status naming the (redacted) URL, INVALID_ARGUMENT for a body that is not a JSON array
  // of items (nothing of that page is stored) or a next page that loops, FAILED_PRECONDITION when the store fenced the epoch. When `counters` is not
  // null it receives the crawl's counters however Crawl ends, so a failed crawl can report the
  // requests it actually made (the last on_progress may be older than the failure).
  absl::StatusOr<CrawlProgress> Crawl(
      const v1::Lease& lease, const std::function<absl::Status(const CrawlProgress&)>& on_progress,
      v1::CrawlCounters* counters = nullptr);

  // Cancel asks a running Crawl to stop before its next request or during a wait. Thread-safe.
  void Cancel() { cancelled_.store(true); }

 private:
  class Run;  // The state of one Crawl call (defined in the .cc).

  HttpTransport* transport_;
  IssueStore* store_;
  Clock* clock_;
  CrawlerOptions options_;  // pools filled in for every tracker
  std::atomic<bool> cancelled_{false};
};

}  // namespace issuescope::crawler

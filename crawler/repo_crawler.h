// RepoCrawler crawls one lease: one repository's issue listing and repository-wide comment
// listing, from the lease's cursor, into the worker's IssueStore under the lease's fencing epoch.
//
// Requests are serial and minimal: the repository GET, then each listing sorted by updated_at
// ascending (100 per page), following only `Link rel="next"`; incremental crawls send
// `since=<cursor>` and `If-None-Match` on the first page. A shift repair pass re-lists the tail
// of a listing when items changed while it was paged (see repo_crawler.cc). Rate limits are
// obeyed before every request (remaining == 0 → sleep until reset); 403/429 rate limiting and
// 5xx/transport errors are retried with a seeded, jittered exponential backoff.
//
// Ownership: borrows the transport, store and clock (all must outlive the crawler).
// Thread-safety: one thread runs Crawl; Cancel may be called from any thread.
// The token is sent only in the Authorization header; it never appears in a status or log line.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "crawler/http_transport.h"
#include "crawler/issue_store.h"
#include "crawler/rate_budget.h"
#include "issuescope/v1/coordinator.pb.h"

namespace issuescope::crawler {

// CrawlerOptions configure a RepoCrawler. Every field documents its Default.
struct CrawlerOptions {
  // Tracker token, sent as "Authorization: Bearer <token>"; never logged. Default: none.
  std::string token;
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
  // The token's rate budget, shared by every crawl using the token in this process. Default:
  // null, meaning a budget of this crawler's own.
  std::shared_ptr<RateBudget> budget;
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
  // "github:Owner/Name" when the tracker redirected the repository (renamed or transferred).
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
  // done=true and the final cursor. Errors: NOT_FOUND "repository gone" (404/410), the mapped
  // HTTP status naming the (redacted) URL, INVALID_ARGUMENT for a bad page (nothing of that page
  // is stored), FAILED_PRECONDITION when the store fenced the epoch.
  absl::StatusOr<CrawlProgress> Crawl(
      const v1::Lease& lease, const std::function<absl::Status(const CrawlProgress&)>& on_progress);

  // Cancel asks a running Crawl to stop before its next request or during a wait. Thread-safe.
  void Cancel() { cancelled_.store(true); }

 private:
  class Run;  // The state of one Crawl call (defined in the .cc).

  HttpTransport* transport_;
  IssueStore* store_;
  Clock* clock_;
  CrawlerOptions options_;
  std::shared_ptr<RateBudget> budget_;
  std::atomic<bool> cancelled_{false};
};

}  // namespace issuescope::crawler

// Lister lists one repository's issue or comment listing for a crawl (crawler/repo_crawler.cc
// drives it): a Pass requests the listing from a `since`, page after page through the tracker's
// next-page links, parses each page (a body that does not parse is fetched again, bounded like a
// 5xx), stores it through PageIngest (for trackers that list comments per issue, the comments of
// the issues that changed too, all their pages; HTTP 410 there makes the issue a tombstone) and
// reports progress after each page. It keeps the lease's page budget: a pass stops before a page
// the budget does not allow (`truncated`), and the comment pages count too.
//
// Pages are pipelined: once page n's response is in, page n+1 (its URL is in n's headers) is
// requested on a thread of its own while n is parsed and stored, so a token does not idle during
// the parse and the synced write. Pages are still stored one after the other, in order, and each
// is reported before the next is looked at; a failure of page n+1 returns with the store as page
// n left it.
//
// Errors are returned, never thrown or kept in members: the request's own (RequestLoop), a
// response the crawl cannot use (UnexpectedResponse), a next page on another host
// (PERMISSION_DENIED), a tracker that would page forever or a body that stays unparsable
// (INVALID_ARGUMENT), a deep-page 422 that restarting from the cursor cannot get past
// (FAILED_PRECONDITION). Each names the URL, redacted.
//
// Not thread-safe: one per crawl, used by the crawl's thread (it runs its prefetch itself).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "page_ingest.h"
#include "request_loop.h"
#include "shift_repair.h"
#include "tracker.h"
#include "issuescope/v1/coordinator.pb.h"
#include "issuescope/v1/model.pb.h"

namespace issuescope::crawler {

// Listing names the two listings of a repository.
enum class Listing { kIssues, kComments };

// ListerOptions are the crawl's knobs a Lister reads (CrawlerOptions holds them).
struct ListerOptions {
  int per_page = 100;
  // Re-fetches of a page whose body does not parse.
  int max_retries = 5;
  // Listing pages (comment pages included) one lease may fetch; 0: no limit.
  int max_pages_per_lease = 0;
  // Request the next page while the current one is stored.
  bool pipeline_pages = true;
  // Keep pull requests and their comments (the lease's choice).
  bool include_pull_requests = false;
};

// ListerProgress is what a Lister adds to the crawl's progress: 304s counted, the estimate of
// the issues a full listing holds raised from its first page.
struct ListerProgress {
  v1::CrawlCounters* counters = nullptr;
  int64_t* issues_estimated = nullptr;
  // Called after each stored page; its error ends the pass.
  std::function<absl::Status()> report;
};

class Lister {
 public:
  // Lister lists `where` (the repository `repo`, `slug` in messages) with `tracker`'s URLs and
  // parsers, sending through `loop` and storing through `ingest`. Nothing is owned.
  Lister(const Tracker* tracker, TrackerRepo where, v1::RepositoryRef repo, std::string slug,
         RequestLoop* loop, PageIngest* ingest, Clock* clock, ListerOptions options,
         ListerProgress progress);

  // Pass lists `kind` from `since` (nullopt: from the start), with If-None-Match `etag` on the
  // first page when not empty (a 304 there: `not_modified`, nothing stored), until the last page
  // or the page budget (`truncated`).
  absl::StatusOr<PassResult> Pass(Listing kind, const std::optional<absl::Time>& since,
                                  const std::string& etag);

  // pages is the number of listing pages fetched so far under this lease.
  int pages() const { return pages_; }

 private:
  // ParsedPage is one listing page as the tracker's parser read it.
  struct ParsedPage {
    std::vector<v1::Issue> issues;      // an issue listing's
    std::vector<v1::Comment> comments;  // a comment listing's
    std::vector<BadItem> bad;           // items set aside (Quarantine)
    size_t items = 0;                   // items on the page, bad ones included
  };

  std::string ListingUrl(Listing kind, const std::optional<absl::Time>& since) const;
  bool PageBudgetLeft() const;
  bool MayPrefetch(Listing kind) const;
  absl::StatusOr<ParsedPage> ParsePage(Listing kind, const std::string& url,
                                       const HttpResponse& resp) const;
  absl::Status StorePage(Listing kind, const std::string& url, HttpResponse* response,
                         ParsedPage parsed, PassResult* pass);
  absl::Status FetchIssueComments(const v1::Issue& issue);
  absl::StatusOr<std::optional<std::string>> NextUrl(const std::string& url,
                                                      const HttpResponse& resp,
                                                      const std::set<std::string>& listed,
                                                      std::optional<size_t> items) const;

  const Tracker* tracker_;
  const TrackerRepo where_;
  const v1::RepositoryRef repo_;
  const std::string slug_;
  RequestLoop* loop_;
  PageIngest* ingest_;
  Clock* clock_;
  const ListerOptions options_;
  ListerProgress progress_;
  std::set<int64_t> pr_numbers_;             // pull requests seen in the issue listing
  int pages_ = 0;                            // listing pages fetched under this lease
  std::optional<absl::Time> restart_since_;  // the last since a 422 restarted a listing from
};

}  // namespace issuescope::crawler

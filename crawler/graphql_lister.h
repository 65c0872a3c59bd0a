// GraphqlLister lists a GitHub repository's comments over GraphQL (crawler/github_graphql.h
// says why comments and not issues): the issues the REST listing reported with comments are
// asked for by number, up to 100 in one query (1 point), each for as many comments as it has
// (at most 100); a thread with more continues 100 at a time in later queries, pooled with the
// others. The comments are stored through the crawl's PageIngest exactly as the REST comment
// listing stores them (same records; raw pages kept for `issuescope reparse` under the listing
// "graphql_comments"). It also runs the presence sweep (deleted and transferred issues).
//
// Query size adapts: GitHub cuts off a query after about 10 s, which depends on the nodes it
// asks for, so a query holds threads while their comments asked for stay within a node cap
// (GraphqlListerOptions::max_nodes_per_query to start). A query of several threads cut off
// (502/504, "Something went wrong while executing your query"; charged) or over the node limit
// is sent again with half its nodes, and that many are not asked for again for 100 queries;
// after three answered queries in a row the cap grows halfway to the smallest count that timed
// out (by half when none did), so it settles just below the cut-off. A thread cut off alone is
// asked for half as many comments at a time (the cap stays). An answer that cannot be read (cut
// short or garbled on the way) is asked for again, three times in all. A query is never sent
// when the token's GraphQL budget (the rateLimit object of the last answer) cannot pay for it:
// the pass stops with budget_spent and the caller lists over REST. A server without GraphQL (404, 401, 403 that is not a rate
// limit, 410) ends the pass with `unavailable` before anything is stored.
//
// Not thread-safe: one pass at a time, on the crawl's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "github_graphql.h"
#include "page_ingest.h"
#include "request_loop.h"
#include "tracker.h"

namespace issuescope::crawler {

// GraphqlPassResult is what one comments pass did.
struct GraphqlPassResult {
  // GraphQL is not served by this tracker (nothing was stored): list over REST instead.
  bool unavailable = false;
  // The token's GraphQL budget could not pay for the next query: the comments stored are not
  // all of them; REST lists the comments instead.
  bool budget_spent = false;
  // Greatest updatedAt of a comment stored.
  std::optional<absl::Time> max_comment_updated;
  // Why the pass stopped on GraphQL's side (an answer it cannot use, timeouts for a single
  // thread, a looping cursor, a request that failed after its retries); OK when it did not. The
  // comments stored are then not all of them: REST lists them, as with budget_spent.
  absl::Status abandoned;
  // The tracker's clock (Date) when the first query was answered.
  std::optional<absl::Time> started;
  int64_t queries = 0;     // comment queries answered
  int64_t threads = 0;     // issues asked about (first pages)
  int64_t follow_ups = 0;  // further pages of long threads asked for
  int64_t points = 0;      // GraphQL points charged, as the answers' rateLimit.cost said
  int64_t timeouts = 0;    // queries cut off or over the node limit (the budget probe's too)
  int64_t last_node_cap = 0;  // the node cap when the pass ended
};

// SweepResult is what one presence sweep found.
struct SweepResult {
  // The listing of numbers was complete and every vanished number was checked.
  bool complete = false;
  int64_t pages = 0;    // numbers pages (GraphQL)
  int64_t points = 0;   // their points
  int64_t checked = 0;  // REST requests checking vanished numbers
  std::vector<int64_t> deleted;
  std::vector<std::pair<int64_t, std::string>> transferred;  // number, "github:o/r#n"
  // The listing would have cost more than GraphqlListerOptions::sweep_budget_share of the
  // points left: not sent (complete = false; the sweep stays due).
  bool over_share = false;
};

// kStartNodesPerQuery is the node cap a comments pass starts with (GraphqlListerOptions).
inline constexpr int64_t kStartNodesPerQuery = 5000;

// GraphqlListerOptions tune a pass.
struct GraphqlListerOptions {
  // Most issues one query asks about, 1..kThreadsPerQuery. Default: kThreadsPerQuery (1 point).
  int max_threads_per_query = kThreadsPerQuery;
  // The node cap a pass starts with: the most comments one query asks for in all (a single
  // thread's page always goes). Users of GitHub see queries of 100 issues × 100 comments (10,100
  // nodes) cut off and 60 × 100 (6,060) answered. Default: kStartNodesPerQuery.
  int64_t max_nodes_per_query = kStartNodesPerQuery;
  // Timeouts in a row of a query for one thread before the pass is abandoned. Default: 3.
  int max_timeouts_at_one = 3;
  // The tokens' GraphQL points left as far as the crawl knows (the pool's last figures; a
  // spent pool: 0, so no query is sent that would wait for its reset); -1: unknown. Default: -1.
  int64_t known_remaining = -1;
  // A sweep that lists the numbers itself (⌈stored issues / 100⌉ points) runs only when that
  // is at most this share of the GraphQL points left (asked for, free, when unknown); a sweep
  // with the numbers given costs no points and always runs. Default: 0.25.
  double sweep_budget_share = 0.25;
};

class GraphqlLister {
 public:
  // `graphql` sends to the GraphQL endpoint (its pool is the tokens' GraphQL budget), `rest` to
  // the REST API (the sweep's checks); `url` is the GraphQL endpoint (".../graphql"); `where`
  // the repository as the crawl addresses it; `report` is called after every stored page (a
  // non-OK status stops the pass). Nothing is owned.
  GraphqlLister(RequestLoop* graphql, RequestLoop* rest, const Tracker* tracker,
                PageIngest* ingest, Clock* clock, std::string url, TrackerRepo where,
                v1::RepositoryRef repo, GraphqlListerOptions options,
                std::function<absl::Status()> report);

  // CommentsPass stores the comments of the issues `threads` names (number, the comment count
  // the tracker reported; an issue counting none is not asked about), all of each thread's
  // comments even when there are more than counted. An issue that no longer resolves (deleted,
  // transferred) is skipped. Whatever goes wrong on GraphQL's side ends the pass with
  // `abandoned` (or `budget_spent`, `unavailable`) for the caller to list over REST; errors are
  // only those of the store, of `report` and CANCELLED.
  absl::StatusOr<GraphqlPassResult> CommentsPass(
      const std::vector<std::pair<int64_t, int64_t>>& threads);

  // Sweep finds the stored issues the tracker no longer lists and tombstones them: deleted (410
  // or 404 to a REST GET of the issue), or transferred (301 to another repository: its new
  // place, read from the issue there, recorded in Issue.transferred_to). `listed` are numbers
  // the tracker lists (a full pass's own, so the sweep costs no listing); nullopt: they are
  // listed here, 100 per point, when that is within sweep_budget_share of the points left
  // (else over_share, nothing sent). A vanished number that the REST GET still finds is left
  // alone (it was listed in between). Stops (complete = false, nothing tombstoned) when the
  // GraphQL budget cannot pay for the next numbers page.
  absl::StatusOr<SweepResult> Sweep(std::optional<std::vector<int64_t>> listed);

 private:
  // Query sends one GraphQL body; nullopt for a timeout (ask for fewer; counted in `timeouts`
  // when not null) or when GraphQL is not served (unavailable_ set).
  absl::StatusOr<std::optional<HttpResponse>> Query(const std::string& body, int64_t* timeouts);
  // Affordable reports whether the last known budget pays for `points`.
  bool Affordable(int64_t points) const;
  void NoteRate(const GraphqlRate& rate, int64_t* points);
  // Charged notes a query that ran without an answer to read its cost from (at most 1 point):
  // one point less left, and one more in `points` when not null.
  void Charged(int64_t* points);
  // StoreComments stores comments of a page (future-dated ones quarantined).
  absl::Status StoreComments(const std::string& listing, std::vector<v1::Comment> comments,
                             std::vector<BadItem> bad, const HttpResponse& resp, absl::Time now,
                             GraphqlPassResult* result);
  // Abandon records why the pass stops on GraphQL's side.
  void Abandon(absl::Status why, GraphqlPassResult* result);
  // CheckVanished asks REST about one issue the listing lacks and tombstones it when gone.
  absl::Status CheckVanished(int64_t number, SweepResult* result);
  // AskBudget asks for the GraphQL budget with a free rateLimit query and notes it (remaining_,
  // 0 when rate limited; unchanged when the answer timed out or says nothing). Sets
  // unavailable_ where GraphQL is not served. Errors are the request's.
  absl::Status AskBudget(int64_t* points, int64_t* timeouts);

  RequestLoop* graphql_;
  RequestLoop* rest_;
  const Tracker* tracker_;
  PageIngest* ingest_;
  Clock* clock_;
  const std::string url_;
  const TrackerRepo where_;
  const v1::RepositoryRef repo_;
  const GraphqlListerOptions options_;
  std::function<absl::Status()> report_;
  const std::string slug_;  // owner/name, for messages
  int64_t remaining_;  // the tokens' GraphQL points left, as last reported (-1: unknown)
  bool unavailable_ = false;
};

// TransferredTo names the issue at GitHub web URL `html_url` (".../OWNER/NAME/issues/N") as
// "github:OWNER/NAME#N"; "" when the URL is not an issue's.
std::string TransferredTo(absl::string_view html_url);

}  // namespace issuescope::crawler

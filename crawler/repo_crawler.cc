// The crawl of one lease: the repository request (its ETag confirms an unchanged repository;
// a redirect or another full_name records a rename), then each listing brought up to date in
// rounds of listing passes (crawler/lister.h) with shift repair (crawler/shift_repair.h), and
// the cursor moved.
//
// Page budget: with max_pages_per_lease, a listing pass stops before its next page once the
// lease has fetched that many pages. The cursor then moves to where a new listing must start so
// nothing is lost: the last updated_at stored, or — when items changed while paging — the start
// a repair pass would have used. The crawl ends "paused" (not done) and the next lease resumes.
#include "crawler/repo_crawler.h"

#include <memory>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/repo_slug.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "graphql_lister.h"
#include "lister.h"
#include "page_ingest.h"
#include "request_loop.h"
#include "shift_repair.h"
#include "tracker.h"
#include "urls.h"

namespace issuescope::crawler {
namespace {

// LoopOptions are the RequestLoop's knobs among a crawl's options.
RequestLoopOptions LoopOptions(const CrawlerOptions& opt) {
  RequestLoopOptions loop;
  loop.max_retries = opt.max_retries;
  loop.initial_backoff = opt.initial_backoff;
  loop.max_backoff = opt.max_backoff;
  loop.jitter_seed = opt.jitter_seed;
  loop.user_agent = opt.user_agent;
  loop.request_timeout = opt.request_timeout;
  return loop;
}

}  // namespace

class RepoCrawler::Run {
 public:
  Run(RepoCrawler* crawler, const Tracker* tracker, const v1::Lease& lease,
      const std::function<absl::Status(const CrawlProgress&)>& on_progress)
      : c_(crawler),
        tracker_(tracker),
        lease_(lease),
        on_progress_(on_progress) {
    const CrawlerOptions& opt = crawler->options_;
    repo_ = lease.repo();
    const v1::Tracker kind = repo_.tracker();
    slug_ = lease.repo_slug().empty() ? RepoSlug(repo_) : lease.repo_slug();
    auto api = opt.api_urls.find(kind);
    base_ = !repo_.api_url().empty()  ? repo_.api_url()
            : api != opt.api_urls.end() ? api->second
                                        : DefaultApiUrl(kind);
    while (!base_.empty() && base_.back() == '/') base_.pop_back();
    path_owner_ = repo_.owner();
    path_name_ = repo_.name();
    incremental_ = lease.mode() != v1::CRAWL_MODE_FULL;
    if (incremental_) cursor_ = lease.cursor();
    loop_ = std::make_unique<RequestLoop>(
        crawler->transport_, tracker, crawler->clock_, LoopOptions(opt), opt.pools.at(kind),
        slug_, [crawler] { return crawler->cancelled_.load(); });
    if (UseGraphql()) {
      graphql_loop_ = std::make_unique<RequestLoop>(
          crawler->transport_, tracker, crawler->clock_, LoopOptions(opt), opt.graphql_pool, slug_,
          [crawler] { return crawler->cancelled_.load(); });
    }
    ingest_ = std::make_unique<PageIngest>(crawler->store_, repo_, slug_, lease.epoch(),
                                           opt.max_clock_skew, opt.keep_raw_pages,
                                           lease.include_pull_requests(), &progress_.counters);
  }

  absl::StatusOr<CrawlProgress> Crawl() {
    RETURN_IF_ERROR(FetchRepository());
    const CrawlerOptions& opt = c_->options_;
    ListerOptions listing;
    listing.per_page = opt.per_page;
    listing.max_retries = opt.max_retries;
    listing.max_pages_per_lease = opt.max_pages_per_lease;
    listing.pipeline_pages = opt.pipeline_pages;
    listing.include_pull_requests = lease_.include_pull_requests();
    lister_ = std::make_unique<Lister>(
        tracker_, Where(), repo_, slug_, loop_.get(), ingest_.get(), c_->clock_, listing,
        ListerProgress{&progress_.counters, &progress_.issues_estimated, [this] { return Report(); }});
    if (graphql_loop_ != nullptr) {
      RETURN_IF_ERROR(CrawlGraphql());
    } else {
      RETURN_IF_ERROR(CrawlListing(Listing::kIssues));
      if (!paused_ && tracker_->comment_listing() == CommentListing::kRepositoryWide) {
        RETURN_IF_ERROR(CrawlListing(Listing::kComments));
      }
    }
    progress_.cursor = cursor_;
    progress_.done = !paused_;
    progress_.paused = paused_;
    if (paused_) {
      spdlog::info("{}: page budget of {} pages spent; cursor saved, the next lease continues",
                   slug_, c_->options_.max_pages_per_lease);
    }
    RETURN_IF_ERROR(Report());
    return progress_;
  }

  // Counters are the crawl's counters now, every request counted (also after a failure).
  v1::CrawlCounters Counters() const {
    v1::CrawlCounters c = progress_.counters;
    CountRequests(&c);
    return c;
  }

 private:
  TrackerRepo Where() const { return TrackerRepo{base_, path_owner_, path_name_}; }

  void CountRequests(v1::CrawlCounters* c) const {
    c->set_requests(loop_->requests());
    c->set_retries(loop_->retries() + (graphql_loop_ ? graphql_loop_->retries() : 0));
    if (graphql_loop_) c->set_graphql_requests(graphql_loop_->requests());
    c->set_graphql_points(graphql_points_);
  }

  // UseGraphql says whether this crawl lists over GraphQL (see CrawlerOptions::github_graphql).
  bool UseGraphql() const {
    const CrawlerOptions& opt = c_->options_;
    return opt.github_graphql && opt.graphql_pool != nullptr &&
           repo_.tracker() == v1::TRACKER_GITHUB && !lease_.include_pull_requests();
  }

  // GraphqlUrl is GitHub's GraphQL endpoint beside the REST base: https://api.github.com/graphql,
  // or https://HOST/api/graphql for an Enterprise server's https://HOST/api/v3.
  std::string GraphqlUrl() const {
    absl::string_view base = base_;
    if (absl::ConsumeSuffix(&base, "/api/v3")) return absl::StrCat(base, "/api/graphql");
    return absl::StrCat(base_, "/graphql");
  }

  // CrawlGraphql is the crawl of a GitHub repository with CrawlerOptions::github_graphql:
  //  - Issues over REST, as without GraphQL (crawler/github_graphql.h: GraphQL costs as much per
  //    issue for the fields the store keeps, and REST's 304s make an unchanged listing free).
  //  - When the comments are to be listed from the start (a full crawl, or no comment cursor
  //    yet) and the issue listing was complete (stable, nothing set aside), they come over
  //    GraphQL instead of the REST comment listing: the stored issues that
  //    count comments, by number, 100 a query (1 point), each asked for as many comments as the
  //    listing counted, long threads continued. The comment cursor then starts at the newest
  //    comment stored, or when the repository was fetched if that is earlier (a comment made or
  //    edited after the issue listing began is listed again), and the REST comment listing from
  //    there learns the ETag the next crawl's 304 needs. When GraphQL is not served, or its
  //    budget runs out, REST lists the comments as it would have.
  //  - Incremental crawls with a comment cursor list their deltas over REST: a 304 is free and
  //    a change costs a page per 100 changed comments, less than a GraphQL pass plus the REST
  //    listing it would still need for comments edited on issues that did not change.
  //  - The presence sweep then runs: with the numbers a full crawl's complete REST listing
  //    found (free), or when due (CrawlerOptions::presence_sweep_interval).
  absl::Status CrawlGraphql() {
    const CrawlerOptions& opt = c_->options_;
    GraphqlListerOptions gopt;
    gopt.max_nodes_per_query = opt.graphql_max_nodes;
    gopt.known_remaining = KnownGraphqlRemaining();
    gopt.sweep_budget_share = opt.presence_sweep_budget;
    graphql_lister_ = std::make_unique<GraphqlLister>(
        graphql_loop_.get(), loop_.get(), tracker_, ingest_.get(), c_->clock_, GraphqlUrl(),
        Where(), repo_, gopt, [this] { return Report(); });
    // A full crawl lists every issue from the start: the numbers it stores are the tracker's.
    if (!incremental_) ingest_->RecordListed();
    RETURN_IF_ERROR(CrawlListing(Listing::kIssues));
    if (paused_) return absl::OkStatus();
    std::optional<std::vector<int64_t>> listed;
    // (An issue the listing missed or set aside is checked over REST and found still there.)
    if (!incremental_) listed = ingest_->TakeListed();
    bool unavailable = false;
    // The pass asks for the comments of the issues the store holds; one the listing may have
    // missed (a shift repair left undone) or set aside (quarantined, dated in the future) would
    // have its comments behind the new cursor for good. Then REST lists the comments instead.
    const bool listing_complete = issues_stable_ && ingest_->IssuesSetAside() == 0;
    const bool from_start = !incremental_ || !cursor_.has_comments_since();
    if (from_start && !listing_complete) {
      spdlog::info("{}: the issue listing was not complete ({} items set aside{}); REST lists the "
                   "comments", slug_, ingest_->IssuesSetAside(),
                   issues_stable_ ? "" : ", shift repairs left undone");
    }
    if (from_start && listing_complete) {
      ASSIGN_OR_RETURN(auto threads, ingest_->StoredCommentCounts());
      ASSIGN_OR_RETURN(GraphqlPassResult pass, graphql_lister_->CommentsPass(threads));
      graphql_points_ += pass.points;
      unavailable = pass.unavailable;
      if (!pass.unavailable) {
        spdlog::info("{}: GraphQL listed the comments of {} issues in {} queries ({} further "
                     "pages of long threads) for {} points{}",
                     slug_, pass.threads, pass.queries, pass.follow_ups, pass.points,
                     pass.budget_spent ? "; the GraphQL budget ran out, REST lists them" : "");
      }
      if (!pass.unavailable && !pass.budget_spent && pass.abandoned.ok()) {
        std::optional<absl::Time> since = pass.max_comment_updated;
        for (const std::optional<absl::Time>& t : {pass.started, repo_fetched_}) {
          if (t && (!since || *t < *since)) since = t;
        }
        if (since) *cursor_.mutable_comments_since() = ToProto(*since);
        cursor_.clear_comments_etag();
        from_cursor_ = true;
      }
    }
    RETURN_IF_ERROR(CrawlListing(Listing::kComments));
    if (!paused_ && !unavailable) RETURN_IF_ERROR(MaybeSweep(std::move(listed)));
    return absl::OkStatus();
  }

  // KnownGraphqlRemaining is the most GraphQL points any token of the pool has left by its last
  // figures: 0 when every token is spent until a reset still ahead (no query is sent then: it
  // would wait in the pool for the reset), -1 when some token's figure is unknown.
  int64_t KnownGraphqlRemaining() const {
    const absl::Time now = c_->clock_->Now();
    int64_t best = 0;
    for (const v1::TokenBudget& b : c_->options_.graphql_pool->Budgets()) {
      if (b.remaining() < 0) return -1;
      if (b.has_reset() && FromProto(b.reset()) <= now) return -1;  // reset since: unknown
      best = std::max(best, b.remaining());
    }
    return best;
  }

  // MaybeSweep runs the presence sweep (GraphqlLister::Sweep) when it is due
  // (CrawlerOptions::presence_sweep_interval since the cursor's swept_at), or whenever the
  // numbers are already `listed` (a full crawl's listing: it costs no GraphQL then).
  absl::Status MaybeSweep(std::optional<std::vector<int64_t>> listed) {
    const CrawlerOptions& opt = c_->options_;
    const absl::Time now = c_->clock_->Now();
    const bool due = opt.presence_sweep_interval != absl::InfiniteDuration() &&
                     (!cursor_.has_swept_at() ||
                      now - FromProto(cursor_.swept_at()) >= opt.presence_sweep_interval);
    if (!listed && !due) return absl::OkStatus();
    absl::StatusOr<SweepResult> swept = graphql_lister_->Sweep(std::move(listed));
    if (!swept.ok()) {
      // Best effort: the crawl itself is complete. Only a stop (cancelled, fenced) is an error.
      const absl::StatusCode code = swept.status().code();
      if (code == absl::StatusCode::kCancelled || code == absl::StatusCode::kFailedPrecondition) {
        return swept.status();
      }
      spdlog::warn("{}: presence sweep failed, tried again at the next crawl: {}", slug_,
                   std::string(swept.status().message()));
      return absl::OkStatus();
    }
    SweepResult& sweep = *swept;
    graphql_points_ += sweep.points;
    progress_.counters.set_issues_gone(progress_.counters.issues_gone() +
                                       static_cast<int64_t>(sweep.deleted.size() +
                                                            sweep.transferred.size()));
    if (sweep.complete) *cursor_.mutable_swept_at() = ToProto(now);
    progress_.cursor = cursor_;
    return absl::OkStatus();
  }

  // Report brings the counters and rate budget that requests update (from the prefetching
  // thread too) into progress_ and reports it.
  absl::Status Report() {
    CountRequests(&progress_.counters);
    const RequestLoop::Rate rate = loop_->rate();
    progress_.rate_remaining = rate.remaining;
    progress_.rate_reset = rate.reset;
    return on_progress_(progress_);
  }

  absl::StatusOr<HttpResponse> Get(const std::string& url, const std::string& etag) {
    return loop_->Get(url, etag);
  }

  absl::Status FetchRepository() {
    std::string url = tracker_->RepositoryUrl(Where());
    const std::string etag = incremental_ ? cursor_.repo_etag() : "";
    ASSIGN_OR_RETURN(HttpResponse resp, Get(url, etag));
    repo_fetched_ = ParseHttpDate(resp.headers.Get("Date"));
    if (resp.status == 304 && !etag.empty()) {
      progress_.counters.set_not_modified(progress_.counters.not_modified() + 1);
      return absl::OkStatus();
    }
    const int s = resp.status;
    if (s == 301 || s == 302 || s == 307 || s == 308) {
      // A relative Location resolves against the URL requested (RFC 9110, 10.2.2).
      const std::string sent = resp.headers.Get("Location");
      const std::string location = sent.empty() ? "" : ResolveReference(url, sent).value_or("");
      if (location.empty() || !SameOrigin(location, base_)) {
        return absl::PermissionDeniedError(absl::StrCat(
            "GET ", Redact(url), ": HTTP ", s, " redirects to another host or nowhere ('",
            Redact(sent), "')"));
      }
      url = location;
      ASSIGN_OR_RETURN(resp, Get(url, ""));
    }
    if (resp.status == 404 || resp.status == 410) {
      return absl::NotFoundError(
          absl::StrCat("repository ", slug_, " gone (GET ", Redact(url), ": HTTP ", resp.status, ")"));
    }
    if (resp.status != 200) return UnexpectedResponse(resp.status, url);
    auto info = tracker_->ParseRepository(resp.body);
    if (!info.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("GET ", Redact(url), ": ", info.status().message()));
    }
    if (info->open_issues_count >= 0) progress_.issues_estimated = info->open_issues_count;
    cursor_.set_repo_etag(resp.headers.Get("ETag"));
    // The owner may hold '/' (GitLab subgroups): the name is after the last one.
    const size_t slash = info->full_name.rfind('/');
    if (slash != std::string::npos && slash > 0 && slash + 1 < info->full_name.size() &&
        !absl::EqualsIgnoreCase(info->full_name, RepoFullName(repo_))) {
      progress_.moved_to = absl::StrCat(TrackerName(repo_.tracker()), ":", info->full_name);
      path_owner_ = info->full_name.substr(0, slash);
      path_name_ = info->full_name.substr(slash + 1);
      spdlog::info("repository {} moved to {}", slug_, progress_.moved_to);
    }
    return absl::OkStatus();
  }

  // RoundResult is one listing pass from a since, with its shift repairs.
  struct RoundResult {
    bool not_modified = false;
    bool stable = false;
    // The page budget ran out; new_since is where the next lease resumes.
    bool truncated = false;
    // Pages stored in this round.
    size_t pages = 0;
    std::optional<absl::Time> new_since;
    std::string first_etag;  // empty unless the first page held the whole listing
  };

  // ListRound lists from `since` (with If-None-Match `etag` on the first page) and repairs
  // page-boundary skips; new_since is where the next listing may start.
  absl::StatusOr<RoundResult> ListRound(Listing kind, const std::optional<absl::Time>& since,
                                        const std::string& etag) {
    RoundResult round;
    ASSIGN_OR_RETURN(PassResult pass, lister_->Pass(kind, since, etag));
    if (pass.not_modified) {
      round.not_modified = true;
      return round;
    }
    round.pages = pass.pages.size();
    auto clamp = [&] {
      if (since && (!round.new_since || *round.new_since < *since)) round.new_since = since;
    };
    if (pass.truncated) {
      round.truncated = true;
      round.new_since = PartialSince(pass, since);
      clamp();
      return round;
    }
    std::optional<absl::Time> max_updated = pass.max_updated;
    // The first page's ETag vouches for the whole listing only when that page held all of it
    // with room to spare: a new or changed item sorts last, so on a full first page (or behind
    // a rel=next) it would land on a later page and page 1 would still answer 304.
    if (pass.pages.size() == 1 &&
        pass.updated.size() < static_cast<size_t>(c_->options_.per_page)) {
      round.first_etag = pass.first_etag;
    }

    // Shift repair: re-list the tail while items changed during the pass.
    std::optional<absl::Time> cur_since = since;
    for (int repairs = 0;; ++repairs) {
      RepairPlan plan = PlanRepair(pass, cur_since);
      if (!plan.needed) {
        round.stable = true;
        break;
      }
      if (repairs >= c_->options_.max_repair_passes) break;
      spdlog::info("{}: items changed while paging {}; repair pass from {}", slug_,
                   kind == Listing::kIssues ? "issues" : "comments",
                   plan.since ? FormatRfc3339(*plan.since) : std::string("the start"));
      cur_since = plan.since;
      ASSIGN_OR_RETURN(pass, lister_->Pass(kind, cur_since, ""));
      round.pages += pass.pages.size();
      if (pass.truncated) {
        // Everything before cur_since is covered; the partial repair pass moves on from there.
        round.truncated = true;
        round.new_since = PartialSince(pass, cur_since);
        clamp();
        return round;
      }
      if (pass.max_updated && (!max_updated || *pass.max_updated > *max_updated)) {
        max_updated = pass.max_updated;
      }
    }
    round.new_since = round.stable ? max_updated : cur_since;
    clamp();
    return round;
  }

  // CrawlListing brings one listing up to date. When the cursor moves, one more round from the
  // new cursor (normally a single page: the items at the cursor, re-applied as no-ops) learns the
  // ETag of exactly the URL the next crawl sends, so an unchanged repository then costs only a
  // 304. An ETag is kept only for a listing URL whose since equals the stored cursor. When the
  // page budget runs out, the cursor moves to where the next lease resumes and the crawl pauses.
  absl::Status CrawlListing(Listing kind) {
    constexpr int kMaxRounds = 4;
    const bool issues = kind == Listing::kIssues;
    const google::protobuf::Timestamp& since_ts =
        issues ? cursor_.issues_since() : cursor_.comments_since();
    const bool has_since = issues ? cursor_.has_issues_since() : cursor_.has_comments_since();
    std::optional<absl::Time> since;
    if ((incremental_ || from_cursor_) && has_since) since = FromProto(since_ts);
    std::string etag = incremental_ ? (issues ? cursor_.issues_etag() : cursor_.comments_etag()) : "";

    for (int round = 1;; ++round) {
      ASSIGN_OR_RETURN(RoundResult r, ListRound(kind, since, etag));
      if (issues) issues_stable_ = r.not_modified || r.stable;
      if (r.not_modified) break;  // cursor and etag stay
      if (r.truncated) {
        paused_ = true;
        if (r.pages > 0) etag.clear();  // the listing changed under the old ETag's URL
        if (r.new_since) since = r.new_since;
        break;
      }
      const bool moved = r.new_since.has_value() && (!since || *r.new_since != *since);
      if (!moved) {
        etag = r.stable ? r.first_etag : "";
        break;
      }
      since = r.new_since;
      etag.clear();
      if (!r.stable || round >= kMaxRounds) break;
    }
    if (issues) {
      if (since) *cursor_.mutable_issues_since() = ToProto(*since);
      cursor_.set_issues_etag(etag);
    } else {
      if (since) *cursor_.mutable_comments_since() = ToProto(*since);
      cursor_.set_comments_etag(etag);
    }
    progress_.cursor = cursor_;
    return absl::OkStatus();
  }

  RepoCrawler* c_;
  const Tracker* tracker_;
  // The crawl's requests (also sent from a prefetch thread, see Pass): counters and rate notes
  // that Report copies into progress_.
  std::unique_ptr<RequestLoop> loop_;
  // The crawl's GraphQL queries (GitHub with CrawlerOptions::github_graphql), on the tokens'
  // GraphQL budget; null when the crawl lists over REST only.
  std::unique_ptr<RequestLoop> graphql_loop_;
  int64_t graphql_points_ = 0;
  std::unique_ptr<GraphqlLister> graphql_lister_;
  // Whether the last round of the issue listing ended stable (no shift repair left undone).
  bool issues_stable_ = true;
  // The tracker's clock (Date) when the repository was fetched, just before the listings.
  std::optional<absl::Time> repo_fetched_;
  // The listings continue from the cursor even in a full crawl (after a GraphQL pass).
  bool from_cursor_ = false;
  // Where the crawl's pages are stored (counting into progress_.counters).
  std::unique_ptr<PageIngest> ingest_;
  // The listing passes, made once the repository's location is known (FetchRepository).
  std::unique_ptr<Lister> lister_;
  const v1::Lease& lease_;
  const std::function<absl::Status(const CrawlProgress&)>& on_progress_;
  v1::RepositoryRef repo_;
  std::string slug_;
  std::string base_;
  std::string path_owner_;
  std::string path_name_;
  bool incremental_ = true;
  v1::Cursor cursor_;
  CrawlProgress progress_;
  bool paused_ = false;   // the page budget ran out
};

RepoCrawler::RepoCrawler(HttpTransport* transport, IssueStore* store, Clock* clock,
                         CrawlerOptions options)
    : transport_(transport), store_(store), clock_(clock), options_(std::move(options)) {
  for (v1::Tracker kind : {v1::TRACKER_GITHUB, v1::TRACKER_GITLAB, v1::TRACKER_GITEE}) {
    std::shared_ptr<TokenPool>& pool = options_.pools[kind];
    if (pool) continue;
    auto token = options_.tokens.find(kind);
    pool = OneTokenPool(kind, token != options_.tokens.end() ? token->second : options_.token,
                        clock_, LoopOptions(options_));
  }
  if (options_.github_graphql && options_.graphql_pool == nullptr) {
    // GraphQL refuses anonymous requests: without a GitHub token there is no GraphQL pool, and
    // crawls list over REST.
    auto token = options_.tokens.find(v1::TRACKER_GITHUB);
    const std::string& github = token != options_.tokens.end() ? token->second : options_.token;
    if (!github.empty()) {
      options_.graphql_pool = OneTokenPool(v1::TRACKER_GITHUB, github, clock_, LoopOptions(options_));
    }
  }
}

absl::StatusOr<CrawlProgress> RepoCrawler::Crawl(
    const v1::Lease& lease, const std::function<absl::Status(const CrawlProgress&)>& on_progress,
    v1::CrawlCounters* counters) {
  if (counters != nullptr) counters->Clear();
  if (lease.repo().owner().empty() || lease.repo().name().empty()) {
    return absl::InvalidArgumentError("lease names no repository (owner or name empty)");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Tracker> tracker, MakeTracker(lease.repo().tracker()));
  Run run(this, tracker.get(), lease, on_progress);
  absl::StatusOr<CrawlProgress> result = run.Crawl();
  if (counters != nullptr) *counters = run.Counters();
  return result;
}

}  // namespace issuescope::crawler

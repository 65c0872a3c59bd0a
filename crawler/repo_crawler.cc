// The crawl loop of one lease. Shift repair (re-listing what offset pagination may have
// skipped while items changed) is planned by crawler/shift_repair.h.
//
// Page budget: with max_pages_per_lease, a listing pass stops before its next page once the
// lease has fetched that many pages. The cursor then moves to where a new listing must start so
// nothing is lost: the last updated_at stored, or — when items changed while paging — the start
// a repair pass would have used. The crawl ends "paused" (not done) and the next lease resumes.
//
// Per-issue comments (GitLab notes): after a page of issues is stored, the comments of each
// issue that is new, or whose updated_at or comment count changed, or whose stored user
// comments are fewer than its count (a crawl interrupted before them), are listed in full.
// HTTP 410 there means the issue was deleted: it becomes a tombstone.
#include "crawler/repo_crawler.h"

#include <algorithm>
#include <future>
#include <set>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/logging.h"
#include "common/repo_slug.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "crawler/github_parse.h"
#include "crawler/page_ingest.h"
#include "crawler/request_loop.h"
#include "crawler/shift_repair.h"
#include "crawler/tracker.h"

namespace issuescope::crawler {
namespace {

// Origin returns "scheme://host[:port]" of an absolute URL ("" when it has none).
std::string Origin(absl::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == absl::string_view::npos) return "";
  const size_t path = url.find('/', scheme + 3);
  return absl::AsciiStrToLower(url.substr(0, path));
}

enum class Listing { kIssues, kComments };

// Prefetch is the next page of a listing, requested on a thread of its own while the crawl
// stores the current page. It is taken when the crawl reaches that URL, or abandoned: `stop`
// is raised (so the request is not retried, and waits for a token or a backoff end at once),
// the request already sent is awaited and its response dropped. Destruction abandons.
class Prefetch {
 public:
  explicit Prefetch(std::atomic<bool>* stop) : stop_(stop) {}
  Prefetch(const Prefetch&) = delete;
  Prefetch& operator=(const Prefetch&) = delete;
  ~Prefetch() { Abandon(); }

  // Start requests `url` with `get` on a new thread; false (and nothing started) when no thread
  // can be created.
  bool Start(std::string url, std::function<absl::StatusOr<HttpResponse>()> get) {
    try {
      response_ = std::async(std::launch::async, std::move(get));
    } catch (const std::system_error&) {
      return false;
    }
    url_ = std::move(url);
    return true;
  }
  // Holds reports whether the request in flight is for `url`.
  bool Holds(const std::string& url) const { return response_.valid() && url_ == url; }
  // Take waits for the response (Holds must be true).
  absl::StatusOr<HttpResponse> Take() { return response_.get(); }
  // Abandon stops the request in flight, if any, and drops its response.
  void Abandon() {
    if (!response_.valid()) return;
    stop_->store(true);
    response_.wait();
    response_ = {};
    stop_->store(false);
  }

 private:
  std::atomic<bool>* stop_;
  std::string url_;
  std::future<absl::StatusOr<HttpResponse>> response_;
};

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
    auto token = opt.tokens.find(kind);
    auto budget = opt.budgets.find(kind);
    auto pool = opt.pools.find(kind);
    RequestLoopOptions loop;
    loop.max_retries = opt.max_retries;
    loop.initial_backoff = opt.initial_backoff;
    loop.max_backoff = opt.max_backoff;
    loop.jitter_seed = opt.jitter_seed;
    loop.user_agent = opt.user_agent;
    loop.request_timeout = opt.request_timeout;
    loop_ = std::make_unique<RequestLoop>(
        crawler->transport_, tracker, crawler->clock_, loop,
        pool != opt.pools.end() ? pool->second : nullptr,
        token != opt.tokens.end() ? token->second : opt.token,
        budget != opt.budgets.end() && budget->second ? budget->second.get()
                                                      : crawler->budget_.get(),
        slug_, [crawler] { return crawler->cancelled_.load(); });
    ingest_ = std::make_unique<PageIngest>(crawler->store_, repo_, slug_, lease.epoch(),
                                           opt.max_clock_skew, opt.keep_raw_pages,
                                           lease.include_pull_requests(), &progress_.counters);
  }

  absl::StatusOr<CrawlProgress> Crawl() {
    RETURN_IF_ERROR(FetchRepository());
    RETURN_IF_ERROR(CrawlListing(Listing::kIssues));
    if (!paused_ && tracker_->comment_listing() == CommentListing::kRepositoryWide) {
      RETURN_IF_ERROR(CrawlListing(Listing::kComments));
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
    c.set_requests(loop_->requests());
    c.set_retries(loop_->retries());
    return c;
  }

 private:
  TrackerRepo Where() const { return TrackerRepo{base_, path_owner_, path_name_}; }

  // PageBudgetLeft reports whether the lease may fetch another listing page.
  bool PageBudgetLeft() const {
    const int max = c_->options_.max_pages_per_lease;
    return max <= 0 || pages_ < max;
  }

  // CheckCancelled is CANCELLED once Cancel was called, or while an abandoned prefetch is
  // being stopped (see Prefetch).
  absl::Status CheckCancelled() const { return loop_->CheckCancelled(); }
  bool Stopping() const { return loop_->Stopping(); }

  // Report brings the counters and rate budget that requests update (from the prefetching
  // thread too) into progress_ and reports it.
  absl::Status Report() {
    progress_.counters.set_requests(loop_->requests());
    progress_.counters.set_retries(loop_->retries());
    const RequestLoop::Rate rate = loop_->rate();
    progress_.rate_remaining = rate.remaining;
    progress_.rate_reset = rate.reset;
    return on_progress_(progress_);
  }

  // Requests go through the crawl's RequestLoop (tokens, retries, rate notes).
  absl::Status Sleep(absl::Duration d) { return loop_->Sleep(d); }
  absl::Duration Backoff(int retry) { return loop_->Backoff(retry); }
  absl::StatusOr<HttpResponse> Get(const std::string& url, const std::string& etag) {
    return loop_->Get(url, etag);
  }

  // UnexpectedStatus is the error for a response the crawl cannot use (never OK, even for a
  // 2xx other than 200 or an unasked-for 304).
  static absl::Status UnexpectedStatus(int http_status, const std::string& url) {
    const std::string where = absl::StrCat("GET ", Redact(url));
    absl::Status s = HttpStatusToStatus(http_status, where);
    if (s.ok()) s = absl::UnknownError(absl::StrCat(where, ": unexpected HTTP ", http_status));
    return s;
  }

  absl::Status FetchRepository() {
    std::string url = tracker_->RepositoryUrl(Where());
    const std::string etag = incremental_ ? cursor_.repo_etag() : "";
    ASSIGN_OR_RETURN(HttpResponse resp, Get(url, etag));
    if (resp.status == 304 && !etag.empty()) {
      progress_.counters.set_not_modified(progress_.counters.not_modified() + 1);
      return absl::OkStatus();
    }
    const int s = resp.status;
    if (s == 301 || s == 302 || s == 307 || s == 308) {
      std::string location = resp.headers.Get("Location");
      if (!location.empty() && location[0] == '/') location = Origin(base_) + location;
      if (location.empty() || Origin(location) != Origin(base_)) {
        return absl::PermissionDeniedError(absl::StrCat(
            "GET ", Redact(url), ": HTTP ", s, " redirects to another host or nowhere ('",
            Redact(location), "')"));
      }
      url = location;
      ASSIGN_OR_RETURN(resp, Get(url, ""));
    }
    if (resp.status == 404 || resp.status == 410) {
      return absl::NotFoundError(
          absl::StrCat("repository ", slug_, " gone (GET ", Redact(url), ": HTTP ", resp.status, ")"));
    }
    if (resp.status != 200) return UnexpectedStatus(resp.status, url);
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

  std::string ListingUrl(Listing kind, const std::optional<absl::Time>& since) const {
    return kind == Listing::kIssues
               ? tracker_->IssuesUrl(Where(), since, c_->options_.per_page)
               : tracker_->CommentsUrl(Where(), since, c_->options_.per_page);
  }

  // ParsedPage is one listing page as the tracker's parser read it.
  struct ParsedPage {
    std::vector<v1::Issue> issues;      // an issue listing's
    std::vector<v1::Comment> comments;  // a comment listing's
    std::vector<BadItem> bad;           // items set aside (Quarantine)
    size_t items = 0;                   // items on the page, bad ones included
  };

  // ParsePage parses one page's body: INVALID_ARGUMENT naming the URL when it does not parse
  // (cut short, not JSON), which Pass fetches again, bounded like a 5xx.
  absl::StatusOr<ParsedPage> ParsePage(Listing kind, const std::string& url,
                                       const HttpResponse& resp) const {
    ParsedPage parsed;
    absl::Status s;
    if (kind == Listing::kIssues) {
      auto page = tracker_->ParseIssues(resp.body, repo_, &parsed.bad);
      if (page.ok()) parsed.issues = std::move(*page);
      s = page.status();
    } else {
      auto page = tracker_->ParseComments(resp.body, repo_, nullptr, Where(), &parsed.bad);
      if (page.ok()) parsed.comments = std::move(*page);
      s = page.status();
    }
    if (!s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("GET ", Redact(url), ": ", s.message()));
    }
    parsed.items = parsed.issues.size() + parsed.comments.size() + parsed.bad.size();
    return parsed;
  }

  // StorePage stores the kept items of a parsed page (and, for per-issue comment listings, the
  // comments of the issues that changed) and reports progress. The body is moved into the
  // store's raw page (`resp` keeps its headers).
  absl::Status StorePage(Listing kind, const std::string& url, HttpResponse* response,
                         ParsedPage parsed, PassResult* pass) {
    HttpResponse& resp = *response;
    const absl::Time now = c_->clock_->Now();
    PageMark mark;
    mark.date = ParseHttpDate(resp.headers.Get("Date")).value_or(now);
    const bool keep_prs = lease_.include_pull_requests();
    auto note = [&](const google::protobuf::Timestamp& ts) {
      const absl::Time t = FromProto(ts);
      pass->updated.push_back(t);
      if (!mark.last_updated || t > *mark.last_updated) mark.last_updated = t;
      if (!pass->max_updated || t > *pass->max_updated) pass->max_updated = t;
    };
    std::vector<BadItem>& bad = parsed.bad;
    if (kind == Listing::kIssues) {
      std::vector<v1::Issue>* page = &parsed.issues;
      ingest_->DropFutureItems(mark.date, page, &bad);
      RETURN_IF_ERROR(ingest_->Quarantine("issues", url, now, bad));
      std::vector<std::string> items;
      for (const v1::Issue& issue : *page) items.push_back(IssueStore::RawIssueItem(issue.number()));
      RETURN_IF_ERROR(ingest_->KeepRawPage("issues", url, std::move(resp.body), now, nullptr, items));
      std::vector<v1::Issue> kept;
      for (v1::Issue& issue : *page) {
        note(issue.updated_at());
        if (issue.is_pull_request()) pr_numbers_.insert(issue.number());
        if (issue.is_pull_request() && !keep_prs) continue;
        *issue.mutable_fetched_at() = ToProto(now);
        kept.push_back(std::move(issue));
      }
      // Which issues need their comments listed is decided against the stored copies, before
      // the page replaces them.
      std::vector<size_t> need_comments;
      if (tracker_->comment_listing() == CommentListing::kPerIssue) {
        for (size_t i = 0; i < kept.size(); ++i) {
          ASSIGN_OR_RETURN(bool need, ingest_->NeedsComments(kept[i]));
          if (need) need_comments.push_back(i);
        }
      }
      RETURN_IF_ERROR(ingest_->StoreIssues(kept));
      for (size_t i : need_comments) RETURN_IF_ERROR(FetchIssueComments(kept[i]));
    } else {
      std::vector<v1::Comment>* page = &parsed.comments;
      ingest_->DropFutureItems(mark.date, page, &bad);
      RETURN_IF_ERROR(ingest_->Quarantine("comments", url, now, bad));
      std::vector<std::string> items;
      for (const v1::Comment& c : *page) {
        items.push_back(IssueStore::RawCommentItem(c.issue_number(), c.id()));
      }
      RETURN_IF_ERROR(ingest_->KeepRawPage("comments", url, std::move(resp.body), now, nullptr, items));
      std::vector<v1::Comment> kept;
      for (v1::Comment& comment : *page) {
        note(comment.updated_at());
        if (!keep_prs && (tracker_->IsPullRequestComment(comment) ||
                          pr_numbers_.count(comment.issue_number()) > 0)) {
          continue;
        }
        *comment.mutable_fetched_at() = ToProto(now);
        kept.push_back(std::move(comment));
      }
      RETURN_IF_ERROR(ingest_->StoreComments(kept));
    }
    pass->pages.push_back(mark);
    return Report();
  }

  // FetchIssueComments lists every comment of one issue (all pages) and stores them. HTTP 410:
  // the issue was deleted, so it becomes a tombstone (a DELETE in the change feed).
  absl::Status FetchIssueComments(const v1::Issue& issue) {
    std::string url = tracker_->IssueCommentsUrl(Where(), issue, c_->options_.per_page);
    std::set<std::string> listed;  // the pages of this listing, to stop a looping next page
    for (;;) {
      listed.insert(url);
      ++pages_;
      ASSIGN_OR_RETURN(HttpResponse resp, Get(url, ""));
      if (resp.status == 410) {
        spdlog::info("{}: issue {} is gone (HTTP 410); keeping a tombstone", slug_, issue.key());
        return ingest_->MarkDeleted(issue.number());
      }
      if (resp.status != 200) return UnexpectedStatus(resp.status, url);
      std::vector<BadItem> bad_items;
      auto page = tracker_->ParseComments(resp.body, repo_, &issue, Where(), &bad_items);
      // A body that does not parse (cut short, not JSON) is fetched again, bounded like 5xx;
      // bad items in a body that parses are not (see Quarantine).
      for (int bad = 0; !page.ok() && bad < c_->options_.max_retries; ++bad) {
        loop_->CountRetry();
        RETURN_IF_ERROR(Sleep(Backoff(bad)));
        ASSIGN_OR_RETURN(resp, Get(url, ""));
        if (resp.status == 410) break;
        if (resp.status != 200) return UnexpectedStatus(resp.status, url);
        bad_items.clear();
        page = tracker_->ParseComments(resp.body, repo_, &issue, Where(), &bad_items);
      }
      if (resp.status == 410) {
        spdlog::info("{}: issue {} is gone (HTTP 410); keeping a tombstone", slug_, issue.key());
        return ingest_->MarkDeleted(issue.number());
      }
      if (!page.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("GET ", Redact(url), ": ", page.status().message()));
      }
      const absl::Time fetched = c_->clock_->Now();
      const size_t on_page = page->size() + bad_items.size();
      ingest_->DropFutureItems(ParseHttpDate(resp.headers.Get("Date")).value_or(fetched), &*page,
                               &bad_items);
      RETURN_IF_ERROR(ingest_->Quarantine("notes", url, fetched, bad_items));
      std::vector<std::string> items;
      for (const v1::Comment& c : *page) {
        items.push_back(IssueStore::RawCommentItem(c.issue_number(), c.id()));
      }
      RETURN_IF_ERROR(ingest_->KeepRawPage("notes", url, std::move(resp.body), fetched, &issue, items));
      const auto now = ToProto(fetched);
      for (v1::Comment& comment : *page) *comment.mutable_fetched_at() = now;
      RETURN_IF_ERROR(ingest_->StoreComments(*page));
      ASSIGN_OR_RETURN(std::optional<std::string> next, NextUrl(url, resp, listed, on_page));
      if (!next) return absl::OkStatus();
      url = *next;
    }
  }

  // NextUrl returns the next page's URL (nullopt on the last page); PERMISSION_DENIED when it
  // points to another host (the token must not follow it there). A tracker that would page
  // forever is INVALID_ARGUMENT naming the repository and the URL: a next page that repeats a
  // URL in `listed` (the pages of this listing pass), or one named by a page of `items` == 0
  // items (nullopt: not known yet, e.g. for a prefetch).
  absl::StatusOr<std::optional<std::string>> NextUrl(const std::string& url,
                                                      const HttpResponse& resp,
                                                      const std::set<std::string>& listed,
                                                      std::optional<size_t> items) const {
    std::optional<std::string> next = tracker_->NextPageUrl(url, resp);
    if (next && Origin(*next) != Origin(base_)) {
      return absl::PermissionDeniedError(absl::StrCat(
          "GET ", Redact(url), ": the next page is on another host: ", Redact(*next)));
    }
    if (next && (listed.count(*next) > 0 || *next == url)) {
      return absl::InvalidArgumentError(absl::StrCat(
          slug_, ": the tracker's next page repeats a page already listed in this pass (GET ",
          Redact(url), " names ", Redact(*next), " as next); stopping instead of looping"));
    }
    if (next && items && *items == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          slug_, ": the tracker names a next page after an empty page (GET ", Redact(url),
          " has no items and names ", Redact(*next), " as next); stopping instead of looping"));
    }
    return next;
  }

  // MayPrefetch reports whether the next page of a `kind` listing may be requested while the
  // current one is stored (see Prefetch): when pipelining is on and the page budget allows one
  // more page. The notes of a GitLab issue page count against the page budget while that page
  // is stored, so under a budget the next issue page waits for them (the lease then stops
  // exactly where it would without pipelining).
  bool MayPrefetch(Listing kind) const {
    const CrawlerOptions& opt = c_->options_;
    if (!opt.pipeline_pages) return false;
    if (kind == Listing::kIssues && tracker_->comment_listing() == CommentListing::kPerIssue &&
        opt.max_pages_per_lease > 0) {
      return false;
    }
    return PageBudgetLeft();
  }

  // Pass lists one listing from `since`, page after page, until the last page or the lease's
  // page budget (then `truncated`). Pages are pipelined: once page n's response is in, page n+1
  // (its URL is in n's headers) is requested while n is parsed and stored, so a token does not
  // idle during the parse and the synced write. Pages are still stored one after the other, in
  // order, and each is reported before the next is looked at; a failure of page n+1 returns
  // with the store and cursor as page n left them.
  absl::StatusOr<PassResult> Pass(Listing kind, const std::optional<absl::Time>& since,
                                  const std::string& etag) {
    PassResult pass;
    std::string url = ListingUrl(kind, since);
    std::set<std::string> listed;  // the pages of this pass, to stop a looping next page
    Prefetch ahead(loop_->stop_flag());
    for (bool first = true;; first = false) {
      listed.insert(url);
      absl::StatusOr<HttpResponse> got;
      if (ahead.Holds(url)) {
        got = ahead.Take();  // counted against the page budget when it was sent
      } else {
        ahead.Abandon();
        if (!PageBudgetLeft()) {
          pass.truncated = true;
          return pass;
        }
        ++pages_;
        got = Get(url, first ? etag : "");
      }
      ASSIGN_OR_RETURN(HttpResponse resp, std::move(got));
      if (resp.status == 304 && first && !etag.empty()) {
        progress_.counters.set_not_modified(progress_.counters.not_modified() + 1);
        pass.not_modified = true;
        return pass;
      }
      if (resp.status == 422 && !first) {
        // GitHub refuses deep page numbers on large listings: list again from the greatest
        // updated_at stored so far (inclusive, so the items there are re-applied as no-ops).
        const std::optional<absl::Time> restart = pass.max_updated ? pass.max_updated : since;
        if (!restart || (restart_since_ && *restart_since_ == *restart)) {
          return absl::FailedPreconditionError(absl::StrCat(
              "GET ", Redact(url), ": HTTP 422 on a deep page, and restarting from the since "
              "cursor makes no progress (more items share one updated_at than the tracker pages)"));
        }
        restart_since_ = restart;
        listed.clear();  // a new listing (another since)
        loop_->CountRetry();
        spdlog::info("{}: HTTP 422 on a deep page; listing again from {}", slug_,
                     FormatRfc3339(*restart));
        url = ListingUrl(kind, restart);
        continue;
      }
      if (resp.status != 200) {
        return UnexpectedStatus(resp.status, url);
      }
      if (first) pass.first_etag = resp.headers.Get("ETag");
      if (first && kind == Listing::kIssues && !since) {
        // The repository's open_issues_count counts only open issues (and pull requests), so
        // the whole listing's own total (or last page) raises the estimate.
        progress_.issues_estimated = std::max(
            progress_.issues_estimated, tracker_->EstimatedTotal(resp, c_->options_.per_page));
      }
      if (MayPrefetch(kind)) {
        absl::StatusOr<std::optional<std::string>> next =
            NextUrl(url, resp, listed, std::nullopt);
        if (next.ok() && next->has_value()) {
          ++pages_;
          if (!ahead.Start(**next, [this, next_url = **next] { return Get(next_url, ""); })) {
            --pages_;  // no thread: the page is fetched when its turn comes
          }
        }
      }
      absl::StatusOr<ParsedPage> parsed = ParsePage(kind, url, resp);
      // A body that does not parse (cut short, not JSON) is fetched again, bounded like 5xx.
      for (int bad = 0; !parsed.ok() && bad < c_->options_.max_retries; ++bad) {
        loop_->CountRetry();
        spdlog::debug("{}; fetching it again", std::string(parsed.status().message()));
        RETURN_IF_ERROR(Sleep(Backoff(bad)));
        ASSIGN_OR_RETURN(resp, Get(url, ""));
        if (resp.status != 200) return UnexpectedStatus(resp.status, url);
        parsed = ParsePage(kind, url, resp);
      }
      RETURN_IF_ERROR(parsed.status());
      const size_t items = parsed->items;
      RETURN_IF_ERROR(StorePage(kind, url, &resp, *std::move(parsed), &pass));
      // The next URL of the response stored (after a bad body, of its re-fetch; a prefetch of
      // another URL is then abandoned at the top of the loop).
      ASSIGN_OR_RETURN(std::optional<std::string> next, NextUrl(url, resp, listed, items));
      if (!next) return pass;
      url = *next;
    }
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
    ASSIGN_OR_RETURN(PassResult pass, Pass(kind, since, etag));
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
      ASSIGN_OR_RETURN(pass, Pass(kind, cur_since, ""));
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
    if (incremental_ && has_since) since = FromProto(since_ts);
    std::string etag = incremental_ ? (issues ? cursor_.issues_etag() : cursor_.comments_etag()) : "";

    for (int round = 1;; ++round) {
      ASSIGN_OR_RETURN(RoundResult r, ListRound(kind, since, etag));
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
  // Where the crawl's pages are stored (counting into progress_.counters).
  std::unique_ptr<PageIngest> ingest_;
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
  std::set<int64_t> pr_numbers_;
  int pages_ = 0;         // listing pages fetched under this lease
  std::optional<absl::Time> restart_since_;  // the last since a 422 restarted a listing from
  bool paused_ = false;   // the page budget ran out
};

RepoCrawler::RepoCrawler(HttpTransport* transport, IssueStore* store, Clock* clock,
                         CrawlerOptions options)
    : transport_(transport),
      store_(store),
      clock_(clock),
      options_(std::move(options)),
      budget_(options_.budget ? options_.budget : std::make_shared<RateBudget>()) {}

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

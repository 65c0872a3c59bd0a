// The crawl loop of one lease. Shift repair, in short: offset pagination over a listing sorted by
// updated_at can skip an item when another item that was already read is updated meanwhile and
// moves to the end (everything behind it shifts one place forward). Every page remembers the
// tracker's `Date` and the last updated_at on it. After a pass, the items whose updated_at is at
// or after the first page's Date (− 1 s) changed while we paged; the first page fetched after
// the earliest such change marks where skipping could start, so a repair pass re-lists from the
// last updated_at before that page. Nothing changed → no repair, no extra request.
#include "crawler/repo_crawler.h"

#include <algorithm>
#include <random>
#include <regex>
#include <set>
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
#include "crawler/github_client.h"

namespace issuescope::crawler {
namespace {

// Longest wait for a rate-limit reset before the crawl gives up (GitHub resets hourly).
constexpr absl::Duration kMaxRateWait = absl::Hours(2);

// Origin returns "scheme://host[:port]" of an absolute URL ("" when it has none).
std::string Origin(absl::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == absl::string_view::npos) return "";
  const size_t path = url.find('/', scheme + 3);
  return absl::AsciiStrToLower(url.substr(0, path));
}

std::string UrlEncodeTime(absl::Time t) {
  // RFC 3339 in UTC needs escaping only for ':'.
  std::string out;
  for (char c : FormatRfc3339(t)) {
    if (c == ':') {
      out += "%3A";
    } else {
      out += c;
    }
  }
  return out;
}

bool IsRetryableTransportError(const absl::Status& s) {
  return s.code() == absl::StatusCode::kUnavailable ||
         s.code() == absl::StatusCode::kDeadlineExceeded;
}

enum class Listing { kIssues, kComments };

// PageMark is what shift repair needs to know about one page.
struct PageMark {
  absl::Time date;                          // tracker's Date (or our clock) at the response
  std::optional<absl::Time> last_updated;   // greatest updated_at on the page
};

// PassResult is one pass over a listing.
struct PassResult {
  bool not_modified = false;
  std::string first_etag;
  std::vector<PageMark> pages;
  std::vector<absl::Time> updated;          // updated_at of every item listed
  std::optional<absl::Time> max_updated;
};

// RepairPlan says whether and from where a pass must be repaired.
struct RepairPlan {
  bool needed = false;
  std::optional<absl::Time> since;
};

RepairPlan PlanRepair(const PassResult& pass, const std::optional<absl::Time>& pass_since) {
  RepairPlan plan;
  // A listing that fit on one page was served whole: there is no page boundary to skip at.
  if (pass.pages.size() <= 1) return plan;
  const absl::Time start = pass.pages.front().date - absl::Seconds(1);
  std::optional<absl::Time> earliest_change;
  for (absl::Time t : pass.updated) {
    if (t >= start && (!earliest_change || t < *earliest_change)) earliest_change = t;
  }
  if (!earliest_change) return plan;
  plan.needed = true;
  // j: the first page served at or after the change (timestamps have one-second resolution).
  size_t j = pass.pages.size() - 1;
  for (size_t i = 0; i < pass.pages.size(); ++i) {
    if (pass.pages[i].date >= *earliest_change - absl::Seconds(1)) {
      j = i;
      break;
    }
  }
  // A change before the first response shifts nothing; within its second, the earliest boundary
  // that can have been affected is the one after the first page.
  if (j == 0) j = 1;
  plan.since = pass_since;
  for (size_t i = j; i > 0; --i) {
    if (pass.pages[i - 1].last_updated) {
      plan.since = pass.pages[i - 1].last_updated;
      break;
    }
  }
  return plan;
}

}  // namespace

class RepoCrawler::Run {
 public:
  Run(RepoCrawler* crawler, const v1::Lease& lease,
      const std::function<absl::Status(const CrawlProgress&)>& on_progress)
      : c_(crawler), lease_(lease), on_progress_(on_progress), rng_(crawler->options_.jitter_seed) {
    repo_ = lease.repo();
    slug_ = lease.repo_slug().empty() ? RepoSlug(repo_) : lease.repo_slug();
    base_ = repo_.api_url().empty() ? DefaultApiUrl(repo_.tracker()) : repo_.api_url();
    while (!base_.empty() && base_.back() == '/') base_.pop_back();
    path_owner_ = repo_.owner();
    path_name_ = repo_.name();
    incremental_ = lease.mode() != v1::CRAWL_MODE_FULL;
    if (incremental_) cursor_ = lease.cursor();
  }

  absl::StatusOr<CrawlProgress> Crawl() {
    RETURN_IF_ERROR(FetchRepository());
    RETURN_IF_ERROR(CrawlListing(Listing::kIssues));
    RETURN_IF_ERROR(CrawlListing(Listing::kComments));
    progress_.cursor = cursor_;
    progress_.done = true;
    RETURN_IF_ERROR(on_progress_(progress_));
    return progress_;
  }

 private:
  std::string RepoUrl() const { return absl::StrCat(base_, "/repos/", path_owner_, "/", path_name_); }

  absl::Status CheckCancelled() const {
    if (c_->cancelled_.load()) return absl::CancelledError(absl::StrCat("crawl of ", slug_, " cancelled"));
    return absl::OkStatus();
  }

  // Sleep waits on the clock in steps of at most 1 s, so Cancel interrupts it.
  absl::Status Sleep(absl::Duration d) {
    while (d > absl::ZeroDuration()) {
      RETURN_IF_ERROR(CheckCancelled());
      const absl::Duration step = std::min(d, absl::Seconds(1));
      c_->clock_->SleepFor(step);
      d -= step;
    }
    return CheckCancelled();
  }

  absl::Duration Backoff(int retry) {
    absl::Duration d = c_->options_.initial_backoff;
    for (int i = 0; i < retry && d < c_->options_.max_backoff; ++i) d *= 2;
    d = std::min(d, c_->options_.max_backoff);
    std::uniform_real_distribution<double> jitter(0.5, 1.0);
    return d * jitter(rng_);
  }

  // WaitForBudget sleeps until the token's rate budget resets when the tracker said it is
  // spent (to this crawl or to another one sharing the token's RateBudget).
  absl::Status WaitForBudget() {
    const absl::Time until = c_->budget_->SpentUntil(c_->clock_->Now());
    if (until == absl::InfinitePast()) return absl::OkStatus();
    const absl::Duration wait = until - c_->clock_->Now();
    if (wait > kMaxRateWait) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "rate limit of ", slug_, " spent until ", FormatRfc3339(until), ", too far away"));
    }
    spdlog::info("rate limit spent for {}; waiting {} until reset", slug_,
                 absl::FormatDuration(wait));
    return Sleep(wait);
  }

  void NoteRate(const HttpHeaders& headers) {
    RateLimit rl = ParseRateLimit(headers);
    if (rl.remaining >= 0) {
      rate_ = rl;
      c_->budget_->Update(rl);
      progress_.rate_remaining = rl.remaining;
      progress_.rate_reset = rl.reset;
    }
  }

  // Get sends one GET with rate limiting and retries; returns any response below 500 except a
  // rate-limited 403/429.
  absl::StatusOr<HttpResponse> Get(const std::string& url, const std::string& etag) {
    const std::string where = absl::StrCat("GET ", Redact(url));
    const CrawlerOptions& opt = c_->options_;
    int retries = 0;
    for (;;) {
      RETURN_IF_ERROR(WaitForBudget());
      RETURN_IF_ERROR(CheckCancelled());
      HttpRequest req;
      req.url = url;
      req.timeout = opt.request_timeout;
      req.headers.Add("Accept", "application/vnd.github+json");
      req.headers.Add("User-Agent", opt.user_agent);
      if (!opt.token.empty()) req.headers.Add("Authorization", "Bearer " + opt.token);
      if (!etag.empty()) req.headers.Add("If-None-Match", etag);
      progress_.counters.set_requests(progress_.counters.requests() + 1);
      absl::StatusOr<HttpResponse> resp = c_->transport_->Send(req);

      absl::Duration wait;
      absl::Status last;
      if (!resp.ok()) {
        if (!IsRetryableTransportError(resp.status())) {
          return absl::Status(resp.status().code(),
                              absl::StrCat(where, ": ", resp.status().message()));
        }
        last = resp.status();
        wait = Backoff(retries);
      } else {
        NoteRate(resp->headers);
        const int s = resp->status;
        if (s == 403 || s == 429) {
          const auto retry_after = ParseRetryAfter(resp->headers, c_->clock_->Now());
          const bool limited = s == 429 || rate_.remaining == 0 || retry_after.has_value() ||
                               absl::StrContains(absl::AsciiStrToLower(resp->body), "rate limit");
          if (!limited) return HttpStatusToStatus(s, where);
          if (retry_after && *retry_after > kMaxRateWait) {
            return absl::ResourceExhaustedError(absl::StrCat(
                where, ": the tracker asks to retry after ", absl::FormatDuration(*retry_after),
                ", too far away"));
          }
          if (retry_after) {
            wait = *retry_after;
          } else if (rate_.remaining == 0 && rate_.reset != absl::InfinitePast()) {
            wait = absl::ZeroDuration();  // WaitForBudget sleeps until the reset
          } else {
            // No hint when to come back: GitHub asks for at least a minute (max_backoff).
            wait = opt.max_backoff;
          }
          last = HttpStatusToStatus(s, where, /*rate_limited=*/true);
        } else if (s >= 500) {
          last = HttpStatusToStatus(s, where);
          wait = Backoff(retries);
        } else {
          return resp;
        }
      }
      if (retries >= opt.max_retries) {
        const auto code = last.code() == absl::StatusCode::kResourceExhausted
                              ? absl::StatusCode::kResourceExhausted
                              : absl::StatusCode::kUnavailable;
        return absl::Status(code, absl::StrCat(where, ": giving up after ", retries,
                                               " retries; last error: ", last.message()));
      }
      ++retries;
      progress_.counters.set_retries(progress_.counters.retries() + 1);
      spdlog::debug("{}: retry {} in {} ({})", where, retries, absl::FormatDuration(wait),
                    std::string(last.message()));
      RETURN_IF_ERROR(Sleep(wait));
    }
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
    std::string url = RepoUrl();
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
    auto info = ParseRepository(resp.body);
    if (!info.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("GET ", Redact(url), ": ", info.status().message()));
    }
    if (info->open_issues_count >= 0) progress_.issues_estimated = info->open_issues_count;
    cursor_.set_repo_etag(resp.headers.Get("ETag"));
    std::vector<std::string> parts = absl::StrSplit(info->full_name, '/');
    if (parts.size() == 2 && !parts[0].empty() && !parts[1].empty() &&
        !absl::EqualsIgnoreCase(info->full_name, RepoFullName(repo_))) {
      progress_.moved_to = absl::StrCat(TrackerName(repo_.tracker()), ":", info->full_name);
      path_owner_ = parts[0];
      path_name_ = parts[1];
      spdlog::info("repository {} moved to {}", slug_, progress_.moved_to);
    }
    return absl::OkStatus();
  }

  std::string ListingUrl(Listing kind, const std::optional<absl::Time>& since) const {
    std::string url = kind == Listing::kIssues
                          ? absl::StrCat(RepoUrl(), "/issues?state=all&sort=updated&direction=asc")
                          : absl::StrCat(RepoUrl(), "/issues/comments?sort=updated&direction=asc");
    absl::StrAppend(&url, "&per_page=", c_->options_.per_page);
    if (since) absl::StrAppend(&url, "&since=", UrlEncodeTime(*since));
    return url;
  }

  // StorePage parses one page, stores the kept items and reports progress.
  absl::Status StorePage(Listing kind, const std::string& url, const HttpResponse& resp,
                         PassResult* pass) {
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
    auto bad_page = [&](const absl::Status& s) {
      return absl::InvalidArgumentError(absl::StrCat("GET ", Redact(url), ": ", s.message()));
    };
    v1::CrawlCounters& counters = progress_.counters;
    if (kind == Listing::kIssues) {
      auto page = ParseIssuesPage(resp.body, repo_);
      if (!page.ok()) return bad_page(page.status());
      std::vector<v1::Issue> kept;
      for (v1::Issue& issue : *page) {
        note(issue.updated_at());
        if (issue.is_pull_request()) pr_numbers_.insert(issue.number());
        if (issue.is_pull_request() && !keep_prs) continue;
        *issue.mutable_fetched_at() = ToProto(now);
        kept.push_back(std::move(issue));
      }
      ASSIGN_OR_RETURN(ApplyResult r, c_->store_->ApplyIssues(slug_, lease_.epoch(), kept));
      counters.set_issues_fetched(counters.issues_fetched() + static_cast<int64_t>(kept.size()));
      counters.set_issues_stored(counters.issues_stored() + r.stored);
    } else {
      auto page = ParseCommentsPage(resp.body, repo_);
      if (!page.ok()) return bad_page(page.status());
      std::vector<v1::Comment> kept;
      for (v1::Comment& comment : *page) {
        note(comment.updated_at());
        if (!keep_prs && (IsPullRequestComment(comment) ||
                          pr_numbers_.count(comment.issue_number()) > 0)) {
          continue;
        }
        *comment.mutable_fetched_at() = ToProto(now);
        kept.push_back(std::move(comment));
      }
      ASSIGN_OR_RETURN(ApplyResult r, c_->store_->ApplyComments(slug_, lease_.epoch(), kept));
      counters.set_comments_fetched(counters.comments_fetched() +
                                    static_cast<int64_t>(kept.size()));
      counters.set_comments_stored(counters.comments_stored() + r.stored);
    }
    pass->pages.push_back(mark);
    return on_progress_(progress_);
  }

  // NoteLastPage raises the estimated issue total from the first page's Link rel="last" (which
  // GitHub sends only sometimes): at most last_page × per_page issues. The repository's
  // open_issues_count counts only open issues (and pull requests), so it undercounts.
  void NoteLastPage(const std::map<std::string, std::string>& links) {
    auto last = links.find("last");
    if (last == links.end()) return;
    static const std::regex kPage(R"([?&]page=(\d+))");
    std::smatch m;
    int64_t page = 0;
    if (std::regex_search(last->second, m, kPage) && absl::SimpleAtoi(m[1].str(), &page) &&
        page > 0) {
      progress_.issues_estimated =
          std::max(progress_.issues_estimated, page * static_cast<int64_t>(c_->options_.per_page));
    }
  }

  // Pass lists one listing from `since`, following only Link rel="next".
  absl::StatusOr<PassResult> Pass(Listing kind, const std::optional<absl::Time>& since,
                                  const std::string& etag) {
    PassResult pass;
    std::string url = ListingUrl(kind, since);
    for (bool first = true;; first = false) {
      ASSIGN_OR_RETURN(HttpResponse resp, Get(url, first ? etag : ""));
      if (resp.status == 304 && first && !etag.empty()) {
        progress_.counters.set_not_modified(progress_.counters.not_modified() + 1);
        pass.not_modified = true;
        return pass;
      }
      if (resp.status != 200) {
        return UnexpectedStatus(resp.status, url);
      }
      if (first) pass.first_etag = resp.headers.Get("ETag");
      RETURN_IF_ERROR(StorePage(kind, url, resp, &pass));
      const auto links = ParseLinkHeader(resp.headers.Get("Link"));
      if (first && kind == Listing::kIssues) NoteLastPage(links);
      auto next = links.find("next");
      if (next == links.end()) return pass;
      if (Origin(next->second) != Origin(base_)) {
        return absl::PermissionDeniedError(absl::StrCat(
            "GET ", Redact(url), ": Link rel=next points to another host: ", Redact(next->second)));
      }
      url = next->second;
    }
  }

  // RoundResult is one listing pass from a since, with its shift repairs.
  struct RoundResult {
    bool not_modified = false;
    bool stable = false;
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
      if (pass.max_updated && (!max_updated || *pass.max_updated > *max_updated)) {
        max_updated = pass.max_updated;
      }
    }
    round.new_since = round.stable ? max_updated : cur_since;
    if (since && (!round.new_since || *round.new_since < *since)) round.new_since = since;
    return round;
  }

  // CrawlListing brings one listing up to date. When the cursor moves, one more round from the
  // new cursor (normally a single page: the items at the cursor, re-applied as no-ops) learns the
  // ETag of exactly the URL the next crawl sends, so an unchanged repository then costs only a
  // 304. An ETag is kept only for a listing URL whose since equals the stored cursor.
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
  const v1::Lease& lease_;
  const std::function<absl::Status(const CrawlProgress&)>& on_progress_;
  std::mt19937_64 rng_;
  v1::RepositoryRef repo_;
  std::string slug_;
  std::string base_;
  std::string path_owner_;
  std::string path_name_;
  bool incremental_ = true;
  v1::Cursor cursor_;
  CrawlProgress progress_;
  RateLimit rate_;
  std::set<int64_t> pr_numbers_;
};

RepoCrawler::RepoCrawler(HttpTransport* transport, IssueStore* store, Clock* clock,
                         CrawlerOptions options)
    : transport_(transport),
      store_(store),
      clock_(clock),
      options_(std::move(options)),
      budget_(options_.budget ? options_.budget : std::make_shared<RateBudget>()) {}

absl::StatusOr<CrawlProgress> RepoCrawler::Crawl(
    const v1::Lease& lease, const std::function<absl::Status(const CrawlProgress&)>& on_progress) {
  if (lease.repo().owner().empty() || lease.repo().name().empty()) {
    return absl::InvalidArgumentError("lease names no repository (owner or name empty)");
  }
  Run run(this, lease, on_progress);
  return run.Crawl();
}

}  // namespace issuescope::crawler

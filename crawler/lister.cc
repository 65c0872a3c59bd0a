#include "lister.h"

#include <algorithm>
#include <future>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "crawler/github_parse.h"
#include "crawler/issue_store.h"
#include "urls.h"

namespace issuescope::crawler {
namespace {

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

Lister::Lister(const Tracker* tracker, TrackerRepo where, v1::RepositoryRef repo, std::string slug,
               RequestLoop* loop, PageIngest* ingest, Clock* clock, ListerOptions options,
               ListerProgress progress)
    : tracker_(tracker),
      where_(std::move(where)),
      repo_(std::move(repo)),
      slug_(std::move(slug)),
      loop_(loop),
      ingest_(ingest),
      clock_(clock),
      options_(options),
      progress_(std::move(progress)) {}

std::string Lister::ListingUrl(Listing kind, const std::optional<absl::Time>& since) const {
  return kind == Listing::kIssues ? tracker_->IssuesUrl(where_, since, options_.per_page)
                                  : tracker_->CommentsUrl(where_, since, options_.per_page);
}

bool Lister::PageBudgetLeft() const {
  return options_.max_pages_per_lease <= 0 || pages_ < options_.max_pages_per_lease;
}

// Pass lists one listing from `since`, page after page, until the last page or the lease's
// page budget (then `truncated`). Pages are pipelined: once page n's response is in, page n+1
// (its URL is in n's headers) is requested while n is parsed and stored, so a token does not
// idle during the parse and the synced write. Pages are still stored one after the other, in
// order, and each is reported before the next is looked at; a failure of page n+1 returns
// with the store and cursor as page n left them.
absl::StatusOr<PassResult> Lister::Pass(Listing kind, const std::optional<absl::Time>& since,
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
      got = loop_->Get(url, first ? etag : "");
    }
    ASSIGN_OR_RETURN(HttpResponse resp, std::move(got));
    if (resp.status == 304 && first && !etag.empty()) {
      progress_.counters->set_not_modified(progress_.counters->not_modified() + 1);
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
      return UnexpectedResponse(resp.status, url);
    }
    if (first) pass.first_etag = resp.headers.Get("ETag");
    if (first && kind == Listing::kIssues && !since) {
      // The repository's open_issues_count counts only open issues (and pull requests), so
      // the whole listing's own total (or last page) raises the estimate.
      *progress_.issues_estimated = std::max(
          *progress_.issues_estimated, tracker_->EstimatedTotal(resp, options_.per_page));
    }
    if (MayPrefetch(kind)) {
      absl::StatusOr<std::optional<std::string>> next =
          NextUrl(url, resp, listed, std::nullopt);
      if (next.ok() && next->has_value()) {
        ++pages_;
        auto get = [this, next_url = **next] { return loop_->Get(next_url, ""); };
        if (!ahead.Start(**next, std::move(get))) {
          --pages_;  // no thread: the page is fetched when its turn comes
        }
      }
    }
    absl::StatusOr<ParsedPage> parsed = ParsePage(kind, url, resp);
    // A body that does not parse (cut short, not JSON) is fetched again, bounded like 5xx.
    for (int bad = 0; !parsed.ok() && bad < options_.max_retries; ++bad) {
      loop_->CountRetry();
      spdlog::debug("{}; fetching it again", std::string(parsed.status().message()));
      RETURN_IF_ERROR(loop_->Sleep(loop_->Backoff(bad)));
      ASSIGN_OR_RETURN(resp, loop_->Get(url, ""));
      if (resp.status != 200) return UnexpectedResponse(resp.status, url);
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


// ParsePage parses one page's body: INVALID_ARGUMENT naming the URL when it does not parse
// (cut short, not JSON), which Pass fetches again, bounded like a 5xx.
absl::StatusOr<Lister::ParsedPage> Lister::ParsePage(Listing kind, const std::string& url,
                                     const HttpResponse& resp) const {
  ParsedPage parsed;
  absl::Status s;
  if (kind == Listing::kIssues) {
    auto page = tracker_->ParseIssues(resp.body, repo_, &parsed.bad);
    if (page.ok()) parsed.issues = std::move(*page);
    s = page.status();
  } else {
    auto page = tracker_->ParseComments(resp.body, repo_, nullptr, where_, &parsed.bad);
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
absl::Status Lister::StorePage(Listing kind, const std::string& url, HttpResponse* response,
                       ParsedPage parsed, PassResult* pass) {
  HttpResponse& resp = *response;
  const absl::Time now = clock_->Now();
  PageMark mark;
  mark.date = ParseHttpDate(resp.headers.Get("Date")).value_or(now);
  const bool keep_prs = options_.include_pull_requests;
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
  return progress_.report();
}


// FetchIssueComments lists every comment of one issue (all pages) and stores them. HTTP 410:
// the issue was deleted, so it becomes a tombstone (a DELETE in the change feed).
absl::Status Lister::FetchIssueComments(const v1::Issue& issue) {
  std::string url = tracker_->IssueCommentsUrl(where_, issue, options_.per_page);
  std::set<std::string> listed;  // the pages of this listing, to stop a looping next page
  for (;;) {
    listed.insert(url);
    ++pages_;
    ASSIGN_OR_RETURN(HttpResponse resp, loop_->Get(url, ""));
    if (resp.status == 410) {
      spdlog::info("{}: issue {} is gone (HTTP 410); keeping a tombstone", slug_, issue.key());
      return ingest_->MarkDeleted(issue.number());
    }
    if (resp.status != 200) return UnexpectedResponse(resp.status, url);
    std::vector<BadItem> bad_items;
    auto page = tracker_->ParseComments(resp.body, repo_, &issue, where_, &bad_items);
    // A body that does not parse (cut short, not JSON) is fetched again, bounded like 5xx;
    // bad items in a body that parses are not (see Quarantine).
    for (int bad = 0; !page.ok() && bad < options_.max_retries; ++bad) {
      loop_->CountRetry();
      RETURN_IF_ERROR(loop_->Sleep(loop_->Backoff(bad)));
      ASSIGN_OR_RETURN(resp, loop_->Get(url, ""));
      if (resp.status == 410) break;
      if (resp.status != 200) return UnexpectedResponse(resp.status, url);
      bad_items.clear();
      page = tracker_->ParseComments(resp.body, repo_, &issue, where_, &bad_items);
    }
    if (resp.status == 410) {
      spdlog::info("{}: issue {} is gone (HTTP 410); keeping a tombstone", slug_, issue.key());
      return ingest_->MarkDeleted(issue.number());
    }
    if (!page.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("GET ", Redact(url), ": ", page.status().message()));
    }
    const absl::Time fetched = clock_->Now();
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
absl::StatusOr<std::optional<std::string>> Lister::NextUrl(const std::string& url,
                                                    const HttpResponse& resp,
                                                    const std::set<std::string>& listed,
                                                    std::optional<size_t> items) const {
  std::optional<std::string> next = tracker_->NextPageUrl(url, resp);
  if (next && !SameOrigin(*next, where_.base)) {
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
bool Lister::MayPrefetch(Listing kind) const {
  if (!options_.pipeline_pages) return false;
  if (kind == Listing::kIssues && tracker_->comment_listing() == CommentListing::kPerIssue &&
      options_.max_pages_per_lease > 0) {
    return false;
  }
  return PageBudgetLeft();
}

}  // namespace issuescope::crawler

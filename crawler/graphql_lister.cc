#include "graphql_lister.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "crawler/issue_store.h"
#include "urls.h"

namespace issuescope::crawler {
namespace {

// Queries answered in a row before the node cap grows again after a timeout.
constexpr int kGrowAfter = 3;
// Queries answered after which a node count that timed out is tried again.
constexpr int kForgetCeilingAfter = 100;
// Unusable answers (not JSON, cut short, not the shape asked for) to one query before the pass
// gives up on GraphQL.
constexpr int kAnswersBeforeGivingUp = 3;

// PostFailure is the error for an answer to a POST that is not 200 (never OK: a 2xx other than
// 200 is UNKNOWN).
absl::Status PostFailure(int http_status, const std::string& url) {
  const std::string what = absl::StrCat("POST ", Redact(url));
  if (http_status / 100 == 2 || http_status == 304) {
    return absl::UnknownError(absl::StrCat(what, ": unexpected HTTP ", http_status));
  }
  return HttpStatusToStatus(http_status, what);
}

}  // namespace

GraphqlLister::GraphqlLister(RequestLoop* graphql, RequestLoop* rest, const Tracker* tracker,
                             PageIngest* ingest, Clock* clock, std::string url, TrackerRepo where,
                             v1::RepositoryRef repo, GraphqlListerOptions options,
                             std::function<absl::Status()> report)
    : graphql_(graphql),
      rest_(rest),
      tracker_(tracker),
      ingest_(ingest),
      clock_(clock),
      url_(std::move(url)),
      where_(std::move(where)),
      repo_(std::move(repo)),
      options_(options),
      report_(std::move(report)),
      slug_(absl::StrCat(where_.owner, "/", where_.name)),
      remaining_(options.known_remaining) {}

bool GraphqlLister::Affordable(int64_t points) const { return remaining_ < 0 || remaining_ >= points; }

absl::Status GraphqlLister::AskBudget(int64_t* points, int64_t* timeouts) {
  ASSIGN_OR_RETURN(std::optional<HttpResponse> sent, Query(RateLimitBody(), timeouts));
  if (unavailable_ || !sent) return absl::OkStatus();
  absl::StatusOr<GraphqlRate> rate = ParseGraphqlRate(sent->body);
  if (rate.ok()) {
    NoteRate(*rate, points);
  } else if (rate.status().code() == absl::StatusCode::kResourceExhausted) {
    remaining_ = 0;
  }  // otherwise (rate limits off, say) the budget stays unknown and the pages tell
  return absl::OkStatus();
}

void GraphqlLister::Charged(int64_t* points) {
  if (remaining_ > 0) --remaining_;
  if (points != nullptr) ++*points;
}

void GraphqlLister::NoteRate(const GraphqlRate& rate, int64_t* points) {
  if (rate.cost > 0) *points += rate.cost;
  if (rate.remaining >= 0) remaining_ = rate.remaining;
}

absl::StatusOr<std::optional<HttpResponse>> GraphqlLister::Query(const std::string& body,
                                                                 int64_t* timeouts) {
  ASSIGN_OR_RETURN(HttpResponse resp, graphql_->Post(url_, body));
  const int s = resp.status;
  if (s == 404 || s == 401 || s == 403 || s == 410) {
    // No GraphQL here (a GitHub Enterprise without it, a REST-only proxy), or not for this
    // token: the caller lists over REST. A rate-limited 403 never reaches here (RequestLoop
    // retries it once the token may send again).
    unavailable_ = true;
    spdlog::info("{}: POST {} answered HTTP {}; listing over REST", slug_,
                 Redact(url_), s);
    return std::optional<HttpResponse>();
  }
  if (IsGraphqlTimeout(s, resp.body)) {
    if (timeouts != nullptr) ++*timeouts;
    return std::optional<HttpResponse>();
  }
  if (s != 200) return PostFailure(s, url_);
  return std::optional<HttpResponse>(std::move(resp));
}

void GraphqlLister::Abandon(absl::Status why, GraphqlPassResult* result) {
  spdlog::warn("{}: GraphQL comment listing abandoned, REST lists the comments: {}", slug_,
               std::string(why.message()));
  if (result->abandoned.ok()) result->abandoned = std::move(why);
}

absl::StatusOr<GraphqlPassResult> GraphqlLister::CommentsPass(
    const std::vector<std::pair<int64_t, int64_t>>& threads) {
  GraphqlPassResult result;
  std::deque<ThreadCursor> queue;
  // (issue, cursor) pairs asked for: one seen again means the listing loops.
  std::set<std::pair<int64_t, std::string>> followed;
  for (const auto& [number, comments] : threads) {
    if (comments <= 0) continue;  // nothing to ask for
    ThreadCursor t;
    t.number = number;
    t.first = static_cast<int>(std::min<int64_t>(comments, kCommentsPerIssue));
    if (!followed.insert(std::make_pair(t.number, t.after)).second) continue;  // named twice
    queue.push_back(std::move(t));
  }
  result.threads = static_cast<int64_t>(queue.size());
  const size_t max_threads =
      static_cast<size_t>(std::clamp(options_.max_threads_per_query, 1, kThreadsPerQuery));
  constexpr int64_t kMostNodes = int64_t{kThreadsPerQuery} * kCommentsPerIssue;
  int64_t cap = std::clamp<int64_t>(options_.max_nodes_per_query, 1, kMostNodes);
  int64_t ceiling = kMostNodes + 1;  // the fewest nodes a query asked for and timed out
  int answered_in_a_row = 0;
  int answered_since_ceiling = 0;
  int timeouts_at_one = 0;
  int bad_answers = 0;  // unusable answers in a row to the same query
  std::map<int64_t, int> shrunk;  // threads cut off alone: the comments asked for at a time
  if (!queue.empty() && remaining_ < 0) {
    // The budget is unknown: ask for it (free) rather than risk a query it cannot pay for.
    if (absl::Status asked = AskBudget(&result.points, &result.timeouts); !asked.ok()) {
      if (asked.code() == absl::StatusCode::kCancelled) return asked;
      Abandon(asked, &result);
      return result;
    }
    if (unavailable_) {
      result.unavailable = true;
      return result;
    }
  }
  while (!queue.empty()) {
    RETURN_IF_ERROR(graphql_->CheckCancelled());
    if (!Affordable(1)) {  // a query costs 1 point at most (at most 100 connections)
      result.budget_spent = true;
      break;
    }
    // Threads from the front while their comments stay within the cap (one always goes).
    size_t n = 0;
    int64_t nodes = 0;
    while (n < queue.size() && n < max_threads && (n == 0 || nodes + queue[n].first <= cap)) {
      nodes += queue[n].first;
      ++n;
    }
    const std::vector<ThreadCursor> asked(queue.begin(), queue.begin() + static_cast<long>(n));
    absl::StatusOr<std::optional<HttpResponse>> sent =
        Query(CommentPagesBody(where_.owner, where_.name, asked), &result.timeouts);
    if (!sent.ok()) {
      if (sent.status().code() == absl::StatusCode::kCancelled) return sent.status();
      Abandon(sent.status(), &result);
      break;
    }
    if (unavailable_) {
      if (result.queries == 0) {
        result.unavailable = true;
        return result;
      }
      Abandon(absl::UnavailableError("GraphQL became unavailable mid-pass"), &result);
      break;
    }
    std::optional<HttpResponse>& resp = *sent;
    absl::StatusOr<GraphqlCommentPages> pages =
        resp ? ParseGraphqlCommentPages(resp->body, repo_, asked)
             : absl::StatusOr<GraphqlCommentPages>(absl::OutOfRangeError("timed out"));
    if (!pages.ok() && pages.status().code() == absl::StatusCode::kResourceExhausted) {
      // Spent meanwhile (another crawl of the token): REST lists the comments.
      remaining_ = 0;
      result.budget_spent = true;
      break;
    }
    if (!pages.ok() && pages.status().code() == absl::StatusCode::kOutOfRange) {
      // Cut off (charged: the query ran) or over the node limit (not run).
      if (resp) {
        ++result.timeouts;
      } else {
        Charged(&result.points);
      }
      answered_in_a_row = 0;
      answered_since_ceiling = 0;
      bad_answers = 0;
      if (n > 1) {
        // Ask for half as many nodes, and not for this many again for a while.
        ceiling = std::min(ceiling, nodes);
        cap = std::max<int64_t>(1, nodes / 2);
        spdlog::info("{}: GraphQL query for {} comments timed out; asking for at most {} a query",
                     slug_, nodes, cap);
        continue;
      }
      // One thread alone: fewer of its comments at a time; the cap stays for the others.
      ThreadCursor& alone = queue.front();
      if (alone.first > 1) {
        alone.first = std::max(1, alone.first / 2);
        shrunk[alone.number] = alone.first;  // its next pages too
        spdlog::info("{}: GraphQL query for #{}'s comments timed out; asking for {} at a time",
                     slug_, alone.number, alone.first);
        continue;
      }
      if (++timeouts_at_one >= options_.max_timeouts_at_one) {
        Abandon(absl::UnavailableError(absl::StrCat(
                    "POST ", Redact(url_), ": GraphQL queries time out even for one comment of #",
                    alone.number, " (", timeouts_at_one, " times)")),
                &result);
        break;
      }
      continue;
    }
    if (!pages.ok()) {
      // Unusable (not JSON, cut short, not the shape asked for): charged as far as we know.
      Charged(nullptr);
      if (++bad_answers < kAnswersBeforeGivingUp) {
        // Cut short or garbled on the way: asked for again (nothing was stored).
        spdlog::info("{}: GraphQL answer unusable, asking again: {}", slug_,
                     std::string(pages.status().message()).substr(0, 120));
        continue;
      }
      Abandon(absl::Status(pages.status().code(), absl::StrCat("POST ", Redact(url_), ": ",
                                                               pages.status().message())),
              &result);
      break;
    }
    bad_answers = 0;
    timeouts_at_one = 0;
    ++result.queries;
    if (!result.started) {
      result.started = ParseHttpDate(resp->headers.Get("Date")).value_or(clock_->Now());
    }
    NoteRate(pages->rate, &result.points);
    const absl::Time now = clock_->Now();
    std::vector<std::string> items;
    for (const v1::Comment& c : pages->comments) {
      items.push_back(IssueStore::RawCommentItem(c.issue_number(), c.id()));
    }
    RETURN_IF_ERROR(
        ingest_->KeepRawPage("graphql_comments", url_, resp->body, now, nullptr, items));
    RETURN_IF_ERROR(StoreComments("graphql_comments", std::move(pages->comments),
                                  std::move(pages->bad), *resp, now, &result));
    queue.erase(queue.begin(), queue.begin() + static_cast<long>(n));
    bool loops = false;
    for (ThreadCursor& more : pages->more_comments) {
      if (!followed.insert(std::make_pair(more.number, more.after)).second) {
        Abandon(absl::InvalidArgumentError(absl::StrCat(
                    "POST ", Redact(url_), ": the comments of #", more.number,
                    " page to a cursor already listed: the listing loops")),
                &result);
        loops = true;
        break;
      }
      ++result.follow_ups;
      if (auto it = shrunk.find(more.number); it != shrunk.end()) more.first = it->second;
      queue.push_back(std::move(more));  // pooled with the threads still waiting
    }
    if (loops) break;
    RETURN_IF_ERROR(report_());
    if (++answered_since_ceiling >= kForgetCeilingAfter) {
      ceiling = kMostNodes + 1;  // the cut-offs may have been the server's load: try again
      answered_since_ceiling = 0;
    }
    const int64_t limit = std::min(kMostNodes, ceiling - 1);
    if (cap < limit && ++answered_in_a_row >= kGrowAfter) {
      // Grow halfway to the fewest nodes that timed out (a bisection), or by half again.
      cap = ceiling <= kMostNodes ? (cap + ceiling) / 2 : cap + std::max<int64_t>(1, cap / 2);
      cap = std::min(cap, limit);
      answered_in_a_row = 0;
    }
  }
  result.last_node_cap = cap;
  return result;
}

absl::Status GraphqlLister::StoreComments(const std::string& listing,
                                          std::vector<v1::Comment> comments,
                                          std::vector<BadItem> bad, const HttpResponse& resp,
                                          absl::Time now, GraphqlPassResult* result) {
  const absl::Time date = ParseHttpDate(resp.headers.Get("Date")).value_or(now);
  ingest_->DropFutureItems(date, &comments, &bad);
  RETURN_IF_ERROR(ingest_->Quarantine(listing.c_str(), url_, now, bad));
  for (v1::Comment& c : comments) {
    const absl::Time t = FromProto(c.updated_at());
    if (!result->max_comment_updated || t > *result->max_comment_updated) {
      result->max_comment_updated = t;
    }
    *c.mutable_fetched_at() = ToProto(now);
  }
  return ingest_->StoreComments(comments);
}

absl::StatusOr<SweepResult> GraphqlLister::Sweep(std::optional<std::vector<int64_t>> listed) {
  SweepResult result;
  std::vector<int64_t> numbers;
  ASSIGN_OR_RETURN(std::vector<int64_t> stored, ingest_->StoredNumbers());
  if (stored.empty()) {
    result.complete = true;  // nothing stored, nothing can have vanished
    return result;
  }
  if (listed) {
    numbers = *std::move(listed);
  } else {
    if (remaining_ < 0) {
      // Unknown budget: ask for it (free) to weigh the listing against it.
      RETURN_IF_ERROR(AskBudget(&result.points, nullptr));
      if (unavailable_) return result;  // no GraphQL here: no sweep
    }
    const int64_t cost = std::max<int64_t>(1, (static_cast<int64_t>(stored.size()) + 99) / 100);
    if (remaining_ >= 0 &&
        static_cast<double>(cost) > options_.sweep_budget_share * static_cast<double>(remaining_)) {
      spdlog::info("{}: presence sweep postponed: listing {} issues costs {} GraphQL points, more "
                   "than {:.0f}% of the {} left",
                   slug_, stored.size(), cost, 100 * options_.sweep_budget_share, remaining_);
      result.over_share = true;
      return result;
    }
    std::string after;
    std::set<std::string> cursors;
    int failed_tries = 0;  // of the same numbers page
    for (;;) {
      RETURN_IF_ERROR(graphql_->CheckCancelled());
      if (!Affordable(1)) return result;  // incomplete: nothing is tombstoned
      absl::StatusOr<std::optional<HttpResponse>> sent =
          Query(IssueNumbersBody(where_.owner, where_.name, after), nullptr);
      if (!sent.ok() && sent.status().code() == absl::StatusCode::kResourceExhausted) {
        return result;  // the budget: incomplete, nothing tombstoned
      }
      if (!sent.ok()) return sent.status();
      if (unavailable_) return result;  // no GraphQL here: no sweep (nothing is tombstoned)
      absl::StatusOr<GraphqlNumbersPage> page =
          *sent ? ParseGraphqlNumbersPage((*sent)->body)
                : absl::StatusOr<GraphqlNumbersPage>(absl::UnavailableError("timed out"));
      if (!page.ok() && page.status().code() == absl::StatusCode::kResourceExhausted) {
        remaining_ = 0;
        return result;
      }
      if (!page.ok()) {
        // Cut off, cut short or garbled: asked for again, three times in all (each charged).
        Charged(&result.points);
        if (++failed_tries < kAnswersBeforeGivingUp) continue;
        return absl::Status(page.status().code(),
                            absl::StrCat("POST ", Redact(url_), ": a numbers page, ",
                                         failed_tries, " times: ", page.status().message()));
      }
      failed_tries = 0;
      ++result.pages;
      NoteRate(page->rate, &result.points);
      numbers.insert(numbers.end(), page->numbers.begin(), page->numbers.end());
      if (!page->has_next) break;
      if (page->numbers.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "POST ", Redact(url_), ": a numbers page without issues says more follow"));
      }
      if (page->end_cursor.empty() || !cursors.insert(page->end_cursor).second) {
        return absl::InvalidArgumentError(absl::StrCat(
            "POST ", Redact(url_), ": the issue numbers of ", slug_,
            " page to a cursor already listed: the listing loops"));
      }
      after = page->end_cursor;
    }
  }
  std::sort(numbers.begin(), numbers.end());
  for (int64_t number : stored) {
    if (std::binary_search(numbers.begin(), numbers.end(), number)) continue;
    RETURN_IF_ERROR(CheckVanished(number, &result));
  }
  result.complete = true;
  if (!result.deleted.empty() || !result.transferred.empty()) {
    spdlog::info("{}: presence sweep: {} issues deleted, {} transferred away", slug_,
                 result.deleted.size(), result.transferred.size());
  }
  return result;
}

absl::Status GraphqlLister::CheckVanished(int64_t number, SweepResult* result) {
  const std::string url = absl::StrCat(tracker_->RepositoryUrl(where_), "/issues/", number);
  ++result->checked;
  ASSIGN_OR_RETURN(HttpResponse resp, rest_->Get(url, ""));
  const int s = resp.status;
  if (s == 404 || s == 410) {
    RETURN_IF_ERROR(ingest_->MarkDeleted(number));
    result->deleted.push_back(number);
    return absl::OkStatus();
  }
  if (s == 301 || s == 302 || s == 307 || s == 308) {
    // Transferred: the Location is the issue in its new repository (/repositories/ID/issues/N);
    // its html_url names the repository.
    const std::string sent = resp.headers.Get("Location");
    const std::string location = sent.empty() ? "" : ResolveReference(url, sent).value_or("");
    std::string to;
    if (!location.empty() && SameOrigin(location, where_.base)) {
      ++result->checked;
      ASSIGN_OR_RETURN(HttpResponse moved, rest_->Get(location, ""));
      if (moved.status == 200) {
        std::vector<BadItem> bad;
        auto issues = tracker_->ParseIssues(absl::StrCat("[", moved.body, "]"), repo_, &bad);
        if (issues.ok() && issues->size() == 1) to = TransferredTo((*issues)[0].url());
      }
    }
    if (to.empty()) {
      spdlog::warn("{}: issue {} moved to a place the crawler cannot name ({})", slug_, number,
                   Redact(sent));
    }
    RETURN_IF_ERROR(ingest_->MarkDeleted(number, to));
    result->transferred.emplace_back(number, to);
    return absl::OkStatus();
  }
  if (s == 200) return absl::OkStatus();  // listed in between, or not an issue any more
  return UnexpectedResponse(s, url);
}

std::string TransferredTo(absl::string_view html_url) {
  // ".../OWNER/NAME/issues/NUMBER" (GitHub's web URL of an issue).
  std::vector<absl::string_view> parts = absl::StrSplit(html_url, '/');
  if (parts.size() < 4) return "";
  const size_t n = parts.size();
  int64_t number = 0;
  if (parts[n - 2] != "issues" || !absl::SimpleAtoi(parts[n - 1], &number) || number <= 0 ||
      parts[n - 4].empty() || parts[n - 3].empty()) {
    return "";
  }
  return absl::StrCat("github:", parts[n - 4], "/", parts[n - 3], "#", number);
}

}  // namespace issuescope::crawler

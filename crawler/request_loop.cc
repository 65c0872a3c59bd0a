#include "request_loop.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "crawler/github_parse.h"

namespace issuescope::crawler {

absl::Status UnexpectedResponse(int http_status, const std::string& url) {
  const std::string where = absl::StrCat("GET ", Redact(url));
  absl::Status s = HttpStatusToStatus(http_status, where);
  if (s.ok()) s = absl::UnknownError(absl::StrCat(where, ": unexpected HTTP ", http_status));
  return s;
}

namespace {

bool IsRetryableTransportError(const absl::Status& s) {
  return s.code() == absl::StatusCode::kUnavailable ||
         s.code() == absl::StatusCode::kDeadlineExceeded;
}

}  // namespace

std::shared_ptr<TokenPool> OneTokenPool(v1::Tracker tracker, const std::string& token,
                                        Clock* clock, const RequestLoopOptions& options) {
  TokenPoolOptions pool_options;
  pool_options.secondary_backoff = options.max_backoff;
  pool_options.max_secondary_backoff = options.max_backoff;
  pool_options.max_wait = kMaxRateWait;
  return std::make_shared<TokenPool>(tracker, std::vector<PoolToken>{{"default", token}}, clock,
                                     pool_options);
}

RequestLoop::RequestLoop(HttpTransport* transport, const Tracker* tracker, Clock* clock,
                         RequestLoopOptions options, std::shared_ptr<TokenPool> pool,
                         std::string slug, std::function<bool()> cancelled)
    : transport_(transport),
      tracker_(tracker),
      clock_(clock),
      options_(std::move(options)),
      pool_(std::move(pool)),
      slug_(std::move(slug)),
      cancelled_(std::move(cancelled)),
      rng_(options_.jitter_seed) {}

bool RequestLoop::Stopping() const { return cancelled_() || stop_.load(); }

absl::Status RequestLoop::CheckCancelled() const {
  if (Stopping()) return absl::CancelledError(absl::StrCat("crawl of ", slug_, " cancelled"));
  return absl::OkStatus();
}

absl::Status RequestLoop::Sleep(absl::Duration d) {
  while (d > absl::ZeroDuration()) {
    RETURN_IF_ERROR(CheckCancelled());
    const absl::Duration step = std::min(d, absl::Seconds(1));
    clock_->SleepFor(step);
    d -= step;
  }
  return CheckCancelled();
}

absl::Duration RequestLoop::Backoff(int retry) {
  absl::Duration d = options_.initial_backoff;
  for (int i = 0; i < retry && d < options_.max_backoff; ++i) d *= 2;
  d = std::min(d, options_.max_backoff);
  std::uniform_real_distribution<double> jitter(0.5, 1.0);
  std::lock_guard<std::mutex> lock(mu_);
  return d * jitter(rng_);
}

RequestLoop::Rate RequestLoop::rate() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rate_;
}

void RequestLoop::NoteRate(const RateLimit& rl) {
  if (rl.remaining < 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  rate_.remaining = rl.remaining;  // as the tracker reported it
  rate_.reset = rl.reset;
}

absl::StatusOr<HttpResponse> RequestLoop::Get(const std::string& url, const std::string& etag) {
  return Send("GET", url, etag, "", /*return_cutoffs=*/false);
}

absl::StatusOr<HttpResponse> RequestLoop::Post(const std::string& url, const std::string& body) {
  return Send("POST", url, "", body, /*return_cutoffs=*/true);
}

absl::StatusOr<HttpResponse> RequestLoop::Send(const std::string& method, const std::string& url,
                                               const std::string& etag, const std::string& body,
                                               bool return_cutoffs) {
  const std::string where = absl::StrCat(method, " ", Redact(url));
  int retries = 0;
  for (;;) {
    RETURN_IF_ERROR(CheckCancelled());
    absl::StatusOr<TokenPool::Lease> token = pool_->Acquire([this] { return Stopping(); });
    if (!token.ok()) {
      RETURN_IF_ERROR(CheckCancelled());
      return absl::Status(token.status().code(),
                          absl::StrCat(where, ": ", token.status().message()));
    }
    HttpRequest req;
    req.method = method;
    req.url = url;
    req.body = body;
    if (method == "POST") req.headers.Add("Content-Type", "application/json");
    req.timeout = options_.request_timeout;
    req.headers.Add("User-Agent", options_.user_agent);
    tracker_->Authorize(token->token, &req);  // may add the token to req.url (Gitee): never log it
    if (!etag.empty()) req.headers.Add("If-None-Match", etag);
    requests_.fetch_add(1);
    absl::StatusOr<HttpResponse> resp = transport_->Send(req);

    absl::Duration wait;
    absl::Status last;
    if (!resp.ok()) {
      pool_->Release(*token, RateLimit{}, TokenOutcome::kOk);
      if (!IsRetryableTransportError(resp.status())) {
        return absl::Status(resp.status().code(),
                            absl::StrCat(where, ": ", resp.status().message()));
      }
      last = resp.status();
      wait = Backoff(retries);
    } else {
      RateLimit rl = tracker_->ParseRateLimit(resp->headers);
      if (rl.reset != absl::InfinitePast()) {
        // The reset is on the tracker's clock: measure it from the response's Date, so a
        // skewed clock (ours or theirs) neither overspends nor waits too long.
        if (auto date = ParseHttpDate(resp->headers.Get("Date"))) {
          rl.reset = clock_->Now() + (rl.reset - *date);
        }
      }
      const int s = resp->status;
      if (s == 403 || s == 429) {
        const auto retry_after = ParseRetryAfter(resp->headers, clock_->Now());
        const bool spent = rl.remaining == 0;
        const bool limited = s == 429 || spent || retry_after.has_value() ||
                             absl::StrContains(absl::AsciiStrToLower(resp->body), "rate limit");
        if (!limited) {
          pool_->Release(*token, rl, TokenOutcome::kOk);
          NoteRate(rl);
          return HttpStatusToStatus(s, where);
        }
        // The pool benches the token (until its reset, Retry-After or a backoff); the retry
        // takes another token, or waits in Acquire for this one.
        pool_->Release(*token, rl,
                       spent ? TokenOutcome::kBudgetSpent : TokenOutcome::kSecondaryLimit,
                       retry_after);
        NoteRate(rl);
        if (retry_after && *retry_after > kMaxRateWait) {
          return absl::ResourceExhaustedError(absl::StrCat(
              where, ": the tracker asks to retry after ", absl::FormatDuration(*retry_after),
              ", too far away"));
        }
        wait = absl::ZeroDuration();
        last = HttpStatusToStatus(s, where, /*rate_limited=*/true);
      } else {
        pool_->Release(*token, rl, TokenOutcome::kOk);
        NoteRate(rl);
        if (return_cutoffs && (s == 502 || s == 504)) return resp;
        if (s >= 500) {
          last = HttpStatusToStatus(s, where);
          wait = Backoff(retries);
        } else {
          return resp;
        }
      }
    }
    if (retries >= options_.max_retries) {
      const auto code = last.code() == absl::StatusCode::kResourceExhausted
                            ? absl::StatusCode::kResourceExhausted
                            : absl::StatusCode::kUnavailable;
      return absl::Status(code, absl::StrCat(where, ": giving up after ", retries,
                                             " retries; last error: ", last.message()));
    }
    ++retries;
    retries_.fetch_add(1);
    spdlog::debug("{}: retry {} in {} ({})", where, retries, absl::FormatDuration(wait),
                  std::string(last.message()));
    RETURN_IF_ERROR(Sleep(wait));
  }
}

}  // namespace issuescope::crawler

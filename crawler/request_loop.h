// RequestLoop sends one crawl's requests to a tracker: a token from the tracker's pool for each
// exchange (held only for the exchange itself), the tracker's authorisation, a conditional
// request when an ETag is known, retries with jittered exponential backoff on transport errors
// and 5xx, rate-limited 403/429 handed back to the pool (which benches the token until its
// reset, its Retry-After or a backoff) and retried, and what every response says about its
// token's budget given to the pool with the token (the pool then lends no spent token before
// its reset: the one rate mechanism, for a worker's pool of many tokens and a crawl's one token
// alike). It counts requests and retries (atomically: a prefetching thread sends
// too), and all its waits are on the Clock in steps of at most 1 s, so a cancellation
// interrupts them. crawler/repo_crawler.h builds its listing passes on it.
//
// Thread-safety: Get, Sleep, Backoff and the counters may be called from two threads at once
// (the crawl and its prefetch); the Tracker, transport and pool must be thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "crawler/http_transport.h"
#include "crawler/token_pool.h"
#include "tracker.h"

namespace issuescope::crawler {

// kMaxRateWait is the longest wait for a rate-limit reset (or a Retry-After) before the crawl
// gives up (GitHub resets hourly).
inline constexpr absl::Duration kMaxRateWait = absl::Hours(2);

// RequestLoopOptions are the knobs of a RequestLoop (CrawlerOptions holds them for a crawl).
struct RequestLoopOptions {
  // Retries of one request before it fails (UNAVAILABLE, or RESOURCE_EXHAUSTED when the last
  // failure was a rate limit).
  int max_retries = 5;
  // Backoff before retry n: initial_backoff × 2^n, at most max_backoff, times a jitter in
  // [0.5, 1) drawn from a generator seeded with jitter_seed.
  absl::Duration initial_backoff = absl::Seconds(1);
  absl::Duration max_backoff = absl::Seconds(60);
  uint64_t jitter_seed = 1;
  std::string user_agent = "issuescope/0.1";
  absl::Duration request_timeout = absl::Seconds(60);
};

// UnexpectedResponse is the error for a response a crawl cannot use: the code's own error for a
// 4xx or 5xx, UNKNOWN for a 2xx other than 200 or an unasked-for 304 (never OK). It names the
// request ("GET " and the redacted URL).
absl::Status UnexpectedResponse(int http_status, const std::string& url);

// OneTokenPool is the pool of one crawl's own `token` (never logged; empty: anonymous) on
// `tracker`, for crawls without a worker's pool: a secondary limit without Retry-After benches
// it for `options.max_backoff`, and no wait for its reset is longer than kMaxRateWait. Crawls
// that share the token share the pool, and so its budget.
std::shared_ptr<TokenPool> OneTokenPool(v1::Tracker tracker, const std::string& token,
                                        Clock* clock, const RequestLoopOptions& options);

class RequestLoop {
 public:
  // RequestLoop sends to `tracker` over `transport` for the repository `slug` (for messages),
  // with tokens from `pool` (shared with every other crawl of those tokens; it knows each
  // token's budget). `cancelled` is polled before and during every wait. The transport, tracker
  // and clock are not owned.
  RequestLoop(HttpTransport* transport, const Tracker* tracker, Clock* clock,
              RequestLoopOptions options, std::shared_ptr<TokenPool> pool, std::string slug,
              std::function<bool()> cancelled);

  // Get sends one GET of `url` (If-None-Match `etag` when not empty), with retries; returns any
  // response below 500 except a rate-limited 403/429. Errors name the URL (redacted).
  absl::StatusOr<HttpResponse> Get(const std::string& url, const std::string& etag);
  // Post sends one POST of `body` (JSON) to `url` with the same retries, token handling and
  // results as Get (GitHub's GraphQL endpoint; the pool is then the token's GraphQL budget),
  // except that a 502 or 504 is returned, not retried: GitHub cutting a query off, which the
  // caller sends again asking for less.
  absl::StatusOr<HttpResponse> Post(const std::string& url, const std::string& body);

  // Sleep waits `d` on the clock in steps of at most 1 s; CANCELLED once cancelled.
  absl::Status Sleep(absl::Duration d);
  // Backoff is the jittered wait before retry `retry` (0-based).
  absl::Duration Backoff(int retry);
  // CheckCancelled is CANCELLED ("crawl of SLUG cancelled") once `cancelled` says so or while
  // an abandoned prefetch is stopped (stop_flag).
  absl::Status CheckCancelled() const;
  bool Stopping() const;
  // stop_flag is raised by a prefetch that abandons its request: waits end at once and the
  // request is not retried.
  std::atomic<bool>* stop_flag() { return &stop_; }

  // CountRetry counts a retry the caller makes itself (a page whose body did not parse).
  void CountRetry() { retries_.fetch_add(1); }
  int64_t requests() const { return requests_.load(); }
  int64_t retries() const { return retries_.load(); }
  // The last budget a response reported for its token (remaining −1: none yet).
  struct Rate {
    int64_t remaining = -1;
    absl::Time reset = absl::InfinitePast();
  };
  Rate rate() const;

 private:
  // Send is Get and Post: one request with retries; with `return_cutoffs` a 502 or 504 is
  // returned instead of retried.
  absl::StatusOr<HttpResponse> Send(const std::string& method, const std::string& url,
                                    const std::string& etag, const std::string& body,
                                    bool return_cutoffs);
  // NoteRate records what one response said about its token's budget.
  void NoteRate(const RateLimit& rl);

  HttpTransport* transport_;
  const Tracker* tracker_;
  Clock* clock_;
  const RequestLoopOptions options_;
  std::shared_ptr<TokenPool> pool_;
  const std::string slug_;
  const std::function<bool()> cancelled_;
  std::atomic<int64_t> requests_{0};
  std::atomic<int64_t> retries_{0};
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;  // guards rng_ and rate_
  std::mt19937_64 rng_;
  Rate rate_;
};

}  // namespace issuescope::crawler

// RateLimiter: a primary rate limit, per token. Each token key (the simulator derives it from
// the tracker and the token; requests without one share their tracker's "anonymous" budget) gets
// `limit` requests per window; a window opens with the token's first request and lasts
// `window_seconds` of simulator time (default one hour). SetLimit changes both at run time;
// requests already spent in the current windows stay spent.
// Tokens are kept only in memory and never logged. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace issuescope::sim {

class RateLimiter {
 public:
  // Budget is what the X-RateLimit-* headers report.
  struct Budget {
    int64_t limit = 0;
    int64_t remaining = 0;
    int64_t reset = 0;  // epoch seconds when the window ends
    int64_t used = 0;
  };

  explicit RateLimiter(int64_t limit, int64_t window_seconds = 3600)
      : limit_(limit), window_(window_seconds) {}

  // SetLimit sets the requests per window and the window length (seconds, >= 1).
  void SetLimit(int64_t limit, int64_t window_seconds);

  // Peek returns the token's budget at `now` without spending any.
  Budget Peek(const std::string& token, int64_t now);

  // TryConsume spends one request; false (and the exhausted budget) when none is left.
  bool TryConsume(const std::string& token, int64_t now, Budget* budget);

  // TryConsumePoints spends `points` (>= 0) at once (GitHub's GraphQL budget counts points);
  // false (nothing spent) when fewer remain. `budget` is the budget after.
  bool TryConsumePoints(const std::string& token, int64_t now, int64_t points, Budget* budget);

 private:
  struct Window {
    int64_t start = 0;
    int64_t used = 0;
  };
  Window& Current(const std::string& token, int64_t now);  // requires mu_
  Budget ToBudget(const Window& w) const;  // requires mu_

  int64_t limit_;   // guarded by mu_
  int64_t window_;  // guarded by mu_
  std::mutex mu_;
  std::unordered_map<std::string, Window> windows_;
};

}  // namespace issuescope::sim

// RateLimiter: GitHub's primary rate limit, per token. Each token (the Authorization header
// value; requests without one share the "anonymous" budget) gets `limit` requests per window;
// a window opens with the token's first request and lasts one hour of simulator time.
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

  explicit RateLimiter(int64_t limit) : limit_(limit) {}

  // Peek returns the token's budget at `now` without spending any.
  Budget Peek(const std::string& token, int64_t now);

  // TryConsume spends one request; false (and the exhausted budget) when none is left.
  bool TryConsume(const std::string& token, int64_t now, Budget* budget);

 private:
  struct Window {
    int64_t start = 0;
    int64_t used = 0;
  };
  Window& Current(const std::string& token, int64_t now);  // requires mu_
  Budget ToBudget(const Window& w) const;

  const int64_t limit_;
  std::mutex mu_;
  std::unordered_map<std::string, Window> windows_;
};

}  // namespace issuescope::sim

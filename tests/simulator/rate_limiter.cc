#include "tests/simulator/rate_limiter.h"

#include <algorithm>

namespace issuescope::sim {

void RateLimiter::SetLimit(int64_t limit, int64_t window_seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  limit_ = limit;
  window_ = window_seconds;
}

RateLimiter::Window& RateLimiter::Current(const std::string& token, int64_t now) {
  auto [it, inserted] = windows_.try_emplace(token, Window{now, 0});
  if (!inserted && now >= it->second.start + window_) it->second = Window{now, 0};
  return it->second;
}

RateLimiter::Budget RateLimiter::ToBudget(const Window& w) const {
  Budget b;
  b.limit = limit_;
  b.used = w.used;
  b.remaining = std::max<int64_t>(0, limit_ - w.used);
  b.reset = w.start + window_;
  return b;
}

RateLimiter::Budget RateLimiter::Peek(const std::string& token, int64_t now) {
  std::lock_guard<std::mutex> lock(mu_);
  return ToBudget(Current(token, now));
}

bool RateLimiter::TryConsume(const std::string& token, int64_t now, Budget* budget) {
  std::lock_guard<std::mutex> lock(mu_);
  Window& w = Current(token, now);
  const bool ok = w.used < limit_;
  if (ok) ++w.used;
  *budget = ToBudget(w);
  return ok;
}

bool RateLimiter::TryConsumePoints(const std::string& token, int64_t now, int64_t points,
                                   Budget* budget) {
  std::lock_guard<std::mutex> lock(mu_);
  Window& w = Current(token, now);
  const bool ok = w.used + points <= limit_;
  if (ok) w.used += points;
  *budget = ToBudget(w);
  return ok;
}

}  // namespace issuescope::sim

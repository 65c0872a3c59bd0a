#include "tests/simulator/rate_limiter.h"

namespace issuescope::sim {

constexpr int64_t kWindowSeconds = 3600;

RateLimiter::Window& RateLimiter::Current(const std::string& token, int64_t now) {
  auto [it, inserted] = windows_.try_emplace(token, Window{now, 0});
  if (!inserted && now >= it->second.start + kWindowSeconds) it->second = Window{now, 0};
  return it->second;
}

RateLimiter::Budget RateLimiter::ToBudget(const Window& w) const {
  Budget b;
  b.limit = limit_;
  b.used = w.used;
  b.remaining = limit_ - w.used;
  b.reset = w.start + kWindowSeconds;
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

}  // namespace issuescope::sim

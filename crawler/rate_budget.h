// RateBudget: what the tracker last said about one token's rate budget (X-RateLimit-Remaining
// and -Reset), shared by every crawl that uses the token in this process. When one crawl learns
// that the budget is spent, the others wait for the reset too instead of sending requests that
// would be refused (DESIGN invariant 3).
//
// Responses of concurrent crawls arrive in any order; within one rate window the remaining
// budget only falls, and a later window has a later reset, so Update keeps the newest window and
// the smallest remaining count seen in it.
//
// Thread-safe.
#pragma once

#include <mutex>

#include "absl/time/time.h"
#include "crawler/github_parse.h"

namespace issuescope::crawler {

class RateBudget {
 public:
  // Update records the rate-limit headers of one response (ignored when they are absent).
  void Update(const RateLimit& seen);
  // Snapshot returns the newest known budget (remaining -1 when nothing is known).
  RateLimit Snapshot() const;
  // SpentUntil returns when the budget resets if it is known to be spent at `now`, else
  // absl::InfinitePast().
  absl::Time SpentUntil(absl::Time now) const;

 private:
  mutable std::mutex mu_;
  RateLimit budget_;
};

}  // namespace issuescope::crawler

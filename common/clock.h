// Clock: the seam for time. Production code gets a RealClock from main(); tests use a FakeClock,
// whose SleepFor advances time instead of sleeping, so tests are deterministic and fast.
// Both implementations are thread-safe.
#pragma once

#include <condition_variable>
#include <mutex>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace issuescope {

class Clock {
 public:
  virtual ~Clock() = default;
  // Now returns the current time.
  virtual absl::Time Now() = 0;
  // SleepFor blocks the caller for `d` (a FakeClock advances instead).
  virtual void SleepFor(absl::Duration d) = 0;
  // RealClock returns the process-wide real clock.
  static Clock* Real();
};

// FakeClock starts at a fixed time and moves only when told to (or when someone sleeps).
class FakeClock : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1700000000)) : now_(start) {}
  absl::Time Now() override {
    std::lock_guard<std::mutex> lock(mu_);
    return now_;
  }
  void SleepFor(absl::Duration d) override { Advance(d); }
  // Advance moves time forward by `d`.
  void Advance(absl::Duration d) {
    std::lock_guard<std::mutex> lock(mu_);
    now_ += d;
    slept_ += d;
  }
  // TotalSlept returns how much time all SleepFor/Advance calls added.
  absl::Duration TotalSlept() {
    std::lock_guard<std::mutex> lock(mu_);
    return slept_;
  }

 private:
  std::mutex mu_;
  absl::Time now_;
  absl::Duration slept_ = absl::ZeroDuration();
};

}  // namespace issuescope

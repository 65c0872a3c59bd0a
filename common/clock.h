// Clock: the seam for time. Production code gets the real clock (Clock::Real()); tests use a
// FakeClock, whose SleepFor advances time instead of sleeping and whose waits end when a test
// moves its time, so tests are deterministic and never wait for a timeout in real time.
// Both implementations are thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
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
  // AwaitWithDeadline waits on `cv` (whose mutex `lock` holds, on entry and on return) until
  // `done()` is true or this clock reaches `deadline`, and returns done(). Whoever makes done()
  // true notifies `cv`; `done` is called with the lock held. The real clock waits on the
  // monotonic clock (a wall-clock step neither ends nor stretches a wait); a FakeClock waits for
  // `done` or for a test to Advance it past `deadline`.
  virtual bool AwaitWithDeadline(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                                 absl::Time deadline, const std::function<bool()>& done) = 0;
  // Real returns the process-wide real clock.
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
  // AwaitWithDeadline: see Clock. It looks at `done` and at this clock's time whenever `cv` is
  // notified and at least every millisecond of real time (so an Advance from another thread
  // ends the wait without knowing `cv`); each call counts in awaits_begun().
  bool AwaitWithDeadline(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                         absl::Time deadline, const std::function<bool()>& done) override;
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
  // awaits_begun is the number of AwaitWithDeadline calls begun so far.
  int64_t awaits_begun() {
    std::lock_guard<std::mutex> lock(mu_);
    return awaits_begun_;
  }
  // AwaitAwaitsBegun blocks until at least `n` AwaitWithDeadline calls have begun (so a test can
  // Advance past a deadline that has been set), or `real_timeout` of real time passed: false.
  bool AwaitAwaitsBegun(int64_t n, absl::Duration real_timeout = absl::Seconds(10));

 private:
  std::mutex mu_;
  std::condition_variable awaits_changed_;
  absl::Time now_;
  absl::Duration slept_ = absl::ZeroDuration();
  int64_t awaits_begun_ = 0;
};

}  // namespace issuescope

#include "common/clock.h"

#include <chrono>

namespace issuescope {
namespace {

class RealClock : public Clock {
 public:
  absl::Time Now() override { return absl::Now(); }
  void SleepFor(absl::Duration d) override { absl::SleepFor(d); }
  bool AwaitWithDeadline(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                         absl::Time deadline, const std::function<bool()>& done) override {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return done();
    if (left == absl::InfiniteDuration()) {
      cv.wait(lock, done);
      return true;
    }
    // wait_for measures on the steady clock.
    return cv.wait_for(lock, absl::ToChronoNanoseconds(left), done);
  }
};

}  // namespace

Clock* Clock::Real() {
  static RealClock* clock = new RealClock();
  return clock;
}

bool FakeClock::AwaitWithDeadline(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                                  absl::Time deadline, const std::function<bool()>& done) {
  {
    std::lock_guard<std::mutex> g(mu_);
    ++awaits_begun_;
  }
  awaits_changed_.notify_all();
  bool finished = done();
  while (!finished && Now() < deadline) {
    cv.wait_for(lock, std::chrono::milliseconds(1));
    finished = done();
  }
  return finished;
}

bool FakeClock::AwaitAwaitsBegun(int64_t n, absl::Duration real_timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return awaits_changed_.wait_for(lock, absl::ToChronoNanoseconds(real_timeout),
                                  [&] { return awaits_begun_ >= n; });
}

}  // namespace issuescope

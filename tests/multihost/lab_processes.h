// Processes on the hosts of a NetnsLab (tests/multihost/netns_lab.h), shared by the multi-host
// tests: a command line run inside a host's namespace, run to its end, a wait for a process to
// listen (a port file: WaitForPortFile, common/subprocess.h), and the clients' answer tally.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/subprocess.h"
#include "tests/multihost/netns_lab.h"

namespace issuescope::multihost {

// InHost prefixes `argv` with `ip netns exec` of `host`'s namespace.
std::vector<std::string> InHost(const NetnsLab& lab, const std::string& host,
                                std::vector<std::string> argv);

// RunToEnd runs `argv` to its exit, logging to `log`; OK when it exits 0, else an error with the
// command line and the log.
absl::Status RunToEnd(const std::vector<std::string>& argv, const std::string& log,
                      absl::Duration timeout);

// WaitForListener waits (30 s) until something accepts TCP connections at address:port (for
// servers that speak Xapian's protocols, not gRPC), while `process` runs.
bool WaitForListener(const std::string& address, int port, Subprocess* process);

// AnswerTally counts the answers of clients searching while a fault is made: each answer is
// the one wanted, different, or a failure; answers sent after the fault are counted apart.
// Thread-safe.
class AnswerTally {
 public:
  // Record one answer to `query`: `got` (what must be equal, or the call's error) against `want`;
  // `after`: the call was sent after the fault.
  void Record(const std::string& query, const absl::StatusOr<std::string>& got,
              const std::string& want, bool after);
  int64_t answered() const { return answered_.load(); }
  int64_t after_fault() const { return after_.load(); }
  int64_t failed() const { return failed_.load(); }
  int64_t different() const { return different_.load(); }
  // The first failed or different answer, "" when none.
  std::string first_problem() const;

 private:
  std::atomic<int64_t> answered_{0}, after_{0}, failed_{0}, different_{0};
  mutable std::mutex mu_;
  std::string first_problem_;  // guarded by mu_
};

}  // namespace issuescope::multihost

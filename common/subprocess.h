// Subprocess: a child process started with fork + execv, for the cluster launcher
// (`issuescope up`) and the end-to-end tests. The child gets its own process group, its stdout
// and stderr go to a log file, and it receives SIGTERM if the parent dies (PR_SET_PDEATHSIG).
//
// Thread-compatible: one thread owns a Subprocess. The destructor stops a running child.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace issuescope {

class Subprocess {
 public:
  // Start runs `argv[0]` (a path) with `argv`, appending its stdout and stderr to `log_path`.
  static absl::StatusOr<std::unique_ptr<Subprocess>> Start(const std::vector<std::string>& argv,
                                                           const std::string& log_path);
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& name() const { return name_; }
  // Running reports whether the child has not exited yet (reaps it if it has).
  bool Running();
  // Signal sends `sig` (e.g. SIGKILL, SIGSTOP, SIGCONT) to the child.
  void Signal(int sig);
  // Stop sends SIGTERM, waits up to `grace`, then SIGKILL; returns the exit status as
  // "exit N" / "signal N".
  std::string Stop(absl::Duration grace = absl::Seconds(10));
  // Wait blocks until the child exits or `timeout` passes; returns false on timeout.
  bool Wait(absl::Duration timeout, int* wait_status = nullptr);

 private:
  Subprocess(pid_t pid, std::string name) : pid_(pid), name_(std::move(name)) {}
  pid_t pid_;
  std::string name_;
  bool exited_ = false;
  int status_ = 0;
};

// WaitForPortFile waits until `path` holds a port number written by a server (temp + rename),
// or `timeout` passes, or `child` exits. Returns the port.
absl::StatusOr<int> WaitForPortFile(const std::string& path, absl::Duration timeout,
                                    Subprocess* child = nullptr);

// WritePortFile writes `port` to `path` atomically (temp file + rename).
absl::Status WritePortFile(const std::string& path, int port);

}  // namespace issuescope

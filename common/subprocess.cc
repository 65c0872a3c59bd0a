#include "common/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"

namespace issuescope {

absl::StatusOr<std::unique_ptr<Subprocess>> Subprocess::Start(
    const std::vector<std::string>& argv, const std::string& log_path) {
  if (argv.empty()) return absl::InvalidArgumentError("no command to start");
  if (access(argv[0].c_str(), X_OK) != 0) {
    return absl::NotFoundError(absl::StrCat("cannot execute ", argv[0], ": ", strerror(errno)));
  }
  int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot open log file ", log_path, ": ", strerror(errno)));
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(log_fd);
    return absl::InternalError(absl::StrCat("fork failed: ", strerror(errno)));
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls from here on. A parent that blocks signals (daemons
    // wait for SIGTERM with sigwait) must not hand that on: the child could not be stopped, nor
    // see its parent die.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    setpgid(0, 0);
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  close(log_fd);
  std::string name = argv[0].substr(argv[0].rfind('/') + 1);
  return std::unique_ptr<Subprocess>(new Subprocess(pid, name));
}

Subprocess::~Subprocess() {
  if (!exited_) Stop(absl::Seconds(5));
}

bool Subprocess::Running() {
  if (exited_) return false;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    exited_ = true;
    status_ = status;
    return false;
  }
  return true;
}

void Subprocess::Signal(int sig) {
  if (!exited_) kill(pid_, sig);
}

bool Subprocess::Wait(absl::Duration timeout, int* wait_status) {
  const absl::Time deadline = absl::Now() + timeout;
  while (Running()) {
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(20));
  }
  if (wait_status != nullptr) *wait_status = status_;
  return true;
}

std::string Subprocess::Stop(absl::Duration grace) {
  if (Running()) {
    kill(pid_, SIGCONT);  // a stopped child cannot handle SIGTERM
    kill(pid_, SIGTERM);
    if (!Wait(grace)) {
      kill(pid_, SIGKILL);
      Wait(absl::Seconds(10));
    }
  }
  if (WIFEXITED(status_)) return absl::StrCat("exit ", WEXITSTATUS(status_));
  if (WIFSIGNALED(status_)) return absl::StrCat("signal ", WTERMSIG(status_));
  return "unknown";
}

absl::StatusOr<int> WaitForPortFile(const std::string& path, absl::Duration timeout,
                                    Subprocess* child) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    std::ifstream in(path);
    if (in) {
      std::stringstream ss;
      ss << in.rdbuf();
      int port = 0;
      if (absl::SimpleAtoi(absl::StripAsciiWhitespace(ss.str()), &port) && port > 0) return port;
    }
    if (child != nullptr && !child->Running()) {
      return absl::UnavailableError(
          absl::StrCat(child->name(), " exited before it was ready: ", child->Stop()));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  return absl::DeadlineExceededError(
      absl::StrCat("timed out after ", absl::FormatDuration(timeout), " waiting for ", path));
}

absl::Status WritePortFile(const std::string& path, int port) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return absl::PermissionDeniedError(absl::StrCat("cannot write ", tmp));
    out << port << "\n";
    if (!out.flush()) return absl::DataLossError(absl::StrCat("cannot write ", tmp));
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot rename ", tmp, " to ", path, ": ", strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace issuescope

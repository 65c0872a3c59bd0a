#include "tests/multihost/lab_processes.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "tests/e2e/e2e_util.h"

namespace issuescope::multihost {

std::vector<std::string> InHost(const NetnsLab& lab, const std::string& host,
                                std::vector<std::string> argv) {
  argv.insert(argv.begin(), {"/usr/sbin/ip", "netns", "exec", lab.netns(host)});
  if (access("/usr/sbin/ip", X_OK) != 0) argv[0] = "/sbin/ip";
  return argv;
}

absl::Status RunToEnd(const std::vector<std::string>& argv, const std::string& log,
                      absl::Duration timeout) {
  auto child = Subprocess::Start(argv, log);
  if (!child.ok()) return child.status();
  int wait_status = 0;
  if (!(*child)->Wait(timeout, &wait_status)) {
    (*child)->Stop(absl::Seconds(2));
    return absl::DeadlineExceededError(absl::StrCat(argv[0], " did not finish; log ", log));
  }
  if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(absl::StrJoin(argv, " "), " failed:\n", e2e::ReadFile(log)));
}

bool WaitForListener(const std::string& address, int port, Subprocess* process) {
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (absl::Now() < deadline && process->Running()) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, address.c_str(), &addr.sin_addr);
    const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    close(fd);
    if (ok) return true;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return false;
}

void AnswerTally::Record(const std::string& query, const absl::StatusOr<std::string>& got,
                         const std::string& want, bool after) {
  std::string problem;
  if (!got.ok()) {
    ++failed_;
    problem = absl::StrCat(query, ": ", got.status().ToString());
  } else if (*got != want) {
    ++different_;
    problem = absl::StrCat(query, ": a different answer");
  } else {
    ++answered_;
    if (after) ++after_;
  }
  if (problem.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (first_problem_.empty()) first_problem_ = problem;
}

std::string AnswerTally::first_problem() const {
  std::lock_guard<std::mutex> lock(mu_);
  return first_problem_;
}

}  // namespace issuescope::multihost

#include "tests/multihost/netns_lab.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace issuescope::multihost {
namespace {

// Output runs `command` with a shell, stderr merged; returns its exit status and output.
int Output(const std::string& command, std::string* out) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  std::array<char, 512> buffer;
  while (fgets(buffer.data(), buffer.size(), pipe) != nullptr) out->append(buffer.data());
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool ValidHostName(const std::string& name) {
  if (name.empty() || name.size() > 8) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

}  // namespace

absl::Status NetnsLab::Run(const std::string& command) {
  std::string out;
  const int rc = Output(command, &out);
  if (rc == 0) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("`", command, "` exited ", rc, ": ", out));
}

absl::StatusOr<std::unique_ptr<NetnsLab>> NetnsLab::Create(const std::vector<std::string>& hosts) {
  if (hosts.empty() || hosts.size() > 200) {
    return absl::InvalidArgumentError("a lab needs between 1 and 200 hosts");
  }
  std::unique_ptr<NetnsLab> lab(new NetnsLab());
  const int id = static_cast<int>(getpid() % 250) + 1;
  // Unique per lab, also within one process: the kernel may take a moment to remove the links
  // of a deleted namespace.
  static int labs = 0;
  lab->tag_ = absl::StrCat("is", getpid() % 100000,
                           std::string(1, static_cast<char>('a' + labs++ % 26)));
  lab->bridge_ = lab->tag_ + "br";
  lab->prefix_ = absl::StrCat("10.213.", id, ".");
  lab->gateway_ = lab->prefix_ + "1";
  auto unavailable = [](const absl::Status& s) {
    return absl::UnavailableError(absl::StrCat("cannot make network namespaces here: ",
                                               s.message()));
  };
  absl::Status s = Run(absl::StrCat("ip link add ", lab->bridge_, " type bridge"));
  if (!s.ok()) return unavailable(s);
  lab->bridge_created_ = true;
  for (const std::string& cmd :
       {absl::StrCat("ip addr add ", lab->gateway_, "/24 dev ", lab->bridge_),
        absl::StrCat("ip link set ", lab->bridge_, " up")}) {
    if (s = Run(cmd); !s.ok()) return unavailable(s);
  }
  int next = 11;
  for (const std::string& host : hosts) {
    if (!ValidHostName(host) || lab->addresses_.count(host) > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("host name '", host, "': [a-z0-9]{1,8}, each once"));
    }
    const std::string ns = lab->tag_ + "-" + host;
    const std::string veth = absl::StrCat(lab->tag_, "v", next);
    const std::string address = absl::StrCat(lab->prefix_, next++);
    if (s = Run("ip netns add " + ns); !s.ok()) return unavailable(s);
    lab->created_.push_back(ns);
    lab->veths_.push_back(veth);
    for (const std::string& cmd :
         {absl::StrCat("ip link add ", veth, " type veth peer name eth0 netns ", ns),
          absl::StrCat("ip link set ", veth, " master ", lab->bridge_, " up"),
          absl::StrCat("ip -n ", ns, " addr add ", address, "/24 dev eth0"),
          absl::StrCat("ip -n ", ns, " link set eth0 up"),
          absl::StrCat("ip -n ", ns, " link set lo up")}) {
      if (s = Run(cmd); !s.ok()) return unavailable(s);
    }
    lab->addresses_[host] = address;
  }
  return lab;
}

NetnsLab::~NetnsLab() {
  for (const std::string& veth : veths_) (void)Run("ip link del " + veth);
  for (const std::string& ns : created_) (void)Run("ip netns del " + ns);
  if (bridge_created_) (void)Run("ip link del " + bridge_);
}

std::string NetnsLab::netns(const std::string& host) const { return tag_ + "-" + host; }

std::string NetnsLab::address(const std::string& host) const {
  auto it = addresses_.find(host);
  return it == addresses_.end() ? std::string() : it->second;
}

absl::Status NetnsLab::Blackhole(const std::string& in_host, const std::string& to_address,
                                 bool add) {
  return Run(absl::StrCat("ip -n ", netns(in_host), " route ", add ? "add" : "del",
                          " blackhole ", to_address, "/32"));
}

absl::Status NetnsLab::Partition(const std::string& a, const std::string& b) {
  if (address(a).empty() || address(b).empty()) {
    return absl::InvalidArgumentError(absl::StrCat("no host '", a, "' or '", b, "'"));
  }
  if (absl::Status s = Blackhole(a, address(b), true); !s.ok()) return s;
  return Blackhole(b, address(a), true);
}

absl::Status NetnsLab::Heal(const std::string& a, const std::string& b) {
  if (absl::Status s = Blackhole(a, address(b), false); !s.ok()) return s;
  return Blackhole(b, address(a), false);
}

absl::Status NetnsLab::Isolate(const std::string& host) {
  if (address(host).empty()) return absl::InvalidArgumentError("no host '" + host + "'");
  return Run(absl::StrCat("ip -n ", netns(host), " link set eth0 down"));
}

absl::Status NetnsLab::Rejoin(const std::string& host) {
  if (address(host).empty()) return absl::InvalidArgumentError("no host '" + host + "'");
  return Run(absl::StrCat("ip -n ", netns(host), " link set eth0 up"));
}

absl::Status NetnsLab::Netem(const std::string& host, const std::string& spec) {
  std::string out;
  const std::string command =
      absl::StrCat("ip netns exec ", netns(host), " tc qdisc replace dev eth0 root netem ", spec);
  if (Output(command, &out) == 0) return absl::OkStatus();
  if (out.find("unknown") != std::string::npos || out.find("not found") != std::string::npos) {
    return absl::UnimplementedError(
        absl::StrCat("this kernel has no netem queueing discipline (`", command, "`: ", out, ")"));
  }
  return absl::InternalError(absl::StrCat("`", command, "`: ", out));
}

}  // namespace issuescope::multihost

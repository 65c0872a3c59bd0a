// NetnsLab: several "hosts" on one machine for multi-host tests, made of Linux network
// namespaces that the test creates itself. Each host is a namespace with its own loopback and
// one veth interface on a bridge in the caller's namespace; every host has an address of its
// own on a /24 of 10.213.0.0/16 chosen from the process id (so two test processes do not share
// one), and the caller reaches every host through the bridge. Faults:
//   - Partition(a, b) drops all traffic between two hosts (blackhole routes on both sides) and
//     leaves every other path alone; Heal(a, b) restores it;
//   - Isolate(a) cuts a host off from every other host and from the caller;
//   - Netem(a, spec) adds delay and loss on a host's link (`tc qdisc … netem`), UNIMPLEMENTED when
//     the kernel has no netem.
// Needs root (CAP_NET_ADMIN) and iproute2; Create returns UNAVAILABLE, naming the failed command
// and its output, where namespaces cannot be made (the tests then skip, saying why). The
// destructor deletes the namespaces and the bridge. Thread-compatible.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace issuescope::multihost {

class NetnsLab {
 public:
  // Create makes one namespace per name in `hosts` (names of [a-z0-9] only, at most 8 chars).
  static absl::StatusOr<std::unique_ptr<NetnsLab>> Create(const std::vector<std::string>& hosts);
  ~NetnsLab();
  NetnsLab(const NetnsLab&) = delete;
  NetnsLab& operator=(const NetnsLab&) = delete;

  // netns is the namespace of `host` (for `ip netns exec`); address its IPv4 address.
  std::string netns(const std::string& host) const;
  std::string address(const std::string& host) const;
  // The caller's address on the bridge.
  const std::string& gateway() const { return gateway_; }

  absl::Status Partition(const std::string& a, const std::string& b);
  absl::Status Heal(const std::string& a, const std::string& b);
  absl::Status Isolate(const std::string& host);
  absl::Status Rejoin(const std::string& host);
  absl::Status Netem(const std::string& host, const std::string& spec);

 private:
  NetnsLab() = default;
  // Run runs an `ip`/`tc` command line; INTERNAL (UNAVAILABLE while creating) with its output.
  static absl::Status Run(const std::string& command);
  absl::Status Blackhole(const std::string& in_host, const std::string& to_address, bool add);

  std::string tag_;      // unique per lab: names of the bridge and the namespaces
  std::string bridge_;
  std::string prefix_;   // "10.213.N."
  std::string gateway_;  // prefix_ + "1"
  std::map<std::string, std::string> addresses_;
  std::vector<std::string> created_;  // namespaces made so far (deleted by the destructor)
  std::vector<std::string> veths_;    // their links' ends on the bridge
  bool bridge_created_ = false;
};

}  // namespace issuescope::multihost

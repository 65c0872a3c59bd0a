// Prometheus metrics of the coordinator: RenderMetrics turns a status snapshot and the core's
// counters into the Prometheus text exposition format (version 0.0.4); MetricsServer serves it
// at GET /metrics over HTTP, or HTTPS when given a certificate (cpp-httplib, common/tls.h), on
// its own thread.
//
// Metrics (all prefixed issuescope_coordinator_):
//   repositories{phase}            gauge    repositories per phase (pending, crawling, ...)
//   leases                         gauge    leases held now
//   workers{state}                 gauge    alive / draining / dead workers
//   worker_leases{worker}          gauge    leases per worker
//   worker_load{worker}            gauge    assigned load (estimated issues) per worker
//   repo_issues_fetched_total{repo}, repo_comments_fetched_total{repo},
//   repo_requests_total{repo}      counter  summed over every crawl of the repository
//   repo_issues_estimated{repo}    gauge
//   account_remaining{account,tracker}, account_limit{account,tracker}
//                                  gauge    shared rate budget per account
//   lease_expirations_total, epochs_granted_total, state_commits_total   counter
//
// Ownership: MetricsServer owns its thread and HTTP server; the snapshot function it is given
// must stay callable until Stop. Thread-safety: Start/Stop from one thread; the snapshot
// function is called from the HTTP thread(s).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "common/tls.h"
#include "coordinator/coordinator_core.h"
#include "issuescope/v1/coordinator.pb.h"

namespace httplib {
class Server;
}

namespace issuescope::coordinator {

// RenderMetrics renders `status` and `counters` in the Prometheus text format.
std::string RenderMetrics(const v1::GetStatusResponse& status, const CoordinatorCounters& counters);

// MetricsServer serves GET /metrics; see the file comment.
class MetricsServer {
 public:
  // Snapshot produces the page body, or an error (served as HTTP 500).
  using Snapshot = std::function<absl::StatusOr<std::string>()>;

  explicit MetricsServer(Snapshot snapshot);
  // ~MetricsServer stops the server.
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Start listens on `address` ("HOST:PORT", port 0 picks one), serving HTTPS when `tls` names
  // a certificate, and returns the bound port. INVALID_ARGUMENT for a malformed address or
  // unusable TLS files (naming their flags), UNAVAILABLE when it cannot listen. Call once.
  absl::StatusOr<int> Start(const std::string& address, const ServerTlsFiles& tls = {});
  // Stop stops serving and joins the thread. Idempotent.
  void Stop();

 private:
  Snapshot snapshot_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

// CoreMetricsSnapshot returns a Snapshot of `core` (not owned; must outlive the snapshot).
MetricsServer::Snapshot CoreMetricsSnapshot(CoordinatorCore* core);

}  // namespace issuescope::coordinator

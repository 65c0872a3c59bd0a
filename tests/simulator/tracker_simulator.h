// TrackerSimulator: a project-owned HTTP server that speaks the GitHub REST v3 issues API over a
// generated or loaded corpus — the test double of every crawler test, the demo's data source and
// the load source of benchmarks. Other components talk to it only over real HTTP.
//
// Served (GitHub's shapes, headers and status codes):
//   GET /repos/{o}/{r}                       repository
//   GET /repos/{o}/{r}/issues                issues and pull requests (state, since, sort,
//                                            direction, per_page, page, labels)
//   GET /repos/{o}/{r}/issues/comments       repository-wide comments (since, sort, direction)
//   GET /repos/{o}/{r}/issues/{n}            one issue
//   GET /repos/{o}/{r}/issues/{n}/comments   one issue's comments
// with Link pagination, weak ETags and 304 on If-None-Match (free of rate budget), per-token
// rate limiting (X-RateLimit-* headers, 403 when spent), a Date header in simulator time, 404 and
// 422 JSON errors. Simulator time = (newest corpus timestamp + 1 hour) + time elapsed on the
// injected Clock since Start, at one-second resolution.
// Admin API (never rate-limited, not counted): GET /_sim/stats, POST /_sim/stats/reset,
// GET /_sim/corpus, POST /_sim/mutate.
//
// Thread-safety: all public methods are thread-safe; HTTP requests run on a pool of
// `options.threads` workers; the corpus is guarded by a shared mutex (lists read, Mutate writes).
// Ownership: the simulator owns its corpus and server thread; Stop (or the destructor) joins it.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/simulator/corpus.h"
#include "tests/simulator/corpus_mutation.h"
#include "tests/simulator/rate_limiter.h"
#include "tests/simulator/simulator_options.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace issuescope::sim {

// SimStats counts API requests since start or the last ResetStats.
struct SimStats {
  int64_t requests = 0;      // every API request (admin requests excluded)
  int64_t not_modified = 0;  // answered 304
  int64_t rate_limited = 0;  // answered 403 for a spent budget
  std::map<std::string, int64_t> by_repo;      // "owner/name" -> requests
  std::map<std::string, int64_t> by_endpoint;  // issues, comments, issue, issue_comments, repo
};

class TrackerSimulator {
 public:
  // Start builds (or loads) the corpus and serves it; the server accepts requests on return.
  // INVALID_ARGUMENT for bad options or corpus file content, NOT_FOUND for a missing corpus
  // file, UNAVAILABLE when the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<TrackerSimulator>> Start(SimulatorOptions options);

  ~TrackerSimulator();
  TrackerSimulator(const TrackerSimulator&) = delete;
  TrackerSimulator& operator=(const TrackerSimulator&) = delete;

  // port returns the bound port.
  int port() const { return port_; }
  // base_url returns "http://HOST:PORT" (the API root).
  std::string base_url() const;
  // Stop stops serving and joins the server thread; idempotent.
  void Stop();

  // Mutate applies changes at the current simulator time and reports exactly what changed.
  absl::StatusOr<MutationResult> Mutate(const MutationSpec& spec);
  // Stats returns the request counters; ResetStats zeroes them.
  SimStats Stats() const;
  void ResetStats();
  // Corpus returns the ground truth, one entry per issue (pull requests included).
  std::vector<CorpusEntry> Corpus() const;
  // Counts returns the number of repositories, issues and comments.
  void Counts(int64_t* repos, int64_t* issues, int64_t* comments) const;
  // SimNow returns the current simulator time (Unix seconds).
  int64_t SimNow() const;

 private:
  struct ApiResponse;  // defined in simulator_api.cc

  TrackerSimulator(SimulatorOptions options, sim::Corpus corpus);
  absl::Status Listen();
  void HandleApi(const httplib::Request& req, httplib::Response& res);
  void HandleAdmin(const httplib::Request& req, httplib::Response& res);
  // Dispatch answers an API request from the corpus (caller holds corpus_mu_ shared).
  ApiResponse Dispatch(const httplib::Request& req, const std::string& base,
                       std::string* endpoint, std::string* repo_name) const;
  void Count(const std::string& endpoint, const std::string& repo, bool not_modified,
             bool rate_limited);

  const SimulatorOptions options_;
  Clock* const clock_;
  absl::Time started_;
  int64_t sim_origin_ = 0;  // simulator time at Start
  int port_ = 0;

  mutable std::shared_mutex corpus_mu_;
  sim::Corpus corpus_;

  RateLimiter limiter_;
  mutable std::mutex stats_mu_;
  SimStats stats_;

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::mutex stop_mu_;
};

}  // namespace issuescope::sim

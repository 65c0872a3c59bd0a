// TrackerSimulator: a project-owned HTTP server that speaks three issue-tracker dialects over a
// generated or loaded corpus — the test double of every crawler test, the demo's data source and
// the load source of benchmarks. Other components talk to it only over real HTTP. Each
// repository belongs to one tracker; one server serves all three:
//   GitHub REST v3 (github_api.cc):  /repos/{o}/{r}[/issues[/comments | /{n}[/comments]]] and
//                                    /repositories/{id}/..., /rate_limit
//   GitHub GraphQL (github_graphql.cc): POST /graphql — issues with nested comments, labels,
//                                    assignees; rateLimit; GitHub's cost model and node limit
//   GitLab v4 (gitlab_api.cc):       /api/v4/projects/:id[/issues[/:iid[/notes]]]
//   Gitee v5 (gitee_api.cc):         /api/v5/repos/{o}/{r}[/issues[/comments | /{key}[/comments]]]
// with each forge's shapes, pagination headers, errors and rate-limit headers (GitHub
// X-RateLimit-*, 403 when spent; GitLab RateLimit-*, 429 when spent; Gitee none, 403 when
// spent), weak ETags and 304 on If-None-Match for GitHub (free) and GitLab (counted), a Date
// header in simulator time, and injected faults (faults.h). Simulator time = (newest corpus
// timestamp + 1 hour) + time elapsed on the injected Clock since Start, at one-second resolution.
// Admin API (never rate-limited, faulted or counted): GET /_sim/stats, POST /_sim/stats/reset,
// GET /_sim/corpus, GET /_sim/deleted, POST /_sim/mutate, GET|POST /_sim/faults.
// See tests/simulator/README.md for every route, flag and JSON shape.
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
#include "tests/simulator/faults.h"
#include "tests/simulator/rate_limiter.h"
#include "tests/simulator/simulator_options.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace issuescope::sim {

// TokenStats counts one token's requests.
struct TokenStats {
  int64_t requests = 0;
  int64_t over_budget = 0;             // sent while the token's budget was spent
  int64_t retry_after_violations = 0;  // sent before a Retry-After it was given had elapsed
  int64_t graphql_points = 0;          // GraphQL points charged
  int64_t graphql_over_budget = 0;     // GraphQL queries costing more than the points left
};

// SimStats counts API requests since start or the last ResetStats.
struct SimStats {
  int64_t requests = 0;      // every API request (admin requests excluded)
  int64_t not_modified = 0;  // answered 304
  int64_t rate_limited = 0;  // answered 403/429 for a spent budget
  int64_t over_budget = 0;   // requests sent while their token's budget was spent (tests want 0)
  int64_t retry_after_violations = 0;  // requests sent before their token's Retry-After elapsed
  int64_t secondary_limited = 0;  // injected secondary limits
  int64_t server_errors = 0;      // injected 5xx
  int64_t truncated = 0;          // injected cut connections
  int64_t invalid_json = 0;       // injected invalid bodies
  int64_t slow = 0;               // injected slow responses
  int64_t moved = 0;              // 301 for a transferred repository
  int64_t gone = 0;               // 410 for a deleted issue
  int64_t deep_page_rejected = 0; // 422 for a page beyond deep_page_limit
  int64_t graphql_requests = 0;   // POST /graphql requests (also in `requests`)
  int64_t graphql_points = 0;     // GraphQL points charged (GitHub's cost of each query)
  int64_t graphql_over_budget = 0;  // queries costing more points than their token had left
  int64_t graphql_timeouts = 0;   // queries answered 502 for asking too many nodes
  int64_t graphql_nodes = 0;      // nodes the charged queries asked for at most
  int64_t graphql_faults = 0;     // queries given an injected 5xx, cut or garbled answer
  std::map<std::string, int64_t> by_repo;      // "owner/name" -> requests
  std::map<std::string, int64_t> by_endpoint;  // issues, comments, issue, issue_comments, repo
  std::map<std::string, int64_t> by_tracker;   // github, gitlab, gitee -> requests
  std::map<std::string, TokenStats> by_token;  // TokenLabel -> counts
};

// TokenLabel names a token in stats without revealing it: "TRACKER:anonymous" or
// "TRACKER:token-" + 8 hex digits of a hash of the token value (the value without any
// "token "/"Bearer " prefix; GitLab's PRIVATE-TOKEN, Gitee's access_token).
std::string TokenLabel(Tracker tracker, absl::string_view token);

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
  // base_url returns "http://HOST:PORT" (the GitHub API root).
  std::string base_url() const;
  // api_url returns the API root of `tracker`: base_url(), base_url() + "/api/v4" (GitLab) or
  // base_url() + "/api/v5" (Gitee).
  std::string api_url(Tracker tracker) const;
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
  // Faults returns the injected faults; SetFaults replaces them (INVALID_ARGUMENT when out of
  // range) and applies their budget to the rate limiter.
  FaultConfig Faults() const;
  absl::Status SetFaults(const FaultConfig& faults);
  // ApplyActions transfers repositories and deletes issues; stops at the first error
  // (NOT_FOUND, ALREADY_EXISTS, INVALID_ARGUMENT), keeping the actions before it.
  absl::Status ApplyActions(const FaultActions& actions);
  // Deleted lists the issues deleted so far.
  std::vector<DeletedEntry> Deleted() const;

 private:
  // Served is what HandleApi decided about one request, for the counters.
  struct Served {
    Tracker tracker = Tracker::kGithub;
    std::string token_label;
    std::string endpoint;
    std::string repo;
    int status = 0;
    bool not_modified = false;
    bool rate_limited = false;
    bool over_budget = false;
    bool too_early = false;
    bool secondary = false;
    bool server_error = false;
    bool truncated = false;
    bool invalid_json = false;
    bool slow = false;
    bool deep_page = false;
    bool graphql = false;
    int64_t points = 0;
    int64_t nodes = 0;
    bool graphql_over_budget = false;
    bool graphql_timeout = false;
  };

  TrackerSimulator(SimulatorOptions options, sim::Corpus corpus);
  absl::Status Listen();
  void HandleApi(const httplib::Request& req, httplib::Response& res);
  void HandleAdmin(const httplib::Request& req, httplib::Response& res);
  void HandleAdminFaults(const httplib::Request& req, httplib::Response& res);
  // HandleGraphql answers POST /graphql (GitHub's GraphQL API: github_graphql.h), charging the
  // token's GraphQL budget in points.
  void HandleGraphql(const httplib::Request& req, httplib::Response& res, Served& served,
                     const std::string& token, const std::string& base);
  void Count(const Served& served);
  // RecordRetryAfter remembers that a token was told to wait until sim time `until`; TooEarly
  // reports whether a request of that token at `now` comes before it.
  void RecordRetryAfter(const std::string& token_key, int64_t until);
  bool TooEarly(const std::string& token_key, int64_t now);

  const SimulatorOptions options_;
  Clock* const clock_;
  absl::Time started_;
  int64_t sim_origin_ = 0;  // simulator time at Start
  int port_ = 0;

  mutable std::shared_mutex corpus_mu_;
  sim::Corpus corpus_;

  RateLimiter limiter_;
  RateLimiter graphql_limiter_{5000};       // GraphQL points per window per token
  RateLimiter graphql_minute_{2000, 60};    // GraphQL points per minute (secondary limit)
  mutable std::mutex faults_mu_;
  FaultConfig faults_;                                    // guarded by faults_mu_
  std::map<std::string, int64_t> retry_until_;            // token key -> sim time; faults_mu_
  FaultDice dice_;
  mutable std::mutex stats_mu_;
  SimStats stats_;

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::mutex stop_mu_;
};

}  // namespace issuescope::sim

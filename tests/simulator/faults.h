// Fault injection for the tracker simulator: what can go wrong (FaultConfig, set by flags and by
// POST /_sim/faults), the one-off corpus actions that come with it (repository transfers and
// issue deletions, FaultActions), and FaultDice, which decides deterministically from a seed
// whether a given request suffers a given fault.
//
// Determinism under concurrency: a decision depends only on (seed, fault kind, the request's
// identity = token + method + target, and how many times that identical request was seen
// before), never on the interleaving of different requests. A retried request therefore gets a
// fresh draw, and the same request sequence gives the same faults on every run.
//
// FaultConfig and FaultActions are plain values. FaultDice is thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace issuescope::sim {

// FaultConfig: every rate is a fraction in [0, 1] of API requests (admin requests are never
// faulted). Defaults inject nothing.
struct FaultConfig {
  // seed of every fault decision. Default: 1.
  uint64_t seed = 1;
  // error_rate: answered 500, 502 or 503 (chosen by the dice) instead of being served; costs no
  // budget and carries no rate-limit headers. Default: 0.
  double error_rate = 0;
  // truncated_rate: a 200 whose connection is cut mid-body: the headers announce the full
  // Content-Length, about half the JSON arrives, then the connection closes. Default: 0.
  double truncated_rate = 0;
  // invalid_json_rate: a complete 200 whose body is not valid JSON (cut in half, then garbage).
  // Default: 0.
  double invalid_json_rate = 0;
  // slow_rate / slow_ms: a served response is delayed by slow_ms more (on the Clock). Default: 0.
  double slow_rate = 0;
  int64_t slow_ms = 0;
  // secondary_limit_rate: answered as a secondary (abuse) rate limit: GitHub and Gitee with
  // secondary_limit_status (403 or 429), GitLab always 429. A fraction with_retry_after of them
  // carries Retry-After: retry_after_s. Costs no budget. Defaults: 0, 403, 1.0, 1.
  double secondary_limit_rate = 0;
  int secondary_limit_status = 403;
  double with_retry_after = 1.0;
  int64_t retry_after_s = 1;
  // budget: requests per token per budget_window_s of simulator time (0 = the simulator's
  // rate_limit option). Defaults: 0, 3600.
  int64_t budget = 0;
  int64_t budget_window_s = 3600;
  // latency_ms is added (on the Clock) to every API response. Default: 0.
  int64_t latency_ms = 0;
  // deep_page_limit: list requests with page > deep_page_limit answer 422 (0 = no limit).
  int64_t deep_page_limit = 0;
  // graphql: POST /graphql is served (false: 404, as on a GitHub Enterprise or a proxy without
  // GraphQL). Default: true.
  bool graphql = true;
  // graphql_budget: GraphQL points per token per budget_window_s (GitHub: 5,000 an hour, apart
  // from the REST budget). Default: 5000.
  int64_t graphql_budget = 5000;
  // graphql_points_per_minute: GitHub's secondary limit on GraphQL points per token per minute
  // of simulator time; beyond it a query answers 403 with Retry-After: 60. Default: 2000.
  int64_t graphql_points_per_minute = 2000;
  // graphql_timeout_nodes: a query asking for more nodes than this times out (502, charged), as
  // GitHub cuts off queries after about 10 s; 0 = never. Default: 0.
  int64_t graphql_timeout_nodes = 0;
};

// FaultActions are one-off corpus changes applied when the faults are set.
struct FaultActions {
  // Transfer is "[tracker:]owner/name" -> "owner/name" (same tracker).
  struct Transfer {
    std::string from;
    std::string to;
  };
  // Deletion deletes issues of "[tracker:]owner/name": numbers (GitHub number, GitLab iid,
  // Gitee decoded key) and/or Gitee keys ("I10001").
  struct Deletion {
    std::string repo;
    std::vector<int64_t> numbers;
    std::vector<std::string> keys;
  };
  std::vector<Transfer> transfers;
  std::vector<Deletion> deletions;
};

// ParseFaults reads the JSON body of POST /_sim/faults into `config` (fields present replace
// the current values; "reset": true starts from the defaults) and `actions`. INVALID_ARGUMENT
// naming the field on a bad body; `config` is unchanged then.
absl::Status ParseFaults(const std::string& body, FaultConfig* config, FaultActions* actions);

// FaultConfigJson renders a FaultConfig (GET /_sim/faults, POST's reply).
nlohmann::ordered_json FaultConfigJson(const FaultConfig& config);

// ValidateFaultConfig returns INVALID_ARGUMENT naming the first out-of-range field.
absl::Status ValidateFaultConfig(const FaultConfig& config);

// ParseTransferFlag parses "FROM=TO" (the --transfer flag).
absl::StatusOr<FaultActions::Transfer> ParseTransferFlag(absl::string_view flag);

// ParseDeleteFlag parses "[tracker:]owner/name#N[,N...]" where N is a number or a Gitee key
// (the --delete flag).
absl::StatusOr<FaultActions::Deletion> ParseDeleteFlag(absl::string_view flag);

// FaultKind names an independent draw.
enum class FaultKind { kSecondaryLimit, kRetryAfter, kError, kTruncated, kInvalidJson, kSlow };

// FaultDice draws the per-request uniform numbers.
class FaultDice {
 public:
  // Roll counts one more occurrence of request `identity` and returns its attempt number
  // (0 for the first time it is seen).
  int64_t Roll(const std::string& identity);
  // Draw returns a uniform number in [0, 1) for (seed, kind, identity, attempt).
  static double Draw(uint64_t seed, FaultKind kind, const std::string& identity, int64_t attempt);
  // Reset forgets every attempt count.
  void Reset();

 private:
  std::mutex mu_;
  std::map<std::string, int64_t> attempts_;
};

}  // namespace issuescope::sim

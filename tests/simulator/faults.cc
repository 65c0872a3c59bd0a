#include "tests/simulator/faults.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/simulator/corpus.h"

namespace issuescope::sim {
namespace {

using json = nlohmann::json;

absl::Status Bad(absl::string_view field, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("faults field '", field, "' ", why));
}

absl::Status ReadRate(const json& v, const std::string& key, double* out) {
  if (!v.is_number()) return Bad(key, "must be a number");
  const double d = v.get<double>();
  if (!(d >= 0 && d <= 1)) return Bad(key, "must be in 0..1");
  *out = d;
  return absl::OkStatus();
}

absl::Status ReadInt(const json& v, const std::string& key, int64_t lo, int64_t hi,
                     int64_t* out) {
  if (!v.is_number_integer()) return Bad(key, "must be an integer");
  const int64_t n = v.get<int64_t>();
  if (n < lo || n > hi) return Bad(key, absl::StrCat("must be in ", lo, "..", hi));
  *out = n;
  return absl::OkStatus();
}

absl::Status ReadTransfers(const json& v, FaultActions* actions) {
  if (!v.is_array()) return Bad("transfer", "must be an array of {from, to}");
  for (const json& t : v) {
    if (!t.is_object() || !t.contains("from") || !t.contains("to") || !t["from"].is_string() ||
        !t["to"].is_string()) {
      return Bad("transfer", "entries must be {\"from\": string, \"to\": string}");
    }
    actions->transfers.push_back({t["from"].get<std::string>(), t["to"].get<std::string>()});
  }
  return absl::OkStatus();
}

absl::Status ReadDeletions(const json& v, FaultActions* actions) {
  if (!v.is_array()) return Bad("delete", "must be an array of {repo, numbers, keys}");
  for (const json& d : v) {
    if (!d.is_object() || !d.contains("repo") || !d["repo"].is_string()) {
      return Bad("delete", "entries must have a string \"repo\"");
    }
    FaultActions::Deletion del;
    del.repo = d["repo"].get<std::string>();
    if (d.contains("numbers")) {
      if (!d["numbers"].is_array()) return Bad("delete.numbers", "must be an array of integers");
      for (const json& n : d["numbers"]) {
        if (!n.is_number_integer()) return Bad("delete.numbers", "must be an array of integers");
        del.numbers.push_back(n.get<int64_t>());
      }
    }
    if (d.contains("keys")) {
      if (!d["keys"].is_array()) return Bad("delete.keys", "must be an array of strings");
      for (const json& k : d["keys"]) {
        if (!k.is_string()) return Bad("delete.keys", "must be an array of strings");
        del.keys.push_back(k.get<std::string>());
      }
    }
    actions->deletions.push_back(std::move(del));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateFaultConfig(const FaultConfig& c) {
  for (auto [name, rate] : {std::pair<const char*, double>{"error_rate", c.error_rate},
                            {"truncated_rate", c.truncated_rate},
                            {"invalid_json_rate", c.invalid_json_rate},
                            {"slow_rate", c.slow_rate},
                            {"secondary_limit_rate", c.secondary_limit_rate},
                            {"with_retry_after", c.with_retry_after}}) {
    if (!(rate >= 0 && rate <= 1)) return Bad(name, "must be in 0..1");
  }
  if (c.secondary_limit_status != 403 && c.secondary_limit_status != 429) {
    return Bad("secondary_limit_status", "must be 403 or 429");
  }
  if (c.slow_ms < 0 || c.latency_ms < 0) return Bad("slow_ms/latency_ms", "must be >= 0");
  if (c.retry_after_s < 0) return Bad("retry_after_s", "must be >= 0");
  if (c.budget < 0) return Bad("budget", "must be >= 0");
  if (c.budget_window_s < 1) return Bad("budget_window_s", "must be >= 1");
  if (c.deep_page_limit < 0) return Bad("deep_page_limit", "must be >= 0");
  if (c.graphql_budget < 0) return Bad("graphql_budget", "must be >= 0");
  if (c.graphql_points_per_minute < 1) return Bad("graphql_points_per_minute", "must be >= 1");
  if (c.graphql_timeout_nodes < 0) return Bad("graphql_timeout_nodes", "must be >= 0");
  return absl::OkStatus();
}

absl::Status ParseFaults(const std::string& body, FaultConfig* config, FaultActions* actions) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError("faults body must be a JSON object");
  }
  FaultConfig c = *config;
  if (j.contains("reset")) {
    if (!j["reset"].is_boolean()) return Bad("reset", "must be a boolean");
    if (j["reset"].get<bool>()) c = FaultConfig();
  }
  constexpr int64_t kMaxMs = 600000;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    const json& v = *it;
    absl::Status s;
    int64_t n = 0;
    if (k == "reset") {
      continue;
    } else if (k == "seed") {
      if (!v.is_number_integer()) return Bad(k, "must be an integer");
      c.seed = v.get<uint64_t>();
    } else if (k == "error_rate") {
      s = ReadRate(v, k, &c.error_rate);
    } else if (k == "truncated_rate") {
      s = ReadRate(v, k, &c.truncated_rate);
    } else if (k == "invalid_json_rate") {
      s = ReadRate(v, k, &c.invalid_json_rate);
    } else if (k == "slow_rate") {
      s = ReadRate(v, k, &c.slow_rate);
    } else if (k == "secondary_limit_rate") {
      s = ReadRate(v, k, &c.secondary_limit_rate);
    } else if (k == "with_retry_after") {
      s = ReadRate(v, k, &c.with_retry_after);
    } else if (k == "slow_ms") {
      s = ReadInt(v, k, 0, kMaxMs, &c.slow_ms);
    } else if (k == "latency_ms") {
      s = ReadInt(v, k, 0, kMaxMs, &c.latency_ms);
    } else if (k == "retry_after_s") {
      s = ReadInt(v, k, 0, 86400, &c.retry_after_s);
    } else if (k == "secondary_limit_status") {
      s = ReadInt(v, k, 403, 429, &n);
      if (s.ok() && n != 403 && n != 429) s = Bad(k, "must be 403 or 429");
      c.secondary_limit_status = static_cast<int>(n);
    } else if (k == "budget") {
      s = ReadInt(v, k, 0, int64_t{1} << 40, &c.budget);
    } else if (k == "budget_window_s") {
      s = ReadInt(v, k, 1, 86400 * 366, &c.budget_window_s);
    } else if (k == "deep_page_limit") {
      s = ReadInt(v, k, 0, int64_t{1} << 40, &c.deep_page_limit);
    } else if (k == "graphql") {
      if (!v.is_boolean()) return Bad(k, "must be a boolean");
      c.graphql = v.get<bool>();
    } else if (k == "graphql_budget") {
      s = ReadInt(v, k, 0, int64_t{1} << 40, &c.graphql_budget);
    } else if (k == "graphql_points_per_minute") {
      s = ReadInt(v, k, 1, int64_t{1} << 40, &c.graphql_points_per_minute);
    } else if (k == "graphql_timeout_nodes") {
      s = ReadInt(v, k, 0, int64_t{1} << 40, &c.graphql_timeout_nodes);
    } else if (k == "transfer") {
      s = ReadTransfers(v, actions);
    } else if (k == "delete") {
      s = ReadDeletions(v, actions);
    } else {
      return Bad(k, "is unknown");
    }
    if (!s.ok()) return s;
  }
  if (absl::Status s = ValidateFaultConfig(c); !s.ok()) return s;
  *config = c;
  return absl::OkStatus();
}

nlohmann::ordered_json FaultConfigJson(const FaultConfig& c) {
  nlohmann::ordered_json j;
  j["seed"] = c.seed;
  j["error_rate"] = c.error_rate;
  j["truncated_rate"] = c.truncated_rate;
  j["invalid_json_rate"] = c.invalid_json_rate;
  j["slow_rate"] = c.slow_rate;
  j["slow_ms"] = c.slow_ms;
  j["secondary_limit_rate"] = c.secondary_limit_rate;
  j["secondary_limit_status"] = c.secondary_limit_status;
  j["with_retry_after"] = c.with_retry_after;
  j["retry_after_s"] = c.retry_after_s;
  j["budget"] = c.budget;
  j["budget_window_s"] = c.budget_window_s;
  j["latency_ms"] = c.latency_ms;
  j["deep_page_limit"] = c.deep_page_limit;
  j["graphql"] = c.graphql;
  j["graphql_budget"] = c.graphql_budget;
  j["graphql_points_per_minute"] = c.graphql_points_per_minute;
  j["graphql_timeout_nodes"] = c.graphql_timeout_nodes;
  return j;
}

absl::StatusOr<FaultActions::Transfer> ParseTransferFlag(absl::string_view flag) {
  std::vector<std::string> parts = absl::StrSplit(flag, '=');
  if (parts.size() != 2 || parts[0].empty() || parts[1].empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--transfer must be [tracker:]owner/name=owner/name, got '", flag, "'"));
  }
  return FaultActions::Transfer{parts[0], parts[1]};
}

absl::StatusOr<FaultActions::Deletion> ParseDeleteFlag(absl::string_view flag) {
  const size_t hash = flag.find('#');
  auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("--delete must be [tracker:]owner/name#N[,N...], got '", flag, "'"));
  };
  if (hash == absl::string_view::npos || hash == 0) return bad();
  FaultActions::Deletion d;
  d.repo = std::string(flag.substr(0, hash));
  for (absl::string_view item : absl::StrSplit(flag.substr(hash + 1), ',')) {
    int64_t n = 0;
    if (absl::SimpleAtoi(item, &n) && n > 0) {
      d.numbers.push_back(n);
    } else if (ParseGiteeKey(item, &n)) {
      d.keys.emplace_back(item);
    } else {
      return bad();
    }
  }
  return d;
}

int64_t FaultDice::Roll(const std::string& identity) {
  std::lock_guard<std::mutex> lock(mu_);
  return attempts_[identity]++;
}

double FaultDice::Draw(uint64_t seed, FaultKind kind, const std::string& identity,
                       int64_t attempt) {
  uint64_t h = StableHash(identity, seed * 0x9E3779B97F4A7C15ULL +
                                        static_cast<uint64_t>(kind) * 0xBF58476D1CE4E5B9ULL +
                                        static_cast<uint64_t>(attempt) * 0x94D049BB133111EBULL);
  // Finalize (splitmix64) so nearby inputs spread over the whole range.
  h ^= h >> 30;
  h *= 0xBF58476D1CE4E5B9ULL;
  h ^= h >> 27;
  h *= 0x94D049BB133111EBULL;
  h ^= h >> 31;
  return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);
}

void FaultDice::Reset() {
  std::lock_guard<std::mutex> lock(mu_);
  attempts_.clear();
}

}  // namespace issuescope::sim

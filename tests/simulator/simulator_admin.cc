// The /_sim/ admin API of TrackerSimulator: stats, corpus ground truth, deletions, mutations and
// fault injection. Admin requests are never rate-limited, faulted or counted.
#include "absl/strings/str_cat.h"
#include "httplib.h"
#include "tests/simulator/github_json.h"
#include "tests/simulator/tracker_simulator.h"

namespace issuescope::sim {

namespace {

void SendJson(httplib::Response& res, int status, const Json& body) {
  res.status = status;
  res.set_content(Dump(body), "application/json; charset=utf-8");
}

// ParseMutationSpec reads the JSON body of POST /_sim/mutate.
absl::StatusOr<MutationSpec> ParseMutationSpec(const std::string& body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError("mutate body must be a JSON object");
  }
  MutationSpec spec;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    if (key == "repo") {
      if (!it->is_string()) return absl::InvalidArgumentError("mutate field 'repo' must be a string");
      spec.repo = it->get<std::string>();
      continue;
    }
    if (!it->is_number_integer()) {
      return absl::InvalidArgumentError(
          absl::StrCat("mutate field '", key, "' must be an integer"));
    }
    const int64_t v = it->get<int64_t>();
    if (key == "seed") {
      spec.seed = static_cast<uint64_t>(v);
      continue;
    }
    if (v < 0 || v > 1000000) {
      return absl::InvalidArgumentError(absl::StrCat("mutate field '", key, "' must be in 0..1000000"));
    }
    const int n = static_cast<int>(v);
    if (key == "new_issues") {
      spec.new_issues = n;
    } else if (key == "edited_issues") {
      spec.edited_issues = n;
    } else if (key == "new_comments") {
      spec.new_comments = n;
    } else if (key == "closed_issues") {
      spec.closed_issues = n;
    } else if (key == "deleted_issues") {
      spec.deleted_issues = n;
    } else if (key == "transferred_issues") {
      spec.transferred_issues = n;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("mutate field '", key, "' is unknown"));
    }
  }
  return spec;
}

}  // namespace

void TrackerSimulator::HandleAdmin(const httplib::Request& req, httplib::Response& res) {
  const std::string& path = req.path;
  if (req.method == "GET" && path == "/_sim/stats") {
    SimStats s = Stats();
    Json j;
    j["requests"] = s.requests;
    j["not_modified"] = s.not_modified;
    j["rate_limited"] = s.rate_limited;
    j["over_budget"] = s.over_budget;
    j["retry_after_violations"] = s.retry_after_violations;
    j["secondary_limited"] = s.secondary_limited;
    j["server_errors"] = s.server_errors;
    j["truncated"] = s.truncated;
    j["invalid_json"] = s.invalid_json;
    j["slow"] = s.slow;
    j["moved"] = s.moved;
    j["gone"] = s.gone;
    j["deep_page_rejected"] = s.deep_page_rejected;
    j["graphql"] = Json{{"requests", s.graphql_requests},
                        {"points", s.graphql_points},
                        {"nodes", s.graphql_nodes},
                        {"over_budget", s.graphql_over_budget},
                        {"timeouts", s.graphql_timeouts},
                        {"faults", s.graphql_faults}};
    j["by_tracker"] = Json::object();
    for (const char* t : {"github", "gitlab", "gitee"}) {
      auto it = s.by_tracker.find(t);
      j["by_tracker"][t] = it == s.by_tracker.end() ? 0 : it->second;
    }
    j["by_token"] = Json::object();
    for (const auto& [label, t] : s.by_token) {
      j["by_token"][label] = Json{{"requests", t.requests},
                                  {"over_budget", t.over_budget},
                                  {"retry_after_violations", t.retry_after_violations},
                                  {"graphql_points", t.graphql_points},
                                  {"graphql_over_budget", t.graphql_over_budget}};
    }
    j["by_repo"] = Json::object();
    for (const auto& [k, v] : s.by_repo) j["by_repo"][k] = v;
    j["by_endpoint"] = Json::object();
    for (const char* e : {"issues", "comments", "issue", "issue_comments", "repo", "rate_limit", "graphql"}) {
      auto it = s.by_endpoint.find(e);
      j["by_endpoint"][e] = it == s.by_endpoint.end() ? 0 : it->second;
    }
    return SendJson(res, 200, j);
  }
  if (req.method == "POST" && path == "/_sim/stats/reset") {
    ResetStats();
    return SendJson(res, 200, Json::object());
  }
  if (req.method == "GET" && path == "/_sim/corpus") {
    Json arr = Json::array();
    for (const CorpusEntry& e : Corpus()) {
      Json j;
      j["repo"] = e.repo;
      j["number"] = e.number;
      j["updated_at"] = e.updated_at;
      j["is_pull_request"] = e.is_pull_request;
      j["comments"] = e.comments;
      j["planted"] = e.planted;
      j["title"] = e.title;
      j["tracker"] = e.tracker;
      j["key"] = e.key;
      j["state"] = e.state;
      j["system_notes"] = e.system_notes;
      arr.push_back(std::move(j));
    }
    return SendJson(res, 200, arr);
  }
  if (req.method == "GET" && path == "/_sim/deleted") {
    Json arr = Json::array();
    for (const DeletedEntry& d : Deleted()) {
      arr.push_back(
          Json{{"tracker", d.tracker}, {"repo", d.repo}, {"number", d.number}, {"key", d.key}});
    }
    return SendJson(res, 200, arr);
  }
  if (path == "/_sim/faults" && (req.method == "GET" || req.method == "POST")) {
    return HandleAdminFaults(req, res);
  }
  if (req.method == "POST" && path == "/_sim/mutate") {
    absl::StatusOr<MutationSpec> spec = ParseMutationSpec(req.body);
    if (!spec.ok()) return SendJson(res, 400, Json{{"message", spec.status().message()}});
    absl::StatusOr<MutationResult> result = Mutate(*spec);
    if (!result.ok()) {
      const int status = absl::IsNotFound(result.status()) ? 404 : 400;
      return SendJson(res, status, Json{{"message", result.status().message()}});
    }
    Json j;
    j["changed_issues"] = Json::array();
    for (const IssueRef& r : result->changed_issues) {
      j["changed_issues"].push_back(
          Json{{"repo", r.repo}, {"number", r.number}, {"tracker", r.tracker}});
    }
    j["new_comment_ids"] = result->new_comment_ids;
    j["deleted"] = Json::array();
    for (const IssueRef& r : result->deleted) {
      j["deleted"].push_back(Json{{"repo", r.repo}, {"number", r.number}, {"tracker", r.tracker}});
    }
    j["transferred"] = Json::array();
    for (const IssueMove& m : result->transferred) {
      j["transferred"].push_back(Json{{"from", Json{{"repo", m.from.repo}, {"number", m.from.number}}},
                                      {"to", Json{{"repo", m.to.repo}, {"number", m.to.number}}}});
    }
    return SendJson(res, 200, j);
  }
  SendJson(res, 404, ErrorJson("Not Found", "https://docs.github.com/rest"));
}

void TrackerSimulator::HandleAdminFaults(const httplib::Request& req, httplib::Response& res) {
  if (req.method == "GET") return SendJson(res, 200, FaultConfigJson(Faults()));
  FaultConfig config = Faults();
  FaultActions actions;
  if (absl::Status s = ParseFaults(req.body, &config, &actions); !s.ok()) {
    return SendJson(res, 400, Json{{"message", s.message()}});
  }
  if (absl::Status s = ApplyActions(actions); !s.ok()) {
    const int status = absl::IsNotFound(s) ? 404 : absl::IsAlreadyExists(s) ? 409 : 400;
    return SendJson(res, status, Json{{"message", s.message()}});
  }
  if (absl::Status s = SetFaults(config); !s.ok()) {
    return SendJson(res, 400, Json{{"message", s.message()}});
  }
  Json j;
  j["faults"] = FaultConfigJson(config);
  j["transferred"] = actions.transfers.size();
  j["deleted"] = Json::array();
  for (const DeletedEntry& d : Deleted()) {
    j["deleted"].push_back(
        Json{{"tracker", d.tracker}, {"repo", d.repo}, {"number", d.number}, {"key", d.key}});
  }
  SendJson(res, 200, j);
}

}  // namespace issuescope::sim

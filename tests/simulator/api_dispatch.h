// The per-dialect request dispatchers of TrackerSimulator: each answers one API request from the
// corpus in its forge's shapes, status codes, errors and pagination headers — GitHub REST v3
// (github_api.cc), GitLab v4 under /api/v4 (gitlab_api.cc) and Gitee v5 under /api/v5
// (gitee_api.cc). They know nothing of rate limits, ETags or faults: simulator_api.cc wraps them.
// Pure functions over a Corpus the caller keeps locked for reading. Internal to the simulator.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tests/simulator/corpus.h"
#include "tests/simulator/list_query.h"

namespace issuescope::sim {

// ApiRequest is what a dispatcher needs of an HTTP request.
struct ApiRequest {
  std::string method;          // "GET", ...
  std::string target;          // the raw request target, percent-encoding intact
  std::string base;            // "http://HOST:PORT" as the client addressed the server
  int64_t deep_page_limit = 0; // list pages beyond it answer 422 (0 = no limit)
};

// ApiResponse is a dispatcher's answer.
struct ApiResponse {
  int status = 200;
  std::string body;
  std::string content_type = "application/json; charset=utf-8";
  std::vector<std::pair<std::string, std::string>> headers;  // Link, X-Total, Location, ...
  std::string endpoint;  // repo, issues, comments, issue, issue_comments; "" = unknown path
  std::string repo;      // "owner/name" of the repository addressed, when it exists
  bool deep_page = false;  // a 422 for a page beyond ApiRequest::deep_page_limit
};

// DispatchGithub answers /repos/{o}/{r}/... and /repositories/{id}/... .
ApiResponse DispatchGithub(const Corpus& corpus, const ApiRequest& req);

// DispatchGitlab answers /api/v4/projects/:id/... (:id numeric or URL-encoded full path).
ApiResponse DispatchGitlab(const Corpus& corpus, const ApiRequest& req);

// DispatchGitee answers /api/v5/repos/{owner}/{repo}/... .
ApiResponse DispatchGitee(const Corpus& corpus, const ApiRequest& req);

// PathSegments splits the path of a raw target at '/' and percent-decodes each segment
// (so "group%2Fproject" stays one segment); the leading empty segment is dropped.
std::vector<std::string> PathSegments(const std::string& target);

// PercentEncode encodes everything but unreserved characters (so '/' becomes %2F).
std::string PercentEncode(absl::string_view s);

// QueryOf returns the query string of a raw target, with its '?' ("" when none).
std::string QueryOf(const std::string& target);

// PageCount returns the number of pages of `total` records (1 when there are none).
int64_t PageCount(int64_t total, int per_page);

}  // namespace issuescope::sim

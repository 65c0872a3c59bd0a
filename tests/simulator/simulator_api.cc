// The GitHub REST v3 API of TrackerSimulator: routing, rate limiting, ETag/304, Link, errors.
#include <cstdio>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "httplib.h"
#include "tests/simulator/github_json.h"
#include "tests/simulator/list_query.h"
#include "tests/simulator/listing.h"
#include "tests/simulator/tracker_simulator.h"

namespace issuescope::sim {

// ApiResponse is what Dispatch computed for a request.
struct TrackerSimulator::ApiResponse {
  int status = 200;
  std::string body;
  std::string link;  // Link header, or ""
};

namespace {

constexpr char kDocs[] = "https://docs.github.com/rest";
constexpr char kRateDocs[] =
    "https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting";

// Route is a parsed API path.
struct Route {
  std::string endpoint;  // repo, issues, comments, issue, issue_comments; "" = unknown path
  std::string owner;
  std::string name;
  int64_t number = 0;
};

Route ParseRoute(absl::string_view path) {
  std::vector<absl::string_view> parts = absl::StrSplit(path.substr(1), '/');
  Route r;
  if (parts.size() < 3 || parts[0] != "repos" || parts[1].empty() || parts[2].empty()) return r;
  r.owner = std::string(parts[1]);
  r.name = std::string(parts[2]);
  if (parts.size() == 3) {
    r.endpoint = "repo";
  } else if (parts[3] != "issues") {
    return r;
  } else if (parts.size() == 4) {
    r.endpoint = "issues";
  } else if (parts.size() == 5 && parts[4] == "comments") {
    r.endpoint = "comments";
  } else if (absl::SimpleAtoi(parts[4], &r.number) && r.number > 0 &&
             absl::ascii_isdigit(static_cast<unsigned char>(parts[4][0]))) {
    if (parts.size() == 5) r.endpoint = "issue";
    if (parts.size() == 6 && parts[5] == "comments") r.endpoint = "issue_comments";
  }
  return r;
}

std::string HttpDate(int64_t unix_seconds) {
  return absl::FormatTime("%a, %d %b %Y %H:%M:%S GMT", absl::FromUnixSeconds(unix_seconds),
                          absl::UTCTimeZone());
}

std::string ETagOf(const std::string& body) {
  char buf[40];
  snprintf(buf, sizeof(buf), "%016llx%016llx",
           static_cast<unsigned long long>(StableHash(body, 1)),
           static_cast<unsigned long long>(StableHash(body, 2)));
  return absl::StrCat("W/\"", buf, "\"");
}

// ETagMatches implements If-None-Match's weak comparison over a comma-separated list.
bool ETagMatches(const std::string& header, const std::string& etag) {
  auto opaque = [](absl::string_view t) {
    t = absl::StripAsciiWhitespace(t);
    if (absl::StartsWith(t, "W/")) t.remove_prefix(2);
    return t;
  };
  for (absl::string_view candidate : absl::StrSplit(header, ',')) {
    if (absl::StripAsciiWhitespace(candidate) == "*" || opaque(candidate) == opaque(etag)) {
      return true;
    }
  }
  return false;
}

void SetRateHeaders(httplib::Response& res, const RateLimiter::Budget& b) {
  res.set_header("X-RateLimit-Limit", std::to_string(b.limit));
  res.set_header("X-RateLimit-Remaining", std::to_string(b.remaining));
  res.set_header("X-RateLimit-Reset", std::to_string(b.reset));
  res.set_header("X-RateLimit-Used", std::to_string(b.used));
  res.set_header("X-RateLimit-Resource", "core");
}

std::string NotFoundBody() { return Dump(ErrorJson("Not Found", kDocs)); }

std::string ValidationBody(const ValidationError& e) {
  Json err;
  err["resource"] = "Issue";
  err["field"] = e.field;
  err["code"] = "invalid";
  err["value"] = e.value;
  Json j;
  j["message"] = "Validation Failed";
  j["errors"] = Json::array({err});
  j["documentation_url"] = kDocs;
  return Dump(j);
}

template <typename Render>
std::string RenderArray(const std::vector<uint32_t>& positions, Render render) {
  Json arr = Json::array();
  for (uint32_t p : positions) arr.push_back(render(p));
  return Dump(arr);
}

}  // namespace

TrackerSimulator::ApiResponse TrackerSimulator::Dispatch(const httplib::Request& req,
                                                         const std::string& base,
                                                         std::string* endpoint,
                                                         std::string* repo_name) const {
  ApiResponse out;
  const Route route = ParseRoute(req.path);
  *endpoint = route.endpoint;
  const Repository* repo =
      route.endpoint.empty() ? nullptr : corpus_.FindRepo(route.owner, route.name);
  if (repo == nullptr || req.method != "GET") {
    return ApiResponse{404, NotFoundBody(), ""};
  }
  *repo_name = repo->FullName();
  if (route.endpoint == "repo") return ApiResponse{200, Dump(RepositoryJson(*repo, base)), ""};

  const Issue* issue = nullptr;
  if (route.endpoint == "issue" || route.endpoint == "issue_comments") {
    issue = repo->FindIssue(route.number);
    if (issue == nullptr) return ApiResponse{404, NotFoundBody(), ""};
    if (route.endpoint == "issue") return ApiResponse{200, Dump(IssueJson(*repo, *issue, base)), ""};
  }
  const std::vector<QueryParam> params = ParseQueryString(req.target);
  const ListKind kind = route.endpoint == "issues"     ? ListKind::kIssues
                        : route.endpoint == "comments" ? ListKind::kRepoComments
                                                       : ListKind::kIssueComments;
  ListQuery query;
  if (std::optional<ValidationError> bad = ParseListQuery(params, kind, &query)) {
    return ApiResponse{422, ValidationBody(*bad), ""};
  }
  ListPage page;
  if (kind == ListKind::kIssues) {
    page = SelectIssues(*repo, query);
    out.body = RenderArray(page.positions,
                           [&](uint32_t p) { return IssueJson(*repo, repo->issues[p], base); });
  } else {
    page = kind == ListKind::kRepoComments ? SelectRepoComments(*repo, query)
                                           : SelectIssueComments(*repo, *issue, query);
    out.body = RenderArray(
        page.positions, [&](uint32_t p) { return CommentJson(*repo, repo->comments[p], base); });
  }
  const std::string path_only = req.target.substr(0, req.target.find('?'));
  out.link = BuildLinkHeader(base + path_only, params, query.page, query.per_page, page.total);
  return out;
}

void TrackerSimulator::HandleApi(const httplib::Request& req, httplib::Response& res) {
  const int64_t now = SimNow();
  res.set_header("Date", HttpDate(now));
  res.set_header("X-GitHub-Media-Type", "github.v3; format=json");
  // Budgets are keyed by the Authorization value; "" is the shared anonymous budget.
  const std::string token =
      req.has_header("Authorization") ? "t:" + req.get_header_value("Authorization") : "";
  const std::string host = req.get_header_value("Host");
  const std::string base = host.empty() ? base_url() : "http://" + host;

  RateLimiter::Budget budget = limiter_.Peek(token, now);
  if (req.path == "/rate_limit" && req.method == "GET") {
    // As on GitHub, asking for the rate limit status does not spend budget.
    Count("rate_limit", "", false, false);
    Json core;
    core["limit"] = budget.limit;
    core["used"] = budget.used;
    core["remaining"] = budget.remaining;
    core["reset"] = budget.reset;
    Json body;
    body["resources"]["core"] = core;
    body["rate"] = core;
    SetRateHeaders(res, budget);
    res.status = 200;
    res.set_content(Dump(body), "application/json; charset=utf-8");
    return;
  }
  std::string endpoint;
  std::string repo_name;
  ApiResponse response;
  if (budget.remaining > 0) {
    std::shared_lock<std::shared_mutex> lock(corpus_mu_);
    response = Dispatch(req, base, &endpoint, &repo_name);
  } else {
    std::shared_lock<std::shared_mutex> lock(corpus_mu_);
    const Route route = ParseRoute(req.path);
    endpoint = route.endpoint;
    const Repository* repo =
        route.endpoint.empty() ? nullptr : corpus_.FindRepo(route.owner, route.name);
    if (repo != nullptr) repo_name = repo->FullName();
  }
  auto rate_limited = [&] {
    Count(endpoint, repo_name, false, true);
    SetRateHeaders(res, budget);
    res.status = 403;
    res.set_content(Dump(ErrorJson("API rate limit exceeded for user ID 1.", kRateDocs)),
                    "application/json; charset=utf-8");
  };
  if (budget.remaining <= 0) return rate_limited();

  std::string etag;
  if (response.status == 200) {
    etag = ETagOf(response.body);
    const std::string inm = req.get_header_value("If-None-Match");
    if (!inm.empty() && ETagMatches(inm, etag)) {
      Count(endpoint, repo_name, true, false);
      SetRateHeaders(res, budget);
      res.set_header("ETag", etag);
      res.status = 304;
      return;
    }
  }
  if (!limiter_.TryConsume(token, now, &budget)) return rate_limited();
  Count(endpoint, repo_name, false, false);
  SetRateHeaders(res, budget);
  if (!etag.empty()) res.set_header("ETag", etag);
  if (!response.link.empty()) res.set_header("Link", response.link);
  res.status = response.status;
  res.set_content(response.body, "application/json; charset=utf-8");
}

}  // namespace issuescope::sim

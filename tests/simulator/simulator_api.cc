// The API front of TrackerSimulator, common to the three dialects: picks the dialect by path,
// identifies the token, enforces the per-token budget (each forge's headers and status when
// spent), injects the configured faults, answers conditional requests with 304, and counts.
#include <cstdio>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "httplib.h"
#include "tests/simulator/api_dispatch.h"
#include "tests/simulator/github_graphql.h"
#include "tests/simulator/github_json.h"
#include "tests/simulator/list_query.h"
#include "tests/simulator/tracker_simulator.h"

namespace issuescope::sim {


namespace {

constexpr char kJson[] = "application/json; charset=utf-8";
constexpr char kRateDocs[] =
    "https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting";

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

// StripScheme removes a "token " / "Bearer " prefix (case-insensitive).
std::string StripScheme(absl::string_view v) {
  for (absl::string_view scheme : {"token ", "bearer "}) {
    if (v.size() > scheme.size() && absl::EqualsIgnoreCase(v.substr(0, scheme.size()), scheme)) {
      return std::string(absl::StripAsciiWhitespace(v.substr(scheme.size())));
    }
  }
  return std::string(absl::StripAsciiWhitespace(v));
}

// TokenOf extracts the token each forge authenticates with.
std::string TokenOf(Tracker tracker, const httplib::Request& req) {
  if (tracker == Tracker::kGitlab && req.has_header("PRIVATE-TOKEN")) {
    return std::string(absl::StripAsciiWhitespace(req.get_header_value("PRIVATE-TOKEN")));
  }
  if (tracker == Tracker::kGitee) {
    for (const QueryParam& p : ParseQueryString(req.target)) {
      if (p.key == "access_token" && !p.value.empty()) return p.value;
    }
  }
  return req.has_header("Authorization") ? StripScheme(req.get_header_value("Authorization"))
                                         : "";
}

void SetRateHeaders(Tracker tracker, httplib::Response& res, const RateLimiter::Budget& b) {
  if (tracker == Tracker::kGithub) {
    res.set_header("X-RateLimit-Limit", std::to_string(b.limit));
    res.set_header("X-RateLimit-Remaining", std::to_string(b.remaining));
    res.set_header("X-RateLimit-Reset", std::to_string(b.reset));
    res.set_header("X-RateLimit-Used", std::to_string(b.used));
    res.set_header("X-RateLimit-Resource", "core");
  } else if (tracker == Tracker::kGitlab) {
    res.set_header("RateLimit-Limit", std::to_string(b.limit));
    res.set_header("RateLimit-Observed", std::to_string(b.used));
    res.set_header("RateLimit-Remaining", std::to_string(b.remaining));
    res.set_header("RateLimit-Reset", std::to_string(b.reset));
    res.set_header("RateLimit-ResetTime", HttpDate(b.reset));
  }
  // Gitee sends no rate-limit headers.
}

}  // namespace

std::string TokenLabel(Tracker tracker, absl::string_view token) {
  if (token.empty()) return absl::StrCat(TrackerName(tracker), ":anonymous");
  char buf[12];
  snprintf(buf, sizeof(buf), "%08llx",
           static_cast<unsigned long long>(StableHash(token, 77) & 0xFFFFFFFFULL));
  return absl::StrCat(TrackerName(tracker), ":token-", buf);
}

void TrackerSimulator::HandleApi(const httplib::Request& req, httplib::Response& res) {
  const FaultConfig faults = Faults();
  if (faults.latency_ms > 0) clock_->SleepFor(absl::Milliseconds(faults.latency_ms));
  const int64_t now = SimNow();
  Served served;
  served.tracker = absl::StartsWith(req.path, "/api/v4/")   ? Tracker::kGitlab
                   : absl::StartsWith(req.path, "/api/v5/") ? Tracker::kGitee
                                                            : Tracker::kGithub;
  const Tracker tracker = served.tracker;
  const std::string token = TokenOf(tracker, req);
  const std::string token_key = absl::StrCat(TrackerName(tracker), ":", token);
  served.token_label = TokenLabel(tracker, token);
  res.set_header("Date", HttpDate(now));
  if (tracker == Tracker::kGithub) res.set_header("X-GitHub-Media-Type", "github.v3; format=json");
  const std::string host = req.get_header_value("Host");
  const std::string base = host.empty() ? base_url() : "http://" + host;

  RateLimiter::Budget budget = limiter_.Peek(token_key, now);
  served.too_early = TooEarly(token_key, now);
  if (tracker == Tracker::kGithub && req.path == "/rate_limit" && req.method == "GET") {
    // As on GitHub, asking for the rate limit status does not spend budget.
    served.endpoint = "rate_limit";
    Json core;
    core["limit"] = budget.limit;
    core["used"] = budget.used;
    core["remaining"] = budget.remaining;
    core["reset"] = budget.reset;
    Json body;
    body["resources"]["core"] = core;
    body["rate"] = core;
    SetRateHeaders(tracker, res, budget);
    res.status = 200;
    res.set_content(Dump(body), kJson);
    return Count(served);
  }
  if (tracker == Tracker::kGithub && req.path == "/graphql") {
    return HandleGraphql(req, res, served, token, base);
  }
  ApiRequest api{req.method, req.target, base, faults.deep_page_limit};
  ApiResponse response;
  {
    std::shared_lock<std::shared_mutex> lock(corpus_mu_);
    response = tracker == Tracker::kGitlab ? DispatchGitlab(corpus_, api)
               : tracker == Tracker::kGitee ? DispatchGitee(corpus_, api)
                                            : DispatchGithub(corpus_, api);
  }
  served.endpoint = response.endpoint;
  served.repo = response.repo;
  served.deep_page = response.deep_page;

  auto rate_limited = [&] {
    served.rate_limited = true;
    served.over_budget = true;
    SetRateHeaders(tracker, res, budget);
    const int64_t wait = std::max<int64_t>(0, budget.reset - now);
    if (tracker == Tracker::kGithub) {
      res.status = 403;
      res.set_content(Dump(ErrorJson("API rate limit exceeded for user ID 1.", kRateDocs)), kJson);
    } else if (tracker == Tracker::kGitlab) {
      res.status = 429;
      res.set_header("Retry-After", std::to_string(wait));
      res.set_content("Retry later\n", "text/plain");
    } else {
      res.status = 403;
      res.set_header("Retry-After", std::to_string(wait));
      res.set_content(Dump(Json{{"message", "Rate Limit Exceeded"}}), kJson);
    }
    served.status = res.status;
    Count(served);
  };
  if (budget.remaining <= 0) return rate_limited();

  // Injected failures that the forge answers before serving: they cost no budget.
  const std::string identity = absl::StrCat(token_key, " ", req.method, " ", req.target);
  const int64_t attempt = dice_.Roll(identity);
  auto draw = [&](FaultKind kind) { return FaultDice::Draw(faults.seed, kind, identity, attempt); };
  if (draw(FaultKind::kSecondaryLimit) < faults.secondary_limit_rate) {
    served.secondary = true;
    res.status = tracker == Tracker::kGitlab ? 429 : faults.secondary_limit_status;
    SetRateHeaders(tracker, res, budget);
    if (draw(FaultKind::kRetryAfter) < faults.with_retry_after) {
      res.set_header("Retry-After", std::to_string(faults.retry_after_s));
      RecordRetryAfter(token_key, now + faults.retry_after_s);
    }
    if (tracker == Tracker::kGithub) {
      res.set_content(
          Dump(ErrorJson("You have exceeded a secondary rate limit. Please wait a few minutes "
                         "before you try again.",
                         "https://docs.github.com/rest/overview/"
                         "rate-limits-for-the-rest-api#about-secondary-rate-limits")),
          kJson);
    } else if (tracker == Tracker::kGitlab) {
      res.set_content("Retry later\n", "text/plain");
    } else {
      res.set_content(Dump(Json{{"message", "Rate Limit Exceeded"}}), kJson);
    }
    served.status = res.status;
    return Count(served);
  }
  const double error_draw = draw(FaultKind::kError);
  if (error_draw < faults.error_rate) {
    served.server_error = true;
    const int statuses[] = {500, 502, 503};
    res.status = statuses[static_cast<int>(error_draw / faults.error_rate * 3) % 3];
    if (res.status == 500) {
      res.set_content(Dump(Json{{"message", tracker == Tracker::kGitlab
                                                 ? "500 Internal Server Error"
                                                 : "Server Error"}}),
                      kJson);
    } else {
      res.set_content(absl::StrCat("<html><body><h1>", res.status,
                                   res.status == 502 ? " Bad Gateway" : " Service Unavailable",
                                   "</h1></body></html>\n"),
                      "text/html");
    }
    served.status = res.status;
    return Count(served);
  }

  // Conditional requests: GitHub answers 304 free of budget; GitLab counts them.
  std::string etag;
  if (response.status == 200 && tracker != Tracker::kGitee) {
    etag = ETagOf(response.body);
    const std::string inm = req.get_header_value("If-None-Match");
    if (!inm.empty() && ETagMatches(inm, etag)) {
      if (tracker == Tracker::kGitlab && !limiter_.TryConsume(token_key, now, &budget)) {
        return rate_limited();
      }
      served.not_modified = true;
      SetRateHeaders(tracker, res, budget);
      res.set_header("ETag", etag);
      res.status = 304;
      served.status = 304;
      return Count(served);
    }
  }
  if (!limiter_.TryConsume(token_key, now, &budget)) return rate_limited();
  SetRateHeaders(tracker, res, budget);
  if (!etag.empty()) res.set_header("ETag", etag);
  for (const auto& [name, value] : response.headers) res.set_header(name, value);
  res.status = response.status;
  served.status = response.status;
  if (response.status == 200 && draw(FaultKind::kSlow) < faults.slow_rate && faults.slow_ms > 0) {
    served.slow = true;
    clock_->SleepFor(absl::Milliseconds(faults.slow_ms));
  }
  if (response.status == 200 && draw(FaultKind::kTruncated) < faults.truncated_rate) {
    // Announce the full length, send about half, then cut the connection.
    served.truncated = true;
    auto body = std::make_shared<std::string>(std::move(response.body));
    res.set_content_provider(
        body->size(), response.content_type,
        [body](size_t offset, size_t, httplib::DataSink& sink) {
          const size_t half = body->size() / 2;
          if (offset < half) sink.write(body->data() + offset, half - offset);
          return false;
        });
    return Count(served);
  }
  if (response.status == 200 && draw(FaultKind::kInvalidJson) < faults.invalid_json_rate) {
    served.invalid_json = true;
    response.body = response.body.substr(0, response.body.size() / 2) + "<<<not json>>>";
  }
  res.set_content(response.body, response.content_type);
  Count(served);
}

void TrackerSimulator::HandleGraphql(const httplib::Request& req, httplib::Response& res,
                                     Served& served, const std::string& token,
                                     const std::string& base) {
  constexpr char kGraphqlDocs[] = "https://docs.github.com/graphql";
  const FaultConfig faults = Faults();
  const int64_t now = SimNow();
  const std::string token_key = absl::StrCat("github-graphql:", token);
  served.graphql = true;
  served.endpoint = "graphql";
  auto finish = [&](int status, const std::string& body) {
    res.status = status;
    served.status = status;
    res.set_content(body, kJson);
    Count(served);
  };
  auto set_headers = [&](const RateLimiter::Budget& b) {
    res.set_header("X-RateLimit-Limit", std::to_string(b.limit));
    res.set_header("X-RateLimit-Remaining", std::to_string(b.remaining));
    res.set_header("X-RateLimit-Reset", std::to_string(b.reset));
    res.set_header("X-RateLimit-Used", std::to_string(b.used));
    res.set_header("X-RateLimit-Resource", "graphql");
  };
  if (!faults.graphql || req.method != "POST") {
    return finish(404, Dump(ErrorJson("Not Found", kGraphqlDocs)));
  }
  if (token.empty()) {
    return finish(401, Dump(ErrorJson("This endpoint requires you to be authenticated.",
                                      kGraphqlDocs)));
  }
  // The dice-drawn faults, as on REST: a server error before the query runs (not charged);
  // after it, a slow, cut-short or garbled answer (charged). The identity is the query itself.
  const std::string identity =
      absl::StrCat(token_key, " POST ", req.target, " ", StableHash(req.body));
  const int64_t attempt = dice_.Roll(identity);
  auto draw = [&](FaultKind kind) { return FaultDice::Draw(faults.seed, kind, identity, attempt); };
  if (const double error_draw = draw(FaultKind::kError); error_draw < faults.error_rate) {
    served.server_error = true;
    const int statuses[] = {500, 502, 503};
    const int status = statuses[static_cast<int>(error_draw / faults.error_rate * 3) % 3];
    return finish(status, status == 500 ? Dump(Json{{"message", "Server Error"}})
                                        : absl::StrCat("<html><body><h1>", status, "</h1></body></html>\n"));
  }
  RateLimiter::Budget budget = graphql_limiter_.Peek(token_key, now);
  GraphqlBudget gb{budget.limit, budget.remaining, budget.reset};
  GraphqlAnswer answer;
  {
    std::shared_lock<std::shared_mutex> lock(corpus_mu_);
    answer = DispatchGithubGraphql(corpus_, req.body, base, gb, faults.graphql_timeout_nodes);
  }
  served.repo = answer.response.repo;
  served.nodes = answer.nodes;
  if (answer.over_budget) {
    served.over_budget = budget.remaining <= 0;
    served.graphql_over_budget = true;
    served.rate_limited = true;
    set_headers(budget);
    return finish(200, answer.response.body);
  }
  if (answer.points > 0) {
    RateLimiter::Budget minute;
    if (!graphql_minute_.TryConsumePoints(token_key, now, answer.points, &minute)) {
      // GitHub's secondary limit on points per minute: 403 with Retry-After.
      served.secondary = true;
      const int64_t wait = std::max<int64_t>(1, minute.reset - now);
      res.set_header("Retry-After", std::to_string(wait));
      RecordRetryAfter(absl::StrCat("github:", token), now + wait);
      set_headers(budget);
      return finish(403, Dump(ErrorJson(
                             "You have exceeded a secondary rate limit. Please wait a few "
                             "minutes before you try again.",
                             "https://docs.github.com/graphql/overview/"
                             "rate-limits-and-node-limits-for-the-graphql-api")));
    }
    if (!graphql_limiter_.TryConsumePoints(token_key, now, answer.points, &budget)) {
      // Another request of the token spent the points meanwhile.
      served.graphql_over_budget = true;
      served.rate_limited = true;
      set_headers(budget);
      Json e;
      e["type"] = "RATE_LIMITED";
      e["message"] = "API rate limit exceeded for user ID 1.";
      return finish(200, Dump(Json{{"errors", Json::array({e})}}));
    }
    served.points = answer.points;
  } else {
    budget = graphql_limiter_.Peek(token_key, now);
  }
  served.graphql_timeout = answer.timed_out;
  set_headers(budget);
  if (answer.response.status == 200 && !answer.timed_out) {
    if (draw(FaultKind::kSlow) < faults.slow_rate && faults.slow_ms > 0) {
      served.slow = true;
      clock_->SleepFor(absl::Milliseconds(faults.slow_ms));
    }
    if (draw(FaultKind::kTruncated) < faults.truncated_rate) {
      // Announce the full length, send about half, then cut the connection.
      served.truncated = true;
      res.status = 200;
      served.status = 200;
      auto body = std::make_shared<std::string>(std::move(answer.response.body));
      res.set_content_provider(body->size(), kJson,
                               [body](size_t offset, size_t, httplib::DataSink& sink) {
                                 const size_t half = body->size() / 2;
                                 if (offset < half) sink.write(body->data() + offset, half - offset);
                                 return false;
                               });
      return Count(served);
    }
    if (draw(FaultKind::kInvalidJson) < faults.invalid_json_rate) {
      served.invalid_json = true;
      const std::string& b = answer.response.body;
      return finish(200, b.substr(0, b.size() / 2) + "<<<not json>>>");
    }
  }
  finish(answer.response.status, answer.response.body);
}

}  // namespace issuescope::sim

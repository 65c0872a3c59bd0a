// TrackerSimulator lifecycle, stats and the /_sim/ admin API. The GitHub API itself is in
// simulator_api.cc.
#include "tests/simulator/tracker_simulator.h"

#include <chrono>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "httplib.h"
#include "tests/simulator/corpus_generator.h"
#include "tests/simulator/corpus_loader.h"
#include "tests/simulator/github_json.h"

namespace issuescope::sim {

absl::StatusOr<std::unique_ptr<TrackerSimulator>> TrackerSimulator::Start(
    SimulatorOptions options) {
  RETURN_IF_ERROR(ValidateOptions(options));
  sim::Corpus corpus;
  if (!options.corpus_file.empty()) {
    ASSIGN_OR_RETURN(corpus, LoadCorpusFile(options.corpus_file));
    if (options.plant_count > 0) {
      RETURN_IF_ERROR(
          PlantPhrase(corpus, options.plant_phrase, options.plant_count, options.seed));
    }
  } else {
    ASSIGN_OR_RETURN(corpus, GenerateCorpus(options));
  }
  std::unique_ptr<TrackerSimulator> sim(
      new TrackerSimulator(std::move(options), std::move(corpus)));
  RETURN_IF_ERROR(sim->Listen());
  return sim;
}

TrackerSimulator::TrackerSimulator(SimulatorOptions options, sim::Corpus corpus)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : Clock::Real()),
      corpus_(std::move(corpus)),
      limiter_(options_.rate_limit) {
  started_ = clock_->Now();
  const int64_t newest = corpus_.NewestTimestamp();
  const int64_t fallback = absl::ToUnixSeconds(
      absl::FromCivil(absl::CivilSecond(2026, 1, 1, 0, 0, 0), absl::UTCTimeZone()));
  sim_origin_ = (newest == 0 ? fallback : newest) + 3600;
}

TrackerSimulator::~TrackerSimulator() { Stop(); }

absl::Status TrackerSimulator::Listen() {
  server_ = std::make_unique<httplib::Server>();
  const int threads = options_.threads;
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server_->set_tcp_nodelay(true);  // headers and body go out in separate writes
  auto route = [this](const httplib::Request& req, httplib::Response& res) {
    if (absl::StartsWith(req.path, "/_sim/")) {
      HandleAdmin(req, res);
    } else {
      HandleApi(req, res);
    }
  };
  server_->Get(R"(/.*)", route);
  server_->Post(R"(/.*)", route);
  if (options_.port == 0) {
    port_ = server_->bind_to_any_port(options_.listen_host);
  } else {
    port_ = server_->bind_to_port(options_.listen_host, options_.port) ? options_.port : -1;
  }
  if (port_ <= 0) {
    return absl::UnavailableError(absl::StrCat("tracker simulator cannot bind ",
                                               options_.listen_host, ":", options_.port));
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // The socket already accepts connections; wait for the accept loop so Stop cannot race it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!server_->is_running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!server_->is_running()) {
    server_->stop();
    thread_.join();
    return absl::UnavailableError("tracker simulator accept loop did not start");
  }
  spdlog::info("tracker simulator serving {} on port {}", options_.listen_host, port_);
  return absl::OkStatus();
}

std::string TrackerSimulator::base_url() const {
  return absl::StrCat("http://", options_.listen_host, ":", port_);
}

void TrackerSimulator::Stop() {
  std::lock_guard<std::mutex> lock(stop_mu_);
  if (server_ != nullptr) server_->stop();
  if (thread_.joinable()) thread_.join();
}

int64_t TrackerSimulator::SimNow() const {
  return sim_origin_ + absl::ToInt64Seconds(clock_->Now() - started_);
}

absl::StatusOr<MutationResult> TrackerSimulator::Mutate(const MutationSpec& spec) {
  std::unique_lock<std::shared_mutex> lock(corpus_mu_);
  return ApplyMutation(corpus_, spec, SimNow());
}

SimStats TrackerSimulator::Stats() const {
  std::lock_guard<std::mutex> lock(stats_mu_);
  return stats_;
}

void TrackerSimulator::ResetStats() {
  std::lock_guard<std::mutex> lock(stats_mu_);
  stats_ = SimStats();
}

std::vector<CorpusEntry> TrackerSimulator::Corpus() const {
  std::shared_lock<std::shared_mutex> lock(corpus_mu_);
  return corpus_.Entries();
}

void TrackerSimulator::Counts(int64_t* repos, int64_t* issues, int64_t* comments) const {
  std::shared_lock<std::shared_mutex> lock(corpus_mu_);
  *repos = static_cast<int64_t>(corpus_.repos.size());
  *issues = corpus_.IssueCount();
  *comments = corpus_.CommentCount();
}

void TrackerSimulator::Count(const std::string& endpoint, const std::string& repo,
                             bool not_modified, bool rate_limited) {
  std::lock_guard<std::mutex> lock(stats_mu_);
  ++stats_.requests;
  if (not_modified) ++stats_.not_modified;
  if (rate_limited) ++stats_.rate_limited;
  if (!endpoint.empty()) ++stats_.by_endpoint[endpoint];
  if (!repo.empty()) ++stats_.by_repo[repo];
}

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
    j["by_repo"] = Json::object();
    for (const auto& [k, v] : s.by_repo) j["by_repo"][k] = v;
    j["by_endpoint"] = Json::object();
    for (const char* e : {"issues", "comments", "issue", "issue_comments", "repo", "rate_limit"}) {
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
      arr.push_back(std::move(j));
    }
    return SendJson(res, 200, arr);
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
      j["changed_issues"].push_back(Json{{"repo", r.repo}, {"number", r.number}});
    }
    j["new_comment_ids"] = result->new_comment_ids;
    return SendJson(res, 200, j);
  }
  SendJson(res, 404, ErrorJson("Not Found", "https://docs.github.com/rest"));
}

}  // namespace issuescope::sim

// TrackerSimulator lifecycle, stats, faults and corpus actions. The API front is in
// simulator_api.cc, the dialects in github_api.cc, gitlab_api.cc and gitee_api.cc, the /_sim/
// admin API in simulator_admin.cc.
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
  RETURN_IF_ERROR(sim->SetFaults(sim->options_.faults));
  RETURN_IF_ERROR(sim->ApplyActions(sim->options_.actions));
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

std::string TrackerSimulator::api_url(Tracker tracker) const {
  switch (tracker) {
    case Tracker::kGitlab: return base_url() + "/api/v4";
    case Tracker::kGitee: return base_url() + "/api/v5";
    case Tracker::kGithub: break;
  }
  return base_url();
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

void TrackerSimulator::Count(const Served& s) {
  std::lock_guard<std::mutex> lock(stats_mu_);
  ++stats_.requests;
  stats_.not_modified += s.not_modified ? 1 : 0;
  stats_.rate_limited += s.rate_limited ? 1 : 0;
  stats_.over_budget += s.over_budget ? 1 : 0;
  stats_.retry_after_violations += s.too_early ? 1 : 0;
  stats_.secondary_limited += s.secondary ? 1 : 0;
  stats_.server_errors += s.server_error ? 1 : 0;
  stats_.truncated += s.truncated ? 1 : 0;
  stats_.invalid_json += s.invalid_json ? 1 : 0;
  stats_.slow += s.slow ? 1 : 0;
  stats_.moved += s.status == 301 ? 1 : 0;
  stats_.gone += s.status == 410 ? 1 : 0;
  stats_.deep_page_rejected += s.deep_page && s.status == 422 ? 1 : 0;
  if (s.graphql) {
    ++stats_.graphql_requests;
    stats_.graphql_points += s.points;
    stats_.graphql_nodes += s.points > 0 ? s.nodes : 0;
    stats_.graphql_over_budget += s.graphql_over_budget ? 1 : 0;
    stats_.graphql_timeouts += s.graphql_timeout ? 1 : 0;
    stats_.graphql_faults += s.server_error || s.truncated || s.invalid_json ? 1 : 0;
  }
  if (!s.endpoint.empty() && s.endpoint != "redirect") ++stats_.by_endpoint[s.endpoint];
  if (!s.repo.empty()) ++stats_.by_repo[s.repo];
  ++stats_.by_tracker[TrackerName(s.tracker)];
  TokenStats& t = stats_.by_token[s.token_label];
  ++t.requests;
  t.over_budget += s.over_budget ? 1 : 0;
  t.retry_after_violations += s.too_early ? 1 : 0;
  t.graphql_points += s.points;
  t.graphql_over_budget += s.graphql_over_budget ? 1 : 0;
}

void TrackerSimulator::RecordRetryAfter(const std::string& token_key, int64_t until) {
  std::lock_guard<std::mutex> lock(faults_mu_);
  int64_t& u = retry_until_[token_key];
  u = std::max(u, until);
}

bool TrackerSimulator::TooEarly(const std::string& token_key, int64_t now) {
  std::lock_guard<std::mutex> lock(faults_mu_);
  auto it = retry_until_.find(token_key);
  return it != retry_until_.end() && now < it->second;
}

FaultConfig TrackerSimulator::Faults() const {
  std::lock_guard<std::mutex> lock(faults_mu_);
  return faults_;
}

absl::Status TrackerSimulator::SetFaults(const FaultConfig& faults) {
  RETURN_IF_ERROR(ValidateFaultConfig(faults));
  std::lock_guard<std::mutex> lock(faults_mu_);
  faults_ = faults;
  limiter_.SetLimit(faults.budget > 0 ? faults.budget : options_.rate_limit,
                    faults.budget_window_s);
  graphql_limiter_.SetLimit(faults.graphql_budget, faults.budget_window_s);
  graphql_minute_.SetLimit(faults.graphql_points_per_minute, 60);
  return absl::OkStatus();
}

absl::Status TrackerSimulator::ApplyActions(const FaultActions& actions) {
  std::unique_lock<std::shared_mutex> lock(corpus_mu_);
  for (const FaultActions::Transfer& t : actions.transfers) {
    RETURN_IF_ERROR(corpus_.Transfer(t.from, t.to));
  }
  for (const FaultActions::Deletion& d : actions.deletions) {
    Repository* repo = corpus_.FindRepoSpec(d.repo);
    if (repo == nullptr) {
      return absl::NotFoundError(absl::StrCat("delete: repository '", d.repo, "' not found"));
    }
    std::vector<int64_t> numbers = d.numbers;
    for (const std::string& key : d.keys) {
      int64_t n = 0;
      if (!ParseGiteeKey(key, &n)) {
        return absl::InvalidArgumentError(absl::StrCat("delete: '", key, "' is not a Gitee key"));
      }
      numbers.push_back(n);
    }
    for (int64_t n : numbers) {
      if (!repo->DeleteIssue(n)) {
        return absl::NotFoundError(
            absl::StrCat("delete: ", d.repo, " has no issue ", n));
      }
    }
  }
  return absl::OkStatus();
}

std::vector<DeletedEntry> TrackerSimulator::Deleted() const {
  std::shared_lock<std::shared_mutex> lock(corpus_mu_);
  return corpus_.Deleted();
}

}  // namespace issuescope::sim

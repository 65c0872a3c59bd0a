#include "metrics.h"

#include <httplib.h>

#include <map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/logging.h"
#include "common/status_macros.h"

namespace issuescope::coordinator {
namespace {

constexpr char kPrefix[] = "issuescope_coordinator_";

// Label escapes a label value: backslash, double quote and newline.
std::string Label(absl::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string Lower(absl::string_view name, absl::string_view prefix) {
  if (name.substr(0, prefix.size()) == prefix) name.remove_prefix(prefix.size());
  return absl::AsciiStrToLower(name);
}

// Family appends "# HELP" and "# TYPE" lines.
void Family(std::string* out, absl::string_view name, absl::string_view type,
            absl::string_view help) {
  absl::StrAppend(out, "# HELP ", kPrefix, name, " ", help, "\n# TYPE ", kPrefix, name, " ", type,
                  "\n");
}

void Sample(std::string* out, absl::string_view name, absl::string_view labels, double value) {
  absl::StrAppend(out, kPrefix, name, labels.empty() ? "" : "{", labels, labels.empty() ? "" : "}",
                  " ", absl::StrFormat("%.17g", value), "\n");
}

}  // namespace

std::string RenderMetrics(const v1::GetStatusResponse& status,
                          const CoordinatorCounters& counters) {
  std::string out;
  std::map<std::string, int> phases;
  for (int p = v1::RepoPhase_MIN + 1; p <= v1::RepoPhase_MAX; ++p) {
    if (v1::RepoPhase_IsValid(p)) {
      phases[Lower(v1::RepoPhase_Name(static_cast<v1::RepoPhase>(p)), "REPO_PHASE_")] = 0;
    }
  }
  int leases = 0;
  for (const auto& repo : status.repositories()) {
    ++phases[Lower(v1::RepoPhase_Name(repo.phase()), "REPO_PHASE_")];
    if (!repo.worker_id().empty()) ++leases;
  }
  Family(&out, "repositories", "gauge", "Repositories in the catalog by phase.");
  for (const auto& [phase, n] : phases) Sample(&out, "repositories", "phase=\"" + phase + "\"", n);
  Family(&out, "leases", "gauge", "Leases held now.");
  Sample(&out, "leases", "", leases);

  std::map<std::string, int> states = {{"alive", 0}, {"draining", 0}, {"dead", 0}};
  for (const auto& w : status.workers()) {
    ++states[!w.alive() ? "dead" : (w.draining() ? "draining" : "alive")];
  }
  Family(&out, "workers", "gauge", "Registered workers by state (draining ones are alive).");
  for (const auto& [state, n] : states) Sample(&out, "workers", "state=\"" + state + "\"", n);
  Family(&out, "worker_leases", "gauge", "Leases held per worker.");
  for (const auto& w : status.workers()) {
    Sample(&out, "worker_leases", "worker=\"" + Label(w.worker_id()) + "\"", w.leases());
  }
  Family(&out, "worker_load", "gauge", "Estimated issues of the repositories assigned per worker.");
  for (const auto& w : status.workers()) {
    Sample(&out, "worker_load", "worker=\"" + Label(w.worker_id()) + "\"",
           static_cast<double>(w.load()));
  }

  const std::pair<const char*, const char*> repo_counters[] = {
      {"repo_issues_fetched_total", "Issues fetched, over every crawl of the repository."},
      {"repo_comments_fetched_total", "Comments fetched, over every crawl of the repository."},
      {"repo_requests_total", "HTTP requests sent, over every crawl of the repository."}};
  for (const auto& [name, help] : repo_counters) {
    Family(&out, name, "counter", help);
    for (const auto& repo : status.repositories()) {
      const v1::CrawlCounters& t = repo.totals();
      const int64_t value = name == repo_counters[0].first   ? t.issues_fetched()
                            : name == repo_counters[1].first ? t.comments_fetched()
                                                             : t.requests();
      Sample(&out, name, "repo=\"" + Label(repo.repo_slug()) + "\"", static_cast<double>(value));
    }
  }
  Family(&out, "repo_issues_estimated", "gauge", "Estimated issues of the repository.");
  for (const auto& repo : status.repositories()) {
    Sample(&out, "repo_issues_estimated", "repo=\"" + Label(repo.repo_slug()) + "\"",
           static_cast<double>(repo.issues_estimated()));
  }

  Family(&out, "account_remaining", "gauge",
         "Shared rate budget left per account (-1: unknown).");
  for (const auto& a : status.accounts()) {
    Sample(&out, "account_remaining",
           absl::StrCat("account=\"", Label(a.account()), "\",tracker=\"",
                        Lower(v1::Tracker_Name(a.tracker()), "TRACKER_"), "\""),
           static_cast<double>(a.remaining()));
  }
  Family(&out, "account_limit", "gauge", "Rate limit per account (-1: unknown).");
  for (const auto& a : status.accounts()) {
    Sample(&out, "account_limit",
           absl::StrCat("account=\"", Label(a.account()), "\",tracker=\"",
                        Lower(v1::Tracker_Name(a.tracker()), "TRACKER_"), "\""),
           static_cast<double>(a.limit()));
  }

  Family(&out, "lease_expirations_total", "counter",
         "Leases ended because they were not renewed or their worker died.");
  Sample(&out, "lease_expirations_total", "", static_cast<double>(counters.lease_expirations));
  Family(&out, "epochs_granted_total", "counter", "Leases granted, each with a new epoch.");
  Sample(&out, "epochs_granted_total", "", static_cast<double>(counters.epochs_granted));
  Family(&out, "state_commits_total", "counter", "Durable writes of the coordinator's state.");
  Sample(&out, "state_commits_total", "", static_cast<double>(counters.state_commits));
  return out;
}

MetricsServer::Snapshot CoreMetricsSnapshot(CoordinatorCore* core) {
  return [core]() -> absl::StatusOr<std::string> {
    auto status = core->GetStatus(v1::GetStatusRequest());
    if (!status.ok()) return status.status();
    return RenderMetrics(*status, core->Counters());
  };
}

MetricsServer::MetricsServer(Snapshot snapshot) : snapshot_(std::move(snapshot)) {}

MetricsServer::~MetricsServer() { Stop(); }

absl::StatusOr<int> MetricsServer::Start(const std::string& address, const ServerTlsFiles& tls) {
  const size_t colon = address.rfind(':');
  int port = -1;
  std::string host = colon == std::string::npos ? "" : address.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (colon == std::string::npos || host.empty() ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics address '", address, "' must be HOST:PORT"));
  }
  ASSIGN_OR_RETURN(server_, MakeHttpServer(tls));
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    absl::StatusOr<std::string> body = snapshot_();
    if (!body.ok()) {
      res.status = 500;
      res.set_content(absl::StrCat(body.status().message(), "\n"), "text/plain");
      return;
    }
    res.set_content(*body, "text/plain; version=0.0.4; charset=utf-8");
  });
  int bound = port;
  if (port == 0) {
    bound = server_->bind_to_any_port(host);
  } else if (!server_->bind_to_port(host, port)) {
    bound = -1;
  }
  if (bound <= 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen for metrics on ", address));
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // Stop only works once the accept loop runs: wait for it (it starts at once).
  while (!server_->is_running()) std::this_thread::yield();
  spdlog::info("metrics served on {}://{}:{}/metrics", tls.enabled() ? "https" : "http", host,
               bound);
  return bound;
}

void MetricsServer::Stop() {
  if (!thread_.joinable()) return;
  server_->stop();
  thread_.join();
}

}  // namespace issuescope::coordinator

#include "status_command.h"

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/env_token.h"
#include "common/grpc_channel.h"
#include "common/grpc_status.h"
#include "common/repo_slug.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "progress.h"
#include "google/protobuf/util/json_util.h"
#include "issuescope/v1/coordinator.grpc.pb.h"

namespace issuescope::cli {
namespace {

// Connection is a stub plus the token to attach to every call.
struct Connection {
  std::unique_ptr<v1::Coordinator::Stub> stub;
  std::string token;

  // Prepare sets a deadline and the authorization metadata.
  void Prepare(grpc::ClientContext* ctx) const {
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
  }
};

absl::StatusOr<Connection> Connect(const CoordinatorTarget& target) {
  if (target.coordinator.empty()) return absl::InvalidArgumentError("--coordinator is required");
  Connection conn;
  if (!target.token_env.empty()) {
    ASSIGN_OR_RETURN(conn.token, TokenFromEnvironment(target.token_env, "--token-env"));
  } else if (const char* value = std::getenv(kDefaultAdminTokenEnv); value != nullptr) {
    // Without --token-env, the admin token of the environment (as `issuescope up` prints it).
    conn.token = std::string(absl::StripAsciiWhitespace(value));
  }
  ASSIGN_OR_RETURN(auto credentials, ChannelCredentialsFor(target.tls));
  conn.stub = v1::Coordinator::NewStub(grpc::CreateChannel(target.coordinator, credentials));
  return conn;
}

absl::Status CallError(const CoordinatorTarget& target, const grpc::Status& s) {
  return absl::Status(FromGrpcStatus(s).code(),
                      absl::StrFormat("coordinator %s: %s", target.coordinator,
                                      s.error_message()));
}

std::string PhaseName(v1::RepoPhase phase) {
  std::string name = v1::RepoPhase_Name(phase);
  if (name.rfind("REPO_PHASE_", 0) == 0) name = name.substr(strlen("REPO_PHASE_"));
  return absl::AsciiStrToLower(name);
}

RepoLine LineOf(const v1::RepositoryStatus& r) {
  RepoLine line;
  line.state = PhaseName(r.phase());
  if (!r.worker_id().empty()) line.state += "@" + r.worker_id();
  line.counters = r.counters();
  line.issues_estimated = r.issues_estimated();
  line.error = r.last_error();
  if (r.phase() == v1::REPO_PHASE_CRAWLING) {
    line.request_rate = r.request_rate();
    line.eta_s = r.eta_s();
  }
  return line;
}

std::string WorkerLine(const v1::WorkerStatus& w) {
  const char* state = !w.alive() ? "dead" : (w.draining() ? "draining" : "alive");
  std::string line = absl::StrFormat(
      "worker %-12s %-8s store %s  leases %d/%d  repositories %d  load %s", w.worker_id(), state,
      w.store_address(), w.leases(), w.capacity(), w.repositories_owned(), WithThousands(w.load()));
  if (w.accounts_size() > 0) {
    absl::StrAppend(&line, "  accounts ", absl::StrJoin(w.accounts(), ","));
  }
  // A draining worker stays until the indexers have read its store's feed: show how far.
  if (w.draining()) {
    absl::StrAppend(&line, "  feed indexed ", w.indexed_seq(), "/", w.store_last_seq());
  }
  return line;
}

std::string AccountLine(const v1::AccountBudget& a, absl::Time now) {
  std::string line = absl::StrFormat("account %-16s %-7s", a.account(),
                                     absl::AsciiStrToLower(TrackerName(a.tracker())));
  const char* unit = a.resource() == "graphql" ? " graphql points " : " budget ";
  if (a.remaining() >= 0) {
    absl::StrAppend(&line, unit, WithThousands(a.remaining()));
    if (a.limit() > 0) absl::StrAppend(&line, "/", WithThousands(a.limit()));
  } else {
    absl::StrAppend(&line, unit, "unknown");
  }
  if (a.has_reset()) {
    absl::StrAppend(&line, "  resets in ",
                    FormatDurationShort(absl::ToInt64Seconds(FromProto(a.reset()) - now)));
  }
  absl::StrAppend(&line, "  leases ", a.leases(), "  tokens ", a.token_fingerprints_size(),
                  "  workers ", absl::StrJoin(a.workers(), ","));
  if (a.held_back()) absl::StrAppend(&line, "  HELD BACK (reserve ", a.reserve(), "/crawl)");
  return line;
}

// InRelative renders the time from `now` to `t` as "in 12m", "in 1h05m", "in 40s" or "12m ago".
std::string InRelative(absl::Time t, absl::Time now) {
  int64_t s = absl::ToInt64Seconds(t - now);
  const bool past = s < 0;
  if (past) s = -s;
  std::string d;
  if (s >= 3600) {
    d = absl::StrFormat("%dh%02dm", s / 3600, (s % 3600) / 60);
  } else if (s >= 60) {
    d = absl::StrFormat("%dm", s / 60);
  } else {
    d = absl::StrFormat("%ds", s);
  }
  return past ? d + " ago" : "in " + d;
}

// TokenTable renders the per-token budgets: one row per (token, worker). Only fingerprints and
// accounts are shown; the coordinator never receives a token.
std::string TokenTable(const v1::GetStatusResponse& status, absl::Time now) {
  if (status.tokens_size() == 0) return "";
  std::string out = absl::StrFormat("tokens\n  %-16s %-7s %-7s %-11s %-12s %-15s %s\n", "ACCOUNT",
                                    "TRACKER", "BUDGET", "FINGERPRINT", "WORKER", "REMAINING",
                                    "RESET");
  for (const v1::WorkerTokenBudget& t : status.tokens()) {
    const v1::TokenBudget& b = t.budget();
    std::string remaining = b.remaining() >= 0 ? WithThousands(b.remaining()) : "?";
    if (b.limit() > 0) absl::StrAppend(&remaining, "/", WithThousands(b.limit()));
    const std::string reset = b.has_reset() ? InRelative(FromProto(b.reset()), now) : "unknown";
    // REST's budget counts requests; GraphQL's (GitHub) counts points.
    const std::string budget = b.resource() == "graphql" ? "graphql" : "rest";
    absl::StrAppend(&out, absl::StrFormat("  %-16s %-7s %-7s %-11s %-12s %-15s %s\n", b.account(),
                                          absl::AsciiStrToLower(TrackerName(b.tracker())), budget,
                                          b.token_fingerprint(), t.worker_id(), remaining, reset));
  }
  return out;
}

}  // namespace

std::string FormatStatus(const v1::GetStatusResponse& status, absl::Time now) {
  std::string out;
  for (const v1::RepositoryStatus& r : status.repositories()) {
    absl::StrAppend(&out, FormatRepoLine(r.repo_slug(), LineOf(r), now), "\n");
  }
  for (const v1::WorkerStatus& w : status.workers()) absl::StrAppend(&out, WorkerLine(w), "\n");
  for (const v1::AccountBudget& a : status.accounts()) {
    absl::StrAppend(&out, AccountLine(a, now), "\n");
  }
  absl::StrAppend(&out, TokenTable(status, now));
  absl::StrAppend(&out, status.quiescent() ? "quiescent\n" : "");
  return out;
}

absl::Status RunStatus(const StatusCommandOptions& options) {
  const CoordinatorTarget target{options.coordinator, options.token_env, options.tls};
  ASSIGN_OR_RETURN(Connection conn, Connect(target));
  ProgressBoard board(stdout, isatty(STDOUT_FILENO) != 0 && options.watch);
  do {
    v1::GetStatusResponse status;
    grpc::ClientContext ctx;
    conn.Prepare(&ctx);
    grpc::Status s = conn.stub->GetStatus(&ctx, v1::GetStatusRequest(), &status);
    if (!s.ok()) return CallError(target, s);
    if (options.json) {
      std::string out;
      google::protobuf::util::JsonPrintOptions jopts;
      jopts.preserve_proto_field_names = true;
      (void)google::protobuf::util::MessageToJsonString(status, &out, jopts);
      absl::PrintF("%s\n", out);
    } else if (options.watch) {
      for (const v1::RepositoryStatus& r : status.repositories()) {
        board.Update(r.repo_slug(), LineOf(r));
      }
      board.Render(absl::Now());
    } else {
      absl::PrintF("%s", FormatStatus(status, absl::Now()));
    }
    if (options.watch) absl::SleepFor(absl::Seconds(1));
  } while (options.watch);
  return absl::OkStatus();
}

absl::Status RunAdmin(const AdminCommandOptions& o) {
  ASSIGN_OR_RETURN(Connection conn, Connect(o.target));
  grpc::ClientContext ctx;
  conn.Prepare(&ctx);
  grpc::Status s;
  std::vector<std::string> lines;
  if (o.action == "add") {
    if (o.args.empty()) return absl::InvalidArgumentError("repos add: name the repositories");
    v1::AddRepositoriesRequest req;
    for (const std::string& arg : o.args) {
      auto ref = ParseRepoSpec(arg);
      if (!ref.ok()) return absl::InvalidArgumentError(absl::StrCat(arg, ": ", ref.status().message()));
      v1::RepositorySpec* spec = req.add_repositories();
      *spec->mutable_repo() = *ref;
      spec->mutable_repo()->set_api_url(o.api_url);
      spec->set_recrawl_interval_s(o.recrawl_interval_s);
      spec->set_full_recrawl_interval_s(o.full_recrawl_interval_s);
      spec->set_include_pull_requests(o.include_pull_requests);
    }
    v1::AddRepositoriesResponse resp;
    s = conn.stub->AddRepositories(&ctx, req, &resp);
    for (const auto& slug : resp.added()) lines.push_back("added " + slug);
    for (const auto& slug : resp.existing()) lines.push_back("re-scheduled " + slug);
  } else if (o.action == "remove") {
    if (o.args.empty()) return absl::InvalidArgumentError("repos remove: name the repositories");
    v1::RemoveRepositoriesRequest req;
    for (const std::string& arg : o.args) req.add_repo_slugs(arg);
    v1::RemoveRepositoriesResponse resp;
    s = conn.stub->RemoveRepositories(&ctx, req, &resp);
    for (const auto& slug : resp.removed()) lines.push_back("removed " + slug);
  } else if (o.action == "pause" || o.action == "resume") {
    if (o.action == "pause") {
      v1::PauseRepositoriesRequest req;
      for (const std::string& arg : o.args) req.add_repo_slugs(arg);
      v1::PauseRepositoriesResponse resp;
      s = conn.stub->PauseRepositories(&ctx, req, &resp);
      for (const auto& slug : resp.paused()) lines.push_back("paused " + slug);
    } else {
      v1::ResumeRepositoriesRequest req;
      for (const std::string& arg : o.args) req.add_repo_slugs(arg);
      v1::ResumeRepositoriesResponse resp;
      s = conn.stub->ResumeRepositories(&ctx, req, &resp);
      for (const auto& slug : resp.resumed()) lines.push_back("resumed " + slug);
    }
  } else if (o.action == "trigger") {
    v1::TriggerCrawlRequest req;
    for (const std::string& arg : o.args) req.add_repo_slugs(arg);
    req.set_mode(o.full ? v1::CRAWL_MODE_FULL : v1::CRAWL_MODE_INCREMENTAL);
    v1::TriggerCrawlResponse resp;
    s = conn.stub->TriggerCrawl(&ctx, req, &resp);
    for (const auto& slug : resp.scheduled()) {
      lines.push_back(absl::StrCat(o.full ? "full" : "incremental", " crawl scheduled ", slug));
    }
  } else if (o.action == "drain") {
    if (o.args.size() != 1) return absl::InvalidArgumentError("drain: name one worker id");
    v1::DrainWorkerRequest req;
    req.set_worker_id(o.args[0]);
    v1::DrainWorkerResponse resp;
    s = conn.stub->DrainWorker(&ctx, req, &resp);
    lines.push_back(resp.removed() ? absl::StrCat("worker ", o.args[0], " removed")
                                   : absl::StrCat("worker ", o.args[0], " draining, ",
                                                  resp.leases_held(), " leases to finish"));
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown admin action '", o.action, "'"));
  }
  if (!s.ok()) return CallError(o.target, s);
  for (const std::string& line : lines) absl::PrintF("%s\n", line);
  return absl::OkStatus();
}

}  // namespace issuescope::cli

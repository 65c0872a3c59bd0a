#include "cluster.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/grpc_channel.h"
#include "common/grpc_status.h"
#include "status_command.h"
#include "common/status_macros.h"
#include "httplib.h"
#include "nlohmann/json.hpp"

namespace issuescope::cli {
namespace {

std::string SelfDir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

std::chrono::system_clock::time_point Deadline(absl::Duration d) {
  return std::chrono::system_clock::now() + absl::ToChronoMilliseconds(d);
}

// RandomToken is 32 random bytes in hex.
std::string RandomToken() {
  std::random_device device;
  std::string out;
  for (int i = 0; i < 8; ++i) absl::StrAppend(&out, absl::Hex(device(), absl::kZeroPad8));
  return out;
}

// EnsureToken returns the token in environment variable `var`, setting a new random one there
// (inherited by the cluster's processes) when it is unset or empty.
std::string EnsureToken(const char* var) {
  const char* value = std::getenv(var);
  if (value != nullptr && *value != '\0') return value;
  const std::string token = RandomToken();
  setenv(var, token.c_str(), 1);
  return token;
}

// IpCommand is the path of iproute2's `ip`, for `ip netns exec`.
std::string IpCommand() {
  for (const char* path : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"}) {
    if (access(path, X_OK) == 0) return path;
  }
  return "ip";
}

}  // namespace

absl::StatusOr<std::unique_ptr<Cluster>> Cluster::Start(const ClusterOptions& options) {
  if (options.work_dir.empty()) return absl::InvalidArgumentError("cluster needs a work directory");
  if (options.workers < 1) return absl::InvalidArgumentError("cluster needs at least one worker");
  std::unique_ptr<Cluster> c(new Cluster(options));
  if (c->options_.bin_dir.empty()) c->options_.bin_dir = SelfDir();
  for (const char* sub : {"logs", "ports", "data"}) {
    std::error_code ec;
    std::filesystem::create_directories(c->options_.work_dir + "/" + sub, ec);
    if (ec) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot create ", c->options_.work_dir, "/", sub, ": ", ec.message()));
    }
  }
  if (options.start_simulator) {
    std::vector<std::string> argv = {c->Bin("issuescope-simulator")};
    argv.insert(argv.end(), options.simulator_args.begin(), options.simulator_args.end());
    int port = 0;
    argv.push_back("--log-level=" + options.log_level);
    argv.push_back("--listen=" + c->HostOf("simulator").address + ":0");
    ASSIGN_OR_RETURN(c->simulator_, c->Launch("simulator", argv, &port));
    c->simulator_url_ = absl::StrCat("http://", c->HostOf("simulator").address, ":", port);
  }
  // The cluster's credentials (coordinator/security.h): an admin token for this process and the
  // CLI, a cluster token for the workers and the indexer; from the environment when set there,
  // else made here. Children inherit them by name; the admin token is also left in the work
  // directory (mode 0600) for the CLI of another shell.
  c->admin_token_ = EnsureToken(kDefaultAdminTokenEnv);
  if (c->admin_token_ == EnsureToken(kDefaultClusterTokenEnv)) {
    setenv(kDefaultClusterTokenEnv, RandomToken().c_str(), 1);
  }
  {
    const std::string path = c->options_.work_dir + "/admin.token";
    std::ofstream out(path, std::ios::trunc);
    out << c->admin_token_ << "\n";
    out.close();
    std::filesystem::permissions(path, std::filesystem::perms::owner_read |
                                           std::filesystem::perms::owner_write,
                                 std::filesystem::perm_options::replace);
  }
  RETURN_IF_ERROR(c->StartCoordinator(0));
  for (int i = 0; i < options.workers; ++i) RETURN_IF_ERROR(c->AddWorker());
  if (options.search_replicas > 0) RETURN_IF_ERROR(c->StartReplicateServer());
  RETURN_IF_ERROR(c->StartIndexer());
  int search_port = 0;
  const std::string search_host = c->HostOf("search").address;
  ASSIGN_OR_RETURN(c->search_, c->Launch("search",
                                         {c->Bin("issuescope-search"),
                                          "--listen=" + search_host + ":0",
                                          "--index=" + c->options_.work_dir + "/data/index",
                                          "--log-level=" + options.log_level},
                                         &search_port));
  c->search_address_ = absl::StrCat(search_host, ":", search_port);
  c->search_stub_ = v1::Search::NewStub(
      grpc::CreateChannel(c->search_address_, grpc::InsecureChannelCredentials()));
  c->replicas_.resize(options.search_replicas);
  c->replica_ports_.assign(options.search_replicas, 0);
  c->replica_addresses_.resize(options.search_replicas);
  for (int i = 0; i < options.search_replicas; ++i) RETURN_IF_ERROR(c->StartSearchReplica(i, 0));
  return c;
}

Cluster::~Cluster() { Stop(); }

std::string Cluster::Bin(const std::string& name) const { return options_.bin_dir + "/" + name; }

ProcessHost Cluster::HostOf(const std::string& name) const {
  return options_.placement ? options_.placement(name) : ProcessHost{};
}

absl::StatusOr<std::unique_ptr<Subprocess>> Cluster::Launch(const std::string& name,
                                                            std::vector<std::string> argv,
                                                            int* port) {
  const std::string port_file = absl::StrCat(options_.work_dir, "/ports/", name, ".port");
  std::filesystem::remove(port_file);
  if (port != nullptr) argv.push_back("--port-file=" + port_file);
  const ProcessHost host = HostOf(name);
  if (!host.netns.empty()) argv.insert(argv.begin(), {IpCommand(), "netns", "exec", host.netns});
  ASSIGN_OR_RETURN(auto proc,
                   Subprocess::Start(argv, absl::StrCat(options_.work_dir, "/logs/", name, ".log")));
  if (port != nullptr) {
    auto p = WaitForPortFile(port_file, options_.start_timeout, proc.get());
    if (!p.ok()) {
      return absl::Status(p.status().code(),
                          absl::StrCat("starting ", name, ": ", p.status().message(), " (see ",
                                       options_.work_dir, "/logs/", name, ".log)"));
    }
    *port = *p;
  }
  return proc;
}

absl::Status Cluster::StartCoordinator(int port) {
  int bound = 0;
  ASSIGN_OR_RETURN(coordinator_,
                   Launch("coordinator",
                          {Bin("issuescope-coordinator"),
                           absl::StrCat("--listen=", HostOf("coordinator").address, ":", port),
                           "--data=" + options_.work_dir + "/data/coordinator",
                           absl::StrCat("--lease-ttl-ms=", options_.lease_ttl_ms),
                           absl::StrCat("--heartbeat-ms=", options_.heartbeat_ms),
                           absl::StrCat("--worker-timeout-ms=", options_.worker_timeout_ms),
                           absl::StrCat("--admin-token-env=", kDefaultAdminTokenEnv),
                           absl::StrCat("--cluster-token-env=", kDefaultClusterTokenEnv),
                           "--log-level=" + options_.log_level},
                          &bound));
  coordinator_port_ = bound;
  coordinator_address_ = absl::StrCat(HostOf("coordinator").address, ":", bound);
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> channel,
                   CreateCoordinatorChannel(coordinator_address_, ClientTlsFiles{}, admin_token_));
  coordinator_stub_ = v1::Coordinator::NewStub(channel);
  return absl::OkStatus();
}

absl::Status Cluster::StartWorker(int i, int port) {
  std::vector<std::string> argv = {
      Bin("issuescope-crawler"), "--id=" + worker_id(i),
      absl::StrCat("--listen=", HostOf(worker_id(i)).address, ":", port),
      absl::StrCat("--data=", options_.work_dir, "/data/", worker_id(i)),
      "--coordinator=" + coordinator_address_,
      absl::StrCat("--capacity=", options_.worker_capacity),
      absl::StrCat("--drain-timeout-s=", options_.worker_drain_timeout_s),
      absl::StrCat("--cluster-token-env=", kDefaultClusterTokenEnv),
      "--log-level=" + options_.log_level};
  if (!options_.token_env.empty()) argv.push_back("--token-env=" + options_.token_env);
  // The simulator is the GitHub API the workers' tokens are for (crawler/token_binding.h).
  if (!simulator_url_.empty()) argv.push_back("--github-api=" + simulator_url_);
  int bound = 0;
  ASSIGN_OR_RETURN(workers_[i], Launch(worker_id(i), argv, &bound));
  worker_ports_[i] = bound;
  return absl::OkStatus();
}

absl::Status Cluster::AddWorker() {
  workers_.emplace_back();
  worker_ports_.push_back(0);
  return StartWorker(static_cast<int>(workers_.size()) - 1, 0);
}

absl::Status Cluster::StartIndexer() {
  ASSIGN_OR_RETURN(indexer_, Launch("indexer",
                                    {Bin("issuescope-indexer"),
                                     "--index=" + options_.work_dir + "/data/index",
                                     absl::StrCat("--shards=", options_.index_shards),
                                     absl::StrCat("--keep-changesets=",
                                                  options_.search_replicas > 0 ? 50 : 0),
                                     "--coordinator=" + coordinator_address_,
                                     absl::StrCat("--cluster-token-env=",
                                                  kDefaultClusterTokenEnv),
                                     "--log-level=" + options_.log_level},
                                    nullptr));
  return absl::OkStatus();
}

absl::Status Cluster::StartReplicateServer() {
  // xapian-replicate-server has no port file: on a host of its own (a namespace) the port is
  // free; on this machine's loopback, one the kernel just handed out.
  const ProcessHost host = HostOf("replicate");
  int port = 7010;
  if (host.netns.empty()) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      if (fd >= 0) close(fd);
      return absl::UnavailableError("cannot find a free port for xapian-replicate-server");
    }
    port = ntohs(addr.sin_port);
    close(fd);
  }
  std::filesystem::create_directories(options_.work_dir + "/data");
  ASSIGN_OR_RETURN(replicate_, Launch("replicate",
                                      {"/usr/bin/xapian-replicate-server",
                                       "--interface=" + host.address,
                                       absl::StrCat("--port=", port),
                                       options_.work_dir + "/data"},
                                      nullptr));
  replicate_address_ = absl::StrCat(host.address, ":", port);
  return absl::OkStatus();
}

absl::Status Cluster::StartSearchReplica(int i, int port) {
  const std::string name = absl::StrCat("search-replica-", i);
  const std::string host = HostOf(name).address;
  int bound = 0;
  ASSIGN_OR_RETURN(replicas_[i],
                   Launch(name,
                          {Bin("issuescope-search"), absl::StrCat("--listen=", host, ":", port),
                           absl::StrCat("--index=", options_.work_dir, "/data/replica-", i,
                                        "/index"),
                           "--replicate-from=" + replicate_address_, "--replicate-index=index",
                           "--replicate-interval=0.5", "--log-level=" + options_.log_level},
                          &bound));
  replica_ports_[i] = bound;
  replica_addresses_[i] = absl::StrCat(host, ":", bound);
  return absl::OkStatus();
}

absl::Status Cluster::RestartSearchReplica(int i) {
  if (replicas_[i]) replicas_[i]->Stop();
  return StartSearchReplica(i, replica_ports_[i]);
}

absl::Status Cluster::WaitUntilReplicasReady(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  for (size_t i = 0; i < replicas_.size(); ++i) {
    if (!replicas_[i] || !replicas_[i]->Running()) continue;
    auto stub = v1::Search::NewStub(
        grpc::CreateChannel(replica_addresses_[i], grpc::InsecureChannelCredentials()));
    for (;;) {
      v1::IndexStatus status;
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
      if (stub->GetIndexStatus(&ctx, v1::GetIndexStatusRequest(), &status).ok()) break;
      if (absl::Now() >= deadline) {
        return absl::DeadlineExceededError(absl::StrCat(
            "search-replica-", i, " has no copy of the index after ",
            absl::FormatDuration(timeout), " (see ", options_.work_dir, "/logs/search-replica-",
            i, ".log)"));
      }
      absl::SleepFor(absl::Milliseconds(100));
    }
  }
  return absl::OkStatus();
}

absl::Status Cluster::RestartCoordinator() {
  if (coordinator_) coordinator_->Stop();
  return StartCoordinator(coordinator_port_);
}

absl::Status Cluster::RestartWorker(int i) {
  if (workers_[i]) workers_[i]->Stop();
  return StartWorker(i, worker_ports_[i]);
}

absl::Status Cluster::RestartIndexer() {
  if (indexer_) indexer_->Stop();
  return StartIndexer();
}

absl::StatusOr<std::vector<std::string>> Cluster::AddSimulatorRepositories() {
  if (simulator_url_.empty()) return absl::FailedPreconditionError("no simulator running");
  httplib::Client http(simulator_url_);
  http.set_read_timeout(60, 0);
  auto res = http.Get("/_sim/corpus");
  if (!res || res->status != 200) {
    return absl::UnavailableError(absl::StrCat("cannot read the simulator's corpus from ",
                                               simulator_url_, "/_sim/corpus"));
  }
  std::set<std::string> repos;
  try {
    for (const auto& entry : nlohmann::json::parse(res->body)) {
      repos.insert(entry.at("repo").get<std::string>());
    }
  } catch (const nlohmann::json::exception& e) {
    return absl::DataLossError(absl::StrCat("simulator corpus is not valid JSON: ", e.what()));
  }
  v1::AddRepositoriesRequest req;
  std::vector<std::string> slugs;
  for (const std::string& full : repos) {
    v1::RepositorySpec* spec = req.add_repositories();
    spec->mutable_repo()->set_tracker(v1::TRACKER_GITHUB);
    spec->mutable_repo()->set_owner(full.substr(0, full.find('/')));
    spec->mutable_repo()->set_name(full.substr(full.find('/') + 1));
    spec->mutable_repo()->set_api_url(simulator_url_);
    spec->set_include_pull_requests(true);
    slugs.push_back("github:" + full);
  }
  v1::AddRepositoriesResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline(absl::Seconds(30)));
  ctx.set_wait_for_ready(true);
  RETURN_IF_ERROR(FromGrpcStatus(coordinator_stub_->AddRepositories(&ctx, req, &resp)));
  return slugs;
}

absl::Status Cluster::TriggerCrawl(v1::CrawlMode mode) {
  v1::TriggerCrawlRequest req;
  req.set_mode(mode);
  v1::TriggerCrawlResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline(absl::Seconds(30)));
  ctx.set_wait_for_ready(true);
  return FromGrpcStatus(coordinator_stub_->TriggerCrawl(&ctx, req, &resp));
}

absl::StatusOr<v1::GetStatusResponse> Cluster::Status() {
  v1::GetStatusResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline(absl::Seconds(10)));
  RETURN_IF_ERROR(FromGrpcStatus(coordinator_stub_->GetStatus(&ctx, v1::GetStatusRequest(), &resp)));
  return resp;
}

absl::Status Cluster::WaitUntilCrawled(
    int64_t min_crawls, absl::Duration timeout,
    const std::function<void(const v1::GetStatusResponse&)>& on_status) {
  const absl::Time deadline = absl::Now() + timeout;
  std::string last;
  while (absl::Now() < deadline) {
    auto status = Status();
    if (status.ok()) {
      if (on_status) on_status(*status);
      bool done = status->quiescent() && status->repositories_size() > 0;
      for (const v1::RepositoryStatus& r : status->repositories()) {
        if (r.crawls_completed() < min_crawls) done = false;
        if (r.phase() == v1::REPO_PHASE_FAILED) last = r.repo_slug() + ": " + r.last_error();
      }
      if (done) return absl::OkStatus();
    } else {
      last = std::string(status.status().message());
    }
    absl::SleepFor(absl::Milliseconds(200));
  }
  return absl::DeadlineExceededError(
      absl::StrCat("crawl did not complete within ", absl::FormatDuration(timeout),
                   last.empty() ? "" : " (last problem: " + last + ")"));
}

absl::StatusOr<IndexProgress> Cluster::IndexProgressNow() {
  ASSIGN_OR_RETURN(v1::GetStatusResponse status, Status());
  v1::IndexStatus index;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(absl::Seconds(10)));
    RETURN_IF_ERROR(
        FromGrpcStatus(search_stub_->GetIndexStatus(&ctx, v1::GetIndexStatusRequest(), &index)));
  }
  IndexProgress p;
  p.documents = index.documents();
  p.caught_up = true;
  // Every store that answers counts, whether or not the coordinator calls its worker alive: a
  // coordinator that has just restarted lists its workers as silent until they register again,
  // and their stores still hold changes the index must have. A store that does not answer
  // belongs to a stopped worker; its repositories are re-crawled by their new owners.
  int answered = 0;
  for (const v1::WorkerStatus& w : status.workers()) {
    auto stub = v1::IssueStore::NewStub(
        grpc::CreateChannel(w.store_address(), grpc::InsecureChannelCredentials()));
    v1::StoreInfo info;
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(absl::Seconds(w.alive() ? 10 : 2)));
    absl::Status got =
        FromGrpcStatus(stub->GetStoreInfo(&ctx, v1::GetStoreInfoRequest(), &info));
    if (!got.ok()) {
      if (!w.alive()) continue;
      return got;
    }
    ++answered;
    uint64_t indexed = 0;
    for (const v1::FeedPosition& f : index.feeds()) {
      if (f.store_id() == info.store_id()) indexed = f.seq();
    }
    p.stored_seq += info.last_seq();
    p.indexed_seq += std::min(indexed, info.last_seq());
    if (indexed < info.last_seq()) p.caught_up = false;
  }
  if (answered == 0) p.caught_up = false;  // no store to compare with yet
  return p;
}

absl::Status Cluster::WaitUntilIndexed(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  std::string last;
  while (absl::Now() < deadline) {
    auto p = IndexProgressNow();
    if (p.ok() && p->caught_up) return absl::OkStatus();
    last = p.ok() ? absl::StrCat("indexed ", p->indexed_seq, " of ", p->stored_seq, " changes")
                  : std::string(p.status().message());
    absl::SleepFor(absl::Milliseconds(200));
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "index did not catch up within ", absl::FormatDuration(timeout), " (", last, ")"));
}

std::vector<std::string> Cluster::Stop() {
  std::vector<std::string> out;
  auto stop = [&](std::unique_ptr<Subprocess>& p, const std::string& name) {
    if (p) out.push_back(name + ": " + p->Stop());
    p.reset();
  };
  stop(search_, "search");
  for (size_t i = 0; i < replicas_.size(); ++i) {
    stop(replicas_[i], absl::StrCat("search-replica-", i));
  }
  // Workers leave first and all at once, while the indexer still runs: a leaving worker serves
  // its store until the indexer has read its feed (the coordinator then removes it), so the
  // index ends with everything the stores hold and the workers exit within their stop grace.
  for (auto& worker : workers_) {
    if (worker && worker->Running()) worker->Signal(SIGTERM);
  }
  for (size_t i = 0; i < workers_.size(); ++i) stop(workers_[i], worker_id(static_cast<int>(i)));
  stop(indexer_, "indexer");
  stop(replicate_, "replicate");
  stop(coordinator_, "coordinator");
  stop(simulator_, "simulator");
  return out;
}

}  // namespace issuescope::cli

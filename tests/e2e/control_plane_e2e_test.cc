// The control plane end to end (label e2e, loopback only):
//  * a worker process stopped with SIGTERM leaves gracefully (LeaveWorker, exit 0 within its
//    drain timeout) and its repositories are crawled by the other worker; `issuescope drain`
//    makes a worker exit 0 on its own; `issuescope status` lists every token's budget by
//    fingerprint, and the token itself appears in no status output and no log;
//  * a worker and the indexer talk to a TLS coordinator with --tls-ca;
//  * a worker listening on every interface is listed at the address it called the coordinator
//    from, and the indexer follows its TLS (mTLS) store there with --store-tls-ca and a client
//    certificate;
//  * two workers sharing one account against the simulator's small budget never send a request
//    over it (/_sim/stats over_budget == 0);
//  * a rogue client without credentials can change nothing (admin calls, worker registration,
//    leaving for a worker, progress reports), and a repository added with another API URL never
//    receives a worker's token.
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/grpc_channel.h"
#include "common/subprocess.h"
#include "coordinator/coordinator_core.h"
#include "coordinator/coordinator_service.h"
#include "crawler/curl_transport.h"
#include "crawler/token_pool.h"
#include "crawler/worker.h"
#include "deploy/cli/cluster.h"
#include "httplib.h"
#include "tests/common/test_certificates.h"
#include "tests/crawler/mem_store.h"
#include "tests/e2e/e2e_util.h"

namespace issuescope::e2e {
namespace {

constexpr char kSecret[] = "ghp_CTLe2eSECRETzz9Qw7";

std::string Bin(const std::string& name) { return std::string(ISSUESCOPE_BIN_DIR) + "/" + name; }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

bool Shell(const std::string& command) { return std::system(command.c_str()) == 0; }

// RunCli runs `issuescope ARGS...` to completion and returns its output.
std::string RunCli(const std::vector<std::string>& args, const std::string& out_file) {
  std::vector<std::string> argv = {Bin("issuescope")};
  argv.insert(argv.end(), args.begin(), args.end());
  auto p = Subprocess::Start(argv, out_file);
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return "";
  int status = 0;
  EXPECT_TRUE((*p)->Wait(absl::Seconds(60), &status));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << ReadFile(out_file);
  return ReadFile(out_file);
}

const v1::WorkerStatus* FindWorker(const v1::GetStatusResponse& status, const std::string& id) {
  for (const auto& w : status.workers()) {
    if (w.worker_id() == id) return &w;
  }
  return nullptr;
}

TEST(ControlPlane, GracefulLeaveDrainAndPerTokenStatus) {
  setenv("CTL_E2E_TOKEN", kSecret, 1);
  const std::string work = MakeTempDir("issuescope-ctl");
  cli::ClusterOptions options;
  options.bin_dir = ISSUESCOPE_BIN_DIR;
  options.work_dir = work;
  options.workers = 2;
  options.token_env = "CTL_E2E_TOKEN";
  options.worker_drain_timeout_s = 5;
  options.simulator_args = {"--repos=6", "--issues-per-repo=300", "--comments-per-issue=2",
                            "--seed=7", "--latency-ms=120"};
  auto started = cli::Cluster::Start(options);
  ASSERT_TRUE(started.ok()) << started.status();
  cli::Cluster& cluster = **started;
  ASSERT_TRUE(cluster.AddSimulatorRepositories().ok());

  // SIGTERM worker-0 while it crawls.
  bool crawling = false;
  for (int i = 0; i < 200 && !crawling; ++i) {
    auto status = cluster.Status();
    ASSERT_TRUE(status.ok()) << status.status();
    const v1::WorkerStatus* w0 = FindWorker(*status, "worker-0");
    crawling = w0 != nullptr && w0->leases() > 0;
    if (!crawling) absl::SleepFor(absl::Milliseconds(50));
  }
  ASSERT_TRUE(crawling) << "worker-0 never held a lease";
  const absl::Time sigterm_at = absl::Now();
  cluster.worker(0)->Signal(SIGTERM);
  int wait_status = 0;
  ASSERT_TRUE(cluster.worker(0)->Wait(absl::Seconds(60), &wait_status)) << "worker-0 hung";
  const absl::Duration to_exit = absl::Now() - sigterm_at;
  EXPECT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0)
      << "wait status " << wait_status;
  // Drain timeout (5 s) + releasing + the indexer committing what it read of the store and
  // reporting it (the coordinator removes the worker then) + shutting the store down: about 6 s;
  // the bound leaves room for sanitizer builds on a busy machine (the indexer then took 13 s to
  // read 1,755 changes).
  EXPECT_LT(to_exit, absl::Seconds(30));
  const std::string log0 = ReadFile(work + "/logs/worker-0.log");
  EXPECT_TRUE(absl::StrContains(log0, "left the coordinator")) << log0;
  EXPECT_TRUE(absl::StrContains(log0, "until the indexers have read it")) << log0;
  EXPECT_TRUE(absl::StrContains(log0, "exited cleanly"));
  std::printf("[figures] worker-0 exited %.2fs after SIGTERM\n", absl::ToDoubleSeconds(to_exit));

  // The coordinator removed it and worker-1 crawls everything.
  auto after = cluster.Status();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(FindWorker(*after, "worker-0"), nullptr) << after->DebugString();
  ASSERT_TRUE(cluster.WaitUntilCrawled(1, absl::Minutes(3)).ok());
  auto done = cluster.Status();
  ASSERT_TRUE(done.ok());
  for (const auto& r : done->repositories()) {
    EXPECT_EQ(r.phase(), v1::REPO_PHASE_IDLE) << r.repo_slug();
    EXPECT_GE(r.crawls_completed(), 1) << r.repo_slug();
  }

  // Per-token status: the fingerprint, never the token.
  const std::string fp = crawler::TokenFingerprint(kSecret);
  const std::string text =
      RunCli({"status", "--coordinator", cluster.coordinator_address()}, work + "/status.txt");
  EXPECT_TRUE(absl::StrContains(text, "tokens\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, fp)) << text;
  bool row = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    row = row || (absl::StrContains(line, fp) && absl::StrContains(line, "worker-1") &&
                  absl::StrContains(line, "github") && absl::StrContains(line, " in "));
  }
  EXPECT_TRUE(row) << "no tokens row for worker-1 with a reset 'in ...':\n" << text;
  const std::string json = RunCli(
      {"status", "--json", "--coordinator", cluster.coordinator_address()}, work + "/status.json");
  EXPECT_TRUE(absl::StrContains(json, "\"token_fingerprint\":\"" + fp + "\"")) << json;
  EXPECT_FALSE(absl::StrContains(text, kSecret));
  EXPECT_FALSE(absl::StrContains(json, kSecret));

  // `issuescope drain worker-1`: it holds no lease, so it exits 0 by itself.
  const std::string drained =
      RunCli({"drain", "worker-1", "--coordinator", cluster.coordinator_address()},
             work + "/drain.txt");
  EXPECT_TRUE(absl::StrContains(drained, "worker-1")) << drained;
  ASSERT_TRUE(cluster.worker(1)->Wait(absl::Seconds(15), &wait_status)) << "worker-1 kept running";
  EXPECT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) << wait_status;
  const std::string log1 = ReadFile(work + "/logs/worker-1.log");
  EXPECT_TRUE(absl::StrContains(log1, "drained by the coordinator")) << log1;
  EXPECT_EQ(log1.find("registering again"), std::string::npos) << log1;

  cluster.Stop();
  // No log of any process holds the token.
  for (const auto& entry : std::filesystem::directory_iterator(work + "/logs")) {
    EXPECT_FALSE(absl::StrContains(ReadFile(entry.path().string()), kSecret))
        << entry.path() << " contains the token";
  }
  if (!::testing::Test::HasFailure()) std::filesystem::remove_all(work);
}

TEST(ControlPlane, RogueClientsChangeNothingAndTokensStayWithTheirApi) {
  setenv("CTL_E2E_TOKEN", kSecret, 1);
  const std::string work = MakeTempDir("issuescope-ctl-rogue");
  // A listener standing in for a host an attacker controls: it records every request's
  // Authorization header.
  httplib::Server trap;
  std::mutex mu;
  std::vector<std::string> seen;
  trap.Get(".*", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mu);
    seen.push_back(req.path + " authorization=" + req.get_header_value("Authorization"));
    res.set_content("{}", "application/json");
  });
  const int trap_port = trap.bind_to_any_port("127.0.0.1");
  ASSERT_GT(trap_port, 0);
  std::thread trap_thread([&] { trap.listen_after_bind(); });

  cli::ClusterOptions options;
  options.bin_dir = ISSUESCOPE_BIN_DIR;
  options.work_dir = work;
  options.workers = 1;
  options.token_env = "CTL_E2E_TOKEN";
  options.simulator_args = {"--repos=1", "--issues-per-repo=20", "--seed=3"};
  auto started = cli::Cluster::Start(options);
  ASSERT_TRUE(started.ok()) << started.status();
  cli::Cluster& cluster = **started;
  ASSERT_TRUE(cluster.AddSimulatorRepositories().ok());
  ASSERT_TRUE(cluster.WaitUntilCrawled(1, absl::Minutes(2)).ok());

  // The rogue: no credentials, or a wrong one.
  for (const std::string& authorization : {std::string(), std::string("Bearer guess")}) {
    SCOPED_TRACE(authorization.empty() ? "no credential" : authorization);
    auto rogue = v1::Coordinator::NewStub(
        grpc::CreateChannel(cluster.coordinator_address(), grpc::InsecureChannelCredentials()));
    auto ctx = [&] {
      auto c = std::make_unique<grpc::ClientContext>();
      c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      if (!authorization.empty()) c->AddMetadata("authorization", authorization);
      return c;
    };
    v1::AddRepositoriesRequest add;
    v1::RepositorySpec* spec = add.add_repositories();
    spec->mutable_repo()->set_tracker(v1::TRACKER_GITHUB);
    spec->mutable_repo()->set_owner("octo");
    spec->mutable_repo()->set_name("stolen");
    spec->mutable_repo()->set_api_url(absl::StrCat("http://127.0.0.1:", trap_port));
    v1::AddRepositoriesResponse added;
    EXPECT_EQ(rogue->AddRepositories(ctx().get(), add, &added).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
    v1::RegisterWorkerRequest reg;
    reg.set_worker_id("rogue");
    reg.set_store_address("127.0.0.1:1");
    reg.set_capacity(64);
    v1::RegisterWorkerResponse registered;
    EXPECT_EQ(rogue->RegisterWorker(ctx().get(), reg, &registered).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
    v1::DrainWorkerRequest leave;
    leave.set_worker_id("worker-0");
    v1::DrainWorkerResponse left;
    EXPECT_EQ(rogue->LeaveWorker(ctx().get(), leave, &left).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(rogue->DrainWorker(ctx().get(), leave, &left).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
    v1::ReportProgressRequest report;
    report.set_worker_id("worker-0");
    report.mutable_lease()->set_repo("github:octo/stolen");
    report.set_done(true);
    v1::ReportProgressResponse reported;
    EXPECT_EQ(rogue->ReportProgress(ctx().get(), report, &reported).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
    v1::GetStatusResponse status;
    EXPECT_EQ(rogue->GetStatus(ctx().get(), v1::GetStatusRequest(), &status).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
  auto status = cluster.Status();
  ASSERT_TRUE(status.ok()) << status.status();
  ASSERT_EQ(status->workers_size(), 1) << status->DebugString();
  EXPECT_EQ(status->workers(0).worker_id(), "worker-0");
  EXPECT_FALSE(status->workers(0).draining());
  for (const auto& r : status->repositories()) EXPECT_NE(r.repo().name(), "stolen");

  // An admin (with the admin token) adds a repository whose API is the trap: the worker, which
  // holds a token for the simulator's API only, refuses the lease before any request.
  {
    v1::AddRepositoriesRequest add;
    v1::RepositorySpec* spec = add.add_repositories();
    spec->mutable_repo()->set_tracker(v1::TRACKER_GITHUB);
    spec->mutable_repo()->set_owner("octo");
    spec->mutable_repo()->set_name("elsewhere");
    spec->mutable_repo()->set_api_url(absl::StrCat("http://127.0.0.1:", trap_port));
    v1::AddRepositoriesResponse added;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    ASSERT_TRUE(cluster.coordinator_stub().AddRepositories(&ctx, add, &added).ok());
  }
  std::string last_error;
  for (int i = 0; i < 200 && last_error.empty(); ++i) {
    auto now = cluster.Status();
    ASSERT_TRUE(now.ok());
    for (const auto& r : now->repositories()) {
      if (r.repo().name() == "elsewhere") last_error = r.last_error();
    }
    if (last_error.empty()) absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_TRUE(absl::StrContains(last_error, "not this worker's API")) << last_error;
  EXPECT_FALSE(absl::StrContains(last_error, kSecret));
  cluster.Stop();
  trap.stop();
  trap_thread.join();
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_TRUE(seen.empty()) << "the trap was called: " << seen.front();
  }
  for (const auto& entry : std::filesystem::directory_iterator(work + "/logs")) {
    EXPECT_FALSE(absl::StrContains(ReadFile(entry.path().string()), kSecret)) << entry.path();
  }
  if (!::testing::Test::HasFailure()) std::filesystem::remove_all(work);
}

TEST(ControlPlane, WorkerAndIndexerTalkToATlsCoordinator) {
  if (!Shell("command -v openssl >/dev/null 2>&1")) GTEST_SKIP() << "no openssl command";
  const std::string work = MakeTempDir("issuescope-ctl-tls");
  const std::string cert = work + "/cert.pem", key = work + "/key.pem";
  ASSERT_TRUE(Shell("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost "
                    "-addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout " +
                    key + " -out " + cert + " >/dev/null 2>&1"));
  auto coordinator = Subprocess::Start(
      {Bin("issuescope-coordinator"), "--listen=127.0.0.1:0", "--port-file=" + work + "/c.port",
       "--data=" + work + "/coordinator", "--tls-cert=" + cert, "--tls-key=" + key,
       "--heartbeat-ms=200", "--worker-timeout-ms=2000", "--lease-ttl-ms=3000"},
      work + "/coordinator.log");
  ASSERT_TRUE(coordinator.ok()) << coordinator.status();
  auto port = WaitForPortFile(work + "/c.port", absl::Seconds(30), coordinator->get());
  ASSERT_TRUE(port.ok()) << port.status() << ReadFile(work + "/coordinator.log");
  const std::string address = absl::StrCat("localhost:", *port);

  // A bad --tls-ca is refused with a clear message and exit code 2.
  auto bad = Subprocess::Start({Bin("issuescope-crawler"), "--data=" + work + "/bad",
                                "--coordinator=" + address, "--tls-ca=" + work + "/none.pem"},
                               work + "/bad.log");
  ASSERT_TRUE(bad.ok());
  int bad_status = 0;
  ASSERT_TRUE((*bad)->Wait(absl::Seconds(20), &bad_status));
  EXPECT_TRUE(WIFEXITED(bad_status) && WEXITSTATUS(bad_status) == 2);
  EXPECT_TRUE(absl::StrContains(ReadFile(work + "/bad.log"), "--tls-ca"));

  auto worker = Subprocess::Start(
      {Bin("issuescope-crawler"), "--id=tls-worker", "--listen=127.0.0.1:0", "--data=" + work + "/worker",
       "--coordinator=" + address, "--tls-ca=" + cert, "--port-file=" + work + "/w.port"},
      work + "/worker.log");
  ASSERT_TRUE(worker.ok());
  auto indexer = Subprocess::Start({Bin("issuescope-indexer"), "--index=" + work + "/index",
                                    "--coordinator=" + address, "--tls-ca=" + cert},
                                   work + "/indexer.log");
  ASSERT_TRUE(indexer.ok());

  auto channel = CreateCoordinatorChannel(address, ClientTlsFiles{.ca = cert});
  ASSERT_TRUE(channel.ok()) << channel.status();
  auto stub = v1::Coordinator::NewStub(*channel);
  auto status_now = [&]() {
    v1::GetStatusResponse status;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Status s = stub->GetStatus(&ctx, v1::GetStatusRequest(), &status);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return status;
  };
  absl::Time first_beat = absl::InfinitePast();
  for (int i = 0; i < 100 && first_beat == absl::InfinitePast(); ++i) {
    const v1::GetStatusResponse status = status_now();
    const v1::WorkerStatus* w = FindWorker(status, "tls-worker");
    if (w != nullptr && w->alive()) first_beat = FromProto(w->last_heartbeat());
    if (first_beat == absl::InfinitePast()) absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_NE(first_beat, absl::InfinitePast()) << "the worker never registered over TLS\n"
                                              << ReadFile(work + "/worker.log");
  absl::SleepFor(absl::Seconds(1));
  const v1::GetStatusResponse later = status_now();
  const v1::WorkerStatus* w = FindWorker(later, "tls-worker");
  ASSERT_NE(w, nullptr);
  EXPECT_TRUE(w->alive());
  EXPECT_GT(FromProto(w->last_heartbeat()), first_beat) << "no heartbeat over TLS";
  EXPECT_TRUE((*indexer)->Running());
  const std::string indexer_log = ReadFile(work + "/indexer.log");
  EXPECT_FALSE(absl::StrContains(indexer_log, "polling the coordinator failed")) << indexer_log;
  EXPECT_FALSE(absl::StrContains(ReadFile(work + "/worker.log"), "failed"))
      << ReadFile(work + "/worker.log");
  EXPECT_EQ((*worker)->Stop(), "exit 0");
  (*indexer)->Stop();
  (*coordinator)->Stop();
  if (!::testing::Test::HasFailure()) std::filesystem::remove_all(work);
}

// A coordinator with --tls-client-ca: the worker whose certificate names its --id registers and
// heartbeats, the indexer reads status with its own certificate, and a worker presenting w1's
// certificate under the id w2 is refused for good: it exits 2 saying which names the
// certificate holds, rather than retrying.
TEST(ControlPlane, WorkersActOnlyAsTheIdTheirCertificateNames) {
  if (!HasOpenssl()) GTEST_SKIP() << "no openssl command";
  const std::string work = MakeTempDir("issuescope-ctl-mtls");
  auto certs = MakeTestCertificates(work + "/pki");
  ASSERT_TRUE(certs.ok()) << certs.status();
  auto coordinator = Subprocess::Start(
      {Bin("issuescope-coordinator"), "--listen=127.0.0.1:0", "--port-file=" + work + "/c.port",
       "--data=" + work + "/coordinator", "--tls-cert=" + certs->server_cert,
       "--tls-key=" + certs->server_key, "--tls-client-ca=" + certs->ca, "--heartbeat-ms=200"},
      work + "/coordinator.log");
  ASSERT_TRUE(coordinator.ok()) << coordinator.status();
  auto port = WaitForPortFile(work + "/c.port", absl::Seconds(30), coordinator->get());
  ASSERT_TRUE(port.ok()) << port.status() << ReadFile(work + "/coordinator.log");
  const std::string address = absl::StrCat("localhost:", *port);
  auto worker_args = [&](const std::string& id) {
    return std::vector<std::string>{
        Bin("issuescope-crawler"), "--id=" + id, "--listen=127.0.0.1:0",
        "--data=" + work + "/" + id, "--coordinator=" + address, "--tls-ca=" + certs->ca,
        "--coordinator-tls-cert=" + certs->worker1_cert,
        "--coordinator-tls-key=" + certs->worker1_key};
  };
  auto impostor = Subprocess::Start(worker_args("w2"), work + "/w2.log");
  ASSERT_TRUE(impostor.ok());
  int impostor_status = 0;
  ASSERT_TRUE((*impostor)->Wait(absl::Seconds(30), &impostor_status))
      << "a refused worker must exit, not retry\n" << ReadFile(work + "/w2.log");
  EXPECT_TRUE(WIFEXITED(impostor_status) && WEXITSTATUS(impostor_status) == 2);
  const std::string impostor_log = ReadFile(work + "/w2.log");
  EXPECT_TRUE(absl::StrContains(impostor_log, "names w1")) << impostor_log;
  EXPECT_TRUE(absl::StrContains(impostor_log, "'w2'")) << impostor_log;

  auto worker = Subprocess::Start(worker_args("w1"), work + "/w1.log");
  ASSERT_TRUE(worker.ok());
  auto indexer = Subprocess::Start(
      {Bin("issuescope-indexer"), "--index=" + work + "/index", "--coordinator=" + address,
       "--tls-ca=" + certs->ca, "--tls-cert=" + certs->client_cert,
       "--tls-key=" + certs->client_key},
      work + "/indexer.log");
  ASSERT_TRUE(indexer.ok());
  ClientTlsFiles tls;
  tls.ca = certs->ca;
  tls.cert = certs->client_cert;
  tls.key = certs->client_key;
  auto channel = CreateCoordinatorChannel(address, tls);
  ASSERT_TRUE(channel.ok()) << channel.status();
  auto stub = v1::Coordinator::NewStub(*channel);
  bool alive = false;
  for (int i = 0; i < 100 && !alive; ++i) {
    v1::GetStatusResponse status;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Status s = stub->GetStatus(&ctx, v1::GetStatusRequest(), &status);
    ASSERT_TRUE(s.ok()) << s.error_message();
    const v1::WorkerStatus* w = FindWorker(status, "w1");
    alive = w != nullptr && w->alive();
    EXPECT_EQ(FindWorker(status, "w2"), nullptr) << "the impostor was registered";
    if (!alive) absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_TRUE(alive) << "w1 never registered with its certificate\n" << ReadFile(work + "/w1.log");
  // The indexer reports its progress under its --id ("indexer", the name its certificate holds).
  bool reported = false;
  for (int i = 0; i < 100 && !reported; ++i) {
    v1::GetStatusResponse status;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    ASSERT_TRUE(stub->GetStatus(&ctx, v1::GetStatusRequest(), &status).ok());
    for (const std::string& id : status.active_indexers()) reported |= id == "indexer";
    if (!reported) absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_TRUE(reported) << "the indexer's ReportIndexProgress never arrived\n"
                        << ReadFile(work + "/indexer.log");
  absl::SleepFor(absl::Seconds(1));
  EXPECT_TRUE((*indexer)->Running());
  const std::string indexer_log = ReadFile(work + "/indexer.log");
  EXPECT_FALSE(absl::StrContains(indexer_log, "polling the coordinator failed")) << indexer_log;
  EXPECT_TRUE(absl::StrContains(ReadFile(work + "/coordinator.log"), "client certificate naming"));
  EXPECT_EQ((*worker)->Stop(), "exit 0");
  (*indexer)->Stop();
  (*coordinator)->Stop();
  if (!::testing::Test::HasFailure()) std::filesystem::remove_all(work);
}

TEST(ControlPlane, IndexerFollowsATlsStoreAtTheAddressTheWorkerCalledFrom) {
  if (!HasOpenssl()) GTEST_SKIP() << "no openssl command";
  const std::string work = MakeTempDir("issuescope-ctl-store-tls");
  auto certs = MakeTestCertificates(work + "/pki");
  ASSERT_TRUE(certs.ok()) << certs.status();
  auto coordinator = Subprocess::Start(
      {Bin("issuescope-coordinator"), "--listen=127.0.0.1:0", "--port-file=" + work + "/c.port",
       "--data=" + work + "/coordinator", "--heartbeat-ms=200"},
      work + "/coordinator.log");
  ASSERT_TRUE(coordinator.ok()) << coordinator.status();
  auto port = WaitForPortFile(work + "/c.port", absl::Seconds(30), coordinator->get());
  ASSERT_TRUE(port.ok()) << port.status() << ReadFile(work + "/coordinator.log");
  const std::string address = absl::StrCat("127.0.0.1:", *port);

  // The worker listens on every interface, so it registers ":PORT" and the coordinator fills in
  // the host it called from; its store serves TLS to clients with a certificate only.
  auto worker = Subprocess::Start(
      {Bin("issuescope-crawler"), "--id=tls-store", "--listen=0.0.0.0:0",
       "--port-file=" + work + "/w.port", "--data=" + work + "/worker", "--coordinator=" + address,
       "--tls-cert=" + certs->server_cert, "--tls-key=" + certs->server_key,
       "--tls-client-ca=" + certs->ca, "--drain-timeout-s=0"},
      work + "/worker.log");
  ASSERT_TRUE(worker.ok());
  auto store_port = WaitForPortFile(work + "/w.port", absl::Seconds(30), worker->get());
  ASSERT_TRUE(store_port.ok()) << store_port.status() << ReadFile(work + "/worker.log");
  const std::string store_address = absl::StrCat("127.0.0.1:", *store_port);

  auto channel = CreateCoordinatorChannel(address, ClientTlsFiles{});
  ASSERT_TRUE(channel.ok()) << channel.status();
  auto stub = v1::Coordinator::NewStub(*channel);
  std::string listed, store_id;
  for (int i = 0; i < 100 && listed.empty(); ++i) {
    v1::GetStatusResponse status;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    ASSERT_TRUE(stub->GetStatus(&ctx, v1::GetStatusRequest(), &status).ok());
    if (const v1::WorkerStatus* w = FindWorker(status, "tls-store"); w != nullptr) {
      listed = w->store_address();
      store_id = w->store_id();
    }
    if (listed.empty()) absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_EQ(listed, store_address) << ReadFile(work + "/worker.log");

  // The indexer follows it over TLS with its client certificate: it reaches the store and is
  // caught up with its (empty) feed.
  auto indexer = Subprocess::Start(
      {Bin("issuescope-indexer"), "--index=" + work + "/index", "--coordinator=" + address,
       "--store-tls-ca=" + certs->ca, "--store-tls-cert=" + certs->client_cert,
       "--store-tls-key=" + certs->client_key, "--stats-interval=1", "--no-tags"},
      work + "/indexer.log");
  ASSERT_TRUE(indexer.ok());
  const std::string following =
      absl::StrCat(store_address, " id=", store_id, " seq=0 lag=0 caught-up");
  bool caught_up = false;
  for (int i = 0; i < 300 && !caught_up; ++i) {
    caught_up = absl::StrContains(ReadFile(work + "/indexer.log"), following);
    if (!caught_up) absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_TRUE(caught_up) << "no '" << following << "' in\n" << ReadFile(work + "/indexer.log");
  EXPECT_TRUE((*indexer)->Running());
  (*indexer)->Stop();
  EXPECT_EQ((*worker)->Stop(), "exit 0");
  (*coordinator)->Stop();
  if (!::testing::Test::HasFailure()) std::filesystem::remove_all(work);
}

// SharedBudgetCrawl: two workers crawl four repositories of a simulator whose budget is
// kBudget requests per 4 s, both on one account (the same token, or anonymous requests from one
// host), and must never send a request over the budget.
void SharedBudgetCrawl(bool anonymous) {
  const std::string work = MakeTempDir("issuescope-ctl-budget");
  constexpr int kBudget = 45;
  auto sim = Subprocess::Start(
      {Bin("issuescope-simulator"), "--repo=octo/a:100", "--repo=octo/b:100", "--repo=octo/c:100",
       "--repo=octo/d:100", "--comments-per-issue=1", "--seed=11", "--threads=8",
       absl::StrCat("--budget=", kBudget), "--budget-window-s=4", "--latency-ms=20",
       "--port-file=" + work + "/sim.port"},
      work + "/sim.log");
  ASSERT_TRUE(sim.ok()) << sim.status();
  auto sim_port = WaitForPortFile(work + "/sim.port", absl::Seconds(30), sim->get());
  ASSERT_TRUE(sim_port.ok()) << sim_port.status();
  const std::string base = absl::StrCat("http://127.0.0.1:", *sim_port);

  // The coordinator, in process, on loopback.
  std::unique_ptr<rocksdb::Env> coordinator_env(rocksdb::NewMemEnv(rocksdb::Env::Default()));
  coordinator::CoordinatorOptions co;
  co.heartbeat_interval = absl::Milliseconds(100);
  co.lease_ttl = absl::Seconds(3);
  co.worker_timeout = absl::Seconds(2);
  co.account_reserve = 0;
  co.env = coordinator_env.get();
  co.sync_writes = false;
  auto core = coordinator::CoordinatorCore::Open("/coordinator", co, Clock::Real());
  ASSERT_TRUE(core.ok()) << core.status();
  coordinator::CoordinatorService service(core->get(),
                                          coordinator::AccessOptions{"", true, ""});
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  v1::AddRepositoriesRequest add;
  for (const char* name : {"a", "b", "c", "d"}) {
    v1::RepositorySpec* spec = add.add_repositories();
    spec->mutable_repo()->set_tracker(v1::TRACKER_GITHUB);
    spec->mutable_repo()->set_owner("octo");
    spec->mutable_repo()->set_name(name);
    spec->mutable_repo()->set_api_url(base);
  }
  ASSERT_TRUE((*core)->AddRepositories(add).ok());

  // Two workers, one token of one account each: the same token, so the same budget.
  crawler::CurlTransport transport;
  std::vector<std::unique_ptr<rocksdb::Env>> envs(2);
  std::vector<std::unique_ptr<crawler::IssueStore>> stores(2);
  std::vector<std::unique_ptr<crawler::CrawlerWorker>> workers;
  for (int i = 0; i < 2; ++i) {
    ASSERT_NO_FATAL_FAILURE(crawler::OpenMemStore(&envs[i], &stores[i]));
    crawler::TokenPoolOptions pool_options;
    pool_options.max_wait = absl::Minutes(2);
    crawler::WorkerOptions wo;
    wo.worker_id = absl::StrCat("budget-", i);
    wo.store_address = absl::StrCat("127.0.0.1:", 7100 + i);
    wo.capacity = 2;
    wo.poll_interval = absl::Milliseconds(50);
    wo.crawler.per_page = 20;
    wo.crawler.initial_backoff = absl::Milliseconds(50);
    wo.crawler.max_backoff = absl::Seconds(1);
    wo.crawler.api_urls[v1::TRACKER_GITHUB] = base;  // the API the token is for
    // What CrawlerWorker makes of a token, or of none (crawler/worker.cc).
    const crawler::PoolToken token =
        anonymous ? crawler::PoolToken{crawler::AnonymousAccount("shared-host"), ""}
                  : crawler::PoolToken{"shared", kSecret};
    wo.crawler.pools[v1::TRACKER_GITHUB] = std::make_shared<crawler::TokenPool>(
        v1::TRACKER_GITHUB, std::vector<crawler::PoolToken>{token}, Clock::Real(), pool_options);
    workers.push_back(std::make_unique<crawler::CrawlerWorker>(
        wo, grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()),
        &transport, stores[i].get(), Clock::Real()));
    ASSERT_TRUE(workers.back()->Start().ok());
  }

  int most_sharers = 0;
  bool complete = false;
  const absl::Time start = absl::Now();
  while (!complete && absl::Now() - start < absl::Minutes(3)) {
    auto status = (*core)->GetStatus(v1::GetStatusRequest());
    ASSERT_TRUE(status.ok());
    complete = true;
    for (const auto& r : status->repositories()) complete = complete && r.crawls_completed() >= 1;
    for (const auto& a : status->accounts()) most_sharers = std::max(most_sharers, a.workers_size());
    if (!complete) absl::SleepFor(absl::Milliseconds(100));
  }
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  for (auto& w : workers) w->Stop();
  server->Shutdown();
  EXPECT_TRUE(complete) << "not every repository was crawled";
  EXPECT_EQ(most_sharers, 2) << "both workers should report the shared account";

  SimulatorAdmin admin(base);
  const nlohmann::json stats = admin.Get("/_sim/stats");
  const int64_t requests = stats.at("requests").get<int64_t>();
  std::printf("[figures] 2 workers, %s, budget %d per 4 s: %lld requests, "
              "over_budget %lld, rate_limited %lld, %.1fs\n",
              anonymous ? "anonymous from one host" : "1 shared token", kBudget, static_cast<long long>(requests),
              static_cast<long long>(stats.at("over_budget").get<int64_t>()),
              static_cast<long long>(stats.at("rate_limited").get<int64_t>()), seconds);
  EXPECT_GT(requests, kBudget) << "the crawl should outlast one budget window";
  EXPECT_EQ(stats.at("over_budget").get<int64_t>(), 0);
  (*sim)->Stop();
  if (!::testing::Test::HasFailure()) std::filesystem::remove_all(work);
}

TEST(ControlPlane, WorkersSharingAnAccountNeverOverspendIt) { SharedBudgetCrawl(false); }

// Issue 16, item 12: anonymous workers left their budget out of heartbeats, and two of them each
// spent the whole window.
TEST(ControlPlane, AnonymousWorkersOnOneHostNeverOverspendTheirAddress) { SharedBudgetCrawl(true); }

}  // namespace
}  // namespace issuescope::e2e

// The admin bearer token over gRPC (UNAUTHENTICATED without or with a wrong token, worker calls
// and GetStatus open), TLS on loopback with a self-signed certificate made by the openssl
// command-line tool in the test, and the store address of a worker that leaves its host to the
// coordinator (":PORT", completed from the connection's peer).
#include "coordinator/security.h"

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/env_token.h"
#include "common/grpc_channel.h"
#include "common/tls.h"
#include "coordinator/coordinator_service.h"
#include "gtest/gtest.h"
#include "tests/common/test_certificates.h"
#include "tests/coordinator/core_fixture.h"

namespace issuescope::coordinator::testing {
namespace {

constexpr char kToken[] = "s3cret-admin-token";
constexpr char kClusterToken[] = "cluster-t0ken";

TEST(SecurityTest, ConstantTimeEquals) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abcd"));
  EXPECT_FALSE(ConstantTimeEquals("", "a"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
}

TEST(SecurityTest, TokenFromEnvironment) {
  ::setenv("ISSUESCOPE_TEST_TOKEN", "  tok \n", 1);
  auto token = TokenFromEnvironment("ISSUESCOPE_TEST_TOKEN", "--admin-token-env");
  ASSERT_TRUE(token.ok());
  EXPECT_EQ(*token, "tok");
  auto none = TokenFromEnvironment("", "--admin-token-env");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, "");
  ::setenv("ISSUESCOPE_TEST_TOKEN", " \t", 1);
  auto blank = TokenFromEnvironment("ISSUESCOPE_TEST_TOKEN", "--admin-token-env");
  EXPECT_EQ(blank.status().code(), absl::StatusCode::kInvalidArgument);
  ::unsetenv("ISSUESCOPE_TEST_TOKEN");
  auto missing = TokenFromEnvironment("ISSUESCOPE_TEST_TOKEN", "--admin-token-env");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(missing.status().message(),
            "--admin-token-env: environment variable ISSUESCOPE_TEST_TOKEN is unset or empty");
}

class AuthTest : public CoreTest {
 protected:
  void SetUp() override {
    CoreTest::SetUp();
    service_ = std::make_unique<CoordinatorService>(
        core_.get(), AccessOptions{kToken, false, kClusterToken});
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = v1::Coordinator::NewStub(server_->InProcessChannel(grpc::ChannelArguments()));
  }
  void TearDown() override { server_->Shutdown(); }

  grpc::Status Trigger(const std::string& authorization) {
    grpc::ClientContext ctx;
    if (!authorization.empty()) ctx.AddMetadata("authorization", authorization);
    v1::TriggerCrawlResponse resp;
    return stub_->TriggerCrawl(&ctx, v1::TriggerCrawlRequest(), &resp);
  }

  std::unique_ptr<CoordinatorService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::Coordinator::Stub> stub_;
};

TEST_F(AuthTest, AdminCallsNeedTheBearerToken) {
  struct Case {
    std::string authorization;
    grpc::StatusCode want;
  };
  const Case cases[] = {{"", grpc::StatusCode::UNAUTHENTICATED},
                        {"Bearer wrong", grpc::StatusCode::UNAUTHENTICATED},
                        {std::string("Basic ") + kToken, grpc::StatusCode::UNAUTHENTICATED},
                        {std::string("Bearer ") + kToken + "x", grpc::StatusCode::UNAUTHENTICATED},
                        {std::string("Bearer ") + kToken, grpc::StatusCode::OK},
                        {std::string("bearer ") + kToken, grpc::StatusCode::OK}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.authorization);
    grpc::Status s = Trigger(c.authorization);
    EXPECT_EQ(s.error_code(), c.want) << s.error_message();
    EXPECT_EQ(s.error_message().find(kToken), std::string::npos) << "the token is never echoed";
  }
  // Every admin call is guarded.
  grpc::ClientContext add_ctx, remove_ctx, pause_ctx, resume_ctx, drain_ctx;
  v1::AddRepositoriesRequest add;
  *add.add_repositories() = Spec("o", "r");
  v1::AddRepositoriesResponse added;
  EXPECT_EQ(stub_->AddRepositories(&add_ctx, add, &added).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  v1::RemoveRepositoriesResponse removed;
  EXPECT_EQ(stub_->RemoveRepositories(&remove_ctx, v1::RemoveRepositoriesRequest(), &removed)
                .error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  v1::PauseRepositoriesResponse paused;
  EXPECT_EQ(
      stub_->PauseRepositories(&pause_ctx, v1::PauseRepositoriesRequest(), &paused).error_code(),
      grpc::StatusCode::UNAUTHENTICATED);
  v1::ResumeRepositoriesResponse resumed;
  EXPECT_EQ(stub_->ResumeRepositories(&resume_ctx, v1::ResumeRepositoriesRequest(), &resumed)
                .error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  v1::DrainWorkerRequest drain;
  drain.set_worker_id("w");
  v1::DrainWorkerResponse drained;
  EXPECT_EQ(stub_->DrainWorker(&drain_ctx, drain, &drained).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Status().repositories_size(), 0) << "nothing changed";

  // Worker calls and GetStatus need the cluster token (or the admin token); a worker may leave
  // by itself.
  v1::RegisterWorkerRequest reg;
  reg.set_worker_id("w");
  reg.set_store_address("127.0.0.1:5000");
  v1::RegisterWorkerResponse registered;
  for (const std::string& authorization :
       {std::string(), std::string("Bearer wrong"), std::string("Bearer ") + kClusterToken + "x"}) {
    SCOPED_TRACE(authorization);
    grpc::ClientContext rogue_reg, rogue_status, rogue_leave, rogue_beat;
    for (grpc::ClientContext* ctx : {&rogue_reg, &rogue_status, &rogue_leave, &rogue_beat}) {
      if (!authorization.empty()) ctx->AddMetadata("authorization", authorization);
    }
    grpc::Status s = stub_->RegisterWorker(&rogue_reg, reg, &registered);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << s.error_message();
    EXPECT_NE(s.error_message().find("cluster token"), std::string::npos) << s.error_message();
    v1::GetStatusResponse status;
    EXPECT_EQ(stub_->GetStatus(&rogue_status, v1::GetStatusRequest(), &status).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(stub_->LeaveWorker(&rogue_leave, drain, &drained).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
    v1::HeartbeatRequest beat;
    beat.set_worker_id("w");
    v1::HeartbeatResponse beaten;
    EXPECT_EQ(stub_->Heartbeat(&rogue_beat, beat, &beaten).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
  EXPECT_EQ(Status().workers_size(), 0) << "no rogue registration";
  grpc::ClientContext reg_ctx, status_ctx, admin_status_ctx, leave_ctx;
  reg_ctx.AddMetadata("authorization", std::string("Bearer ") + kClusterToken);
  status_ctx.AddMetadata("authorization", std::string("Bearer ") + kClusterToken);
  admin_status_ctx.AddMetadata("authorization", std::string("Bearer ") + kToken);
  leave_ctx.AddMetadata("authorization", std::string("Bearer ") + kClusterToken);
  EXPECT_TRUE(stub_->RegisterWorker(&reg_ctx, reg, &registered).ok());
  v1::GetStatusResponse status;
  EXPECT_TRUE(stub_->GetStatus(&status_ctx, v1::GetStatusRequest(), &status).ok());
  EXPECT_TRUE(stub_->GetStatus(&admin_status_ctx, v1::GetStatusRequest(), &status).ok());
  EXPECT_EQ(status.workers_size(), 1);
  EXPECT_TRUE(stub_->LeaveWorker(&leave_ctx, drain, &drained).ok());
  EXPECT_TRUE(drained.removed());
  // The cluster token is not an admin token.
  EXPECT_EQ(Trigger(std::string("Bearer ") + kClusterToken).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

// Without an admin token, admin calls are refused unless the coordinator was started with
// --insecure-admin; without a cluster token, worker calls are open.
TEST_F(CoreTest, AdminCallsAreClosedWithoutATokenUnlessInsecure) {
  for (bool insecure : {false, true}) {
    SCOPED_TRACE(insecure ? "insecure_admin" : "default");
    CoordinatorService service(core_.get(), AccessOptions{"", insecure, ""});
    grpc::ServerBuilder builder;
    builder.RegisterService(&service);
    std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
    ASSERT_NE(server, nullptr);
    auto stub = v1::Coordinator::NewStub(server->InProcessChannel(grpc::ChannelArguments()));
    grpc::ClientContext add_ctx, drain_ctx, reg_ctx;
    v1::AddRepositoriesRequest add;
    *add.add_repositories() = Spec("o", insecure ? "open" : "closed");
    v1::AddRepositoriesResponse added;
    grpc::Status s = stub->AddRepositories(&add_ctx, add, &added);
    if (insecure) {
      EXPECT_TRUE(s.ok()) << s.error_message();
    } else {
      EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
      EXPECT_NE(s.error_message().find("--admin-token-env"), std::string::npos)
          << s.error_message();
    }
    v1::DrainWorkerRequest drain;
    drain.set_worker_id("w");
    v1::DrainWorkerResponse drained;
    EXPECT_EQ(stub->DrainWorker(&drain_ctx, drain, &drained).ok(), insecure);
    v1::RegisterWorkerRequest reg;
    reg.set_worker_id("w");
    v1::RegisterWorkerResponse registered;
    EXPECT_TRUE(stub->RegisterWorker(&reg_ctx, reg, &registered).ok());
    server->Shutdown();
  }
  EXPECT_EQ(Status().repositories_size(), 1) << "only the insecure coordinator added one";
}

TEST(SecurityTest, LoopbackListenAddresses) {
  EXPECT_TRUE(IsLoopbackListenAddress("127.0.0.1:50050"));
  EXPECT_TRUE(IsLoopbackListenAddress("127.1.2.3:0"));
  EXPECT_TRUE(IsLoopbackListenAddress("localhost:50050"));
  EXPECT_TRUE(IsLoopbackListenAddress("[::1]:50050"));
  EXPECT_FALSE(IsLoopbackListenAddress("0.0.0.0:50050"));
  EXPECT_FALSE(IsLoopbackListenAddress("[::]:50050"));
  EXPECT_FALSE(IsLoopbackListenAddress("10.0.0.5:50050"));
  EXPECT_FALSE(IsLoopbackListenAddress(":50050"));
}

// Shell runs a command; true when it exits 0.
bool Shell(const std::string& command) { return std::system(command.c_str()) == 0; }

TEST_F(CoreTest, ServesTlsWithASelfSignedCertificate) {
  if (!Shell("command -v openssl >/dev/null 2>&1")) GTEST_SKIP() << "no openssl command";
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("issuescope-tls-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string cert = (dir / "cert.pem").string();
  const std::string key = (dir / "key.pem").string();
  ASSERT_TRUE(Shell("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost "
                    "-addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout " +
                    key + " -out " + cert + " >/dev/null 2>&1"));
  // The coordinator's credentials come from common/tls.h, as every listener's.
  ServerTlsFiles tls;
  tls.cert = cert;
  tls.key = key;
  auto credentials = ServerCredentialsFor(tls);
  ASSERT_TRUE(credentials.ok()) << credentials.status();

  CoordinatorService service(core_.get(), AccessOptions{kToken, false, ""});
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", *credentials, &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  ASSERT_GT(port, 0);
  const std::string target = "localhost:" + std::to_string(port);

  auto ca = ChannelCredentialsFor(cert);
  ASSERT_TRUE(ca.ok()) << ca.status();
  auto stub = v1::Coordinator::NewStub(grpc::CreateChannel(target, *ca));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  ctx.AddMetadata("authorization", std::string("Bearer ") + kToken);
  v1::AddRepositoriesRequest add;
  *add.add_repositories() = Spec("o", "r");
  v1::AddRepositoriesResponse added;
  grpc::Status s = stub->AddRepositories(&ctx, add, &added);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(added.added_size(), 1);

  // A plaintext client cannot talk to the TLS port.
  auto plain = v1::Coordinator::NewStub(
      grpc::CreateChannel(target, grpc::InsecureChannelCredentials()));
  grpc::ClientContext plain_ctx;
  plain_ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1::GetStatusResponse status;
  EXPECT_FALSE(plain->GetStatus(&plain_ctx, v1::GetStatusRequest(), &status).ok());
  server->Shutdown();
  std::filesystem::remove_all(dir);
}

// With client certificates required (--tls-client-ca), a worker's calls are bound to the id its
// certificate names: w1's certificate registers, heartbeats and leaves as w1 but not as w2; a
// certificate naming w2 only as a DNS name acts as w2; the indexer's certificate reads status but
// acts as no worker; clients without a certificate, or with one another CA signed, get nothing.
TEST_F(CoreTest, ClientCertificatesBindWorkerCallsToTheirIds) {
  if (!HasOpenssl()) GTEST_SKIP() << "no openssl command";
  const std::string dir = (std::filesystem::temp_directory_path() /
                           ("issuescope-mtls-" + std::to_string(::getpid()))).string();
  auto certs = MakeTestCertificates(dir);
  ASSERT_TRUE(certs.ok()) << certs.status();
  ServerTlsFiles tls;
  tls.cert = certs->server_cert;
  tls.key = certs->server_key;
  tls.client_ca = certs->ca;
  auto credentials = ServerCredentialsFor(tls);
  ASSERT_TRUE(credentials.ok()) << credentials.status();
  AccessOptions access{kToken, false, kClusterToken};
  access.bind_worker_ids = true;
  CoordinatorService service(core_.get(), access);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", *credentials, &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  const std::string target = "localhost:" + std::to_string(port);
  auto stub_for = [&](const std::string& cert, const std::string& key) {
    ClientTlsFiles files;
    files.ca = certs->ca;
    files.cert = cert;
    files.key = key;
    auto channel = CreateCoordinatorChannel(target, files, kClusterToken);
    EXPECT_TRUE(channel.ok()) << channel.status();
    return v1::Coordinator::NewStub(*channel);
  };
  auto deadline = [](grpc::ClientContext* ctx) {
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  };
  auto register_as = [&](v1::Coordinator::Stub* stub, const std::string& id) {
    v1::RegisterWorkerRequest req;
    req.set_worker_id(id);
    req.set_store_address("127.0.0.1:7000");
    req.set_store_id("store-" + id);
    req.set_capacity(2);
    v1::RegisterWorkerResponse resp;
    grpc::ClientContext ctx;
    deadline(&ctx);
    return stub->RegisterWorker(&ctx, req, &resp);
  };
  auto heartbeat_as = [&](v1::Coordinator::Stub* stub, const std::string& id) {
    v1::HeartbeatRequest req;
    req.set_worker_id(id);
    v1::HeartbeatResponse resp;
    grpc::ClientContext ctx;
    deadline(&ctx);
    return stub->Heartbeat(&ctx, req, &resp);
  };
  auto acquire_as = [&](v1::Coordinator::Stub* stub, const std::string& id) {
    v1::AcquireLeasesRequest req;
    req.set_worker_id(id);
    req.set_max_leases(1);
    v1::AcquireLeasesResponse resp;
    grpc::ClientContext ctx;
    deadline(&ctx);
    return stub->AcquireLeases(&ctx, req, &resp);
  };
  auto leave_as = [&](v1::Coordinator::Stub* stub, const std::string& id) {
    v1::DrainWorkerRequest req;
    req.set_worker_id(id);
    v1::DrainWorkerResponse resp;
    grpc::ClientContext ctx;
    deadline(&ctx);
    return stub->LeaveWorker(&ctx, req, &resp);
  };
  auto status_of = [&](v1::Coordinator::Stub* stub) {
    v1::GetStatusResponse resp;
    grpc::ClientContext ctx;
    deadline(&ctx);
    return stub->GetStatus(&ctx, v1::GetStatusRequest(), &resp);
  };

  auto w1 = stub_for(certs->worker1_cert, certs->worker1_key);
  auto w2 = stub_for(certs->worker2_cert, certs->worker2_key);
  auto indexer = stub_for(certs->client_cert, certs->client_key);
  grpc::Status s = register_as(w1.get(), "w1");
  EXPECT_TRUE(s.ok()) << s.error_message();
  s = register_as(w2.get(), "w2");
  EXPECT_TRUE(s.ok()) << "a DNS name in the certificate names the worker: " << s.error_message();
  EXPECT_TRUE(heartbeat_as(w1.get(), "w1").ok());
  EXPECT_TRUE(acquire_as(w1.get(), "w1").ok());

  // w1's certificate cannot stand in for w2 in any worker call.
  s = register_as(w1.get(), "w2");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(s.error_message().find("names w1"), std::string::npos) << s.error_message();
  EXPECT_NE(s.error_message().find("'w2'"), std::string::npos) << s.error_message();
  EXPECT_EQ(heartbeat_as(w1.get(), "w2").error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(acquire_as(w1.get(), "w2").error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(leave_as(w1.get(), "w2").error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(register_as(indexer.get(), "w1").error_code(), grpc::StatusCode::PERMISSION_DENIED);
  // The indexer's certificate (CN "indexer") reads status, as every certified member may.
  s = status_of(indexer.get());
  EXPECT_TRUE(s.ok()) << s.error_message();
  // w2 is still registered and not draining: w1's LeaveWorker for it was refused.
  {
    v1::HeartbeatRequest req;
    req.set_worker_id("w2");
    v1::HeartbeatResponse resp;
    grpc::ClientContext ctx;
    deadline(&ctx);
    ASSERT_TRUE(w2->Heartbeat(&ctx, req, &resp).ok());
    EXPECT_TRUE(resp.known());
    EXPECT_FALSE(resp.draining());
  }
  EXPECT_TRUE(leave_as(w1.get(), "w1").ok());

  // No client certificate, or one another CA signed: the TLS handshake refuses the call.
  auto anonymous = stub_for("", "");
  EXPECT_FALSE(status_of(anonymous.get()).ok());
  EXPECT_FALSE(register_as(anonymous.get(), "w3").ok());
  auto stranger = stub_for(certs->stranger_cert, certs->stranger_key);
  EXPECT_FALSE(register_as(stranger.get(), "stranger").ok());
  server->Shutdown();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace issuescope::coordinator::testing

// CoordinatorService over a real gRPC in-process channel: one worker round trip and an error
// status crossing the wire; and over loopback TCP, a worker that leaves its store's host to the
// coordinator (":PORT") is listed at the address it called from.
#include "coordinator/coordinator_service.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "tests/coordinator/core_fixture.h"

namespace issuescope::coordinator::testing {
namespace {

class ServiceTest : public CoreTest {
 protected:
  void SetUp() override {
    CoreTest::SetUp();
    service_ = std::make_unique<CoordinatorService>(core_.get(),
                                                    AccessOptions{"", true, ""});
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = v1::Coordinator::NewStub(server_->InProcessChannel(grpc::ChannelArguments()));
  }
  void TearDown() override { server_->Shutdown(); }

  std::unique_ptr<CoordinatorService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::Coordinator::Stub> stub_;
};

TEST_F(ServiceTest, WorkerRoundTrip) {
  grpc::ClientContext add_ctx;
  v1::AddRepositoriesRequest add;
  *add.add_repositories() = Spec("a", "b");
  v1::AddRepositoriesResponse added;
  ASSERT_TRUE(stub_->AddRepositories(&add_ctx, add, &added).ok());
  ASSERT_EQ(added.added_size(), 1);

  grpc::ClientContext reg_ctx;
  v1::RegisterWorkerRequest reg;
  reg.set_worker_id("worker-0");
  reg.set_store_address("127.0.0.1:5000");
  v1::RegisterWorkerResponse registered;
  ASSERT_TRUE(stub_->RegisterWorker(&reg_ctx, reg, &registered).ok());
  EXPECT_EQ(registered.lease_ttl_ms(), 15000);

  grpc::ClientContext acq_ctx;
  v1::AcquireLeasesRequest acquire;
  acquire.set_worker_id("worker-0");
  acquire.set_max_leases(1);
  v1::AcquireLeasesResponse leases;
  ASSERT_TRUE(stub_->AcquireLeases(&acq_ctx, acquire, &leases).ok());
  ASSERT_EQ(leases.leases_size(), 1);
  EXPECT_EQ(leases.leases(0).epoch(), 1u);

  grpc::ClientContext rep_ctx;
  auto done = Report("worker-0", leases.leases(0));
  done.set_done(true);
  v1::ReportProgressResponse reported;
  ASSERT_TRUE(stub_->ReportProgress(&rep_ctx, done, &reported).ok());

  grpc::ClientContext stale_ctx;
  grpc::Status stale = stub_->ReportProgress(&stale_ctx, done, &reported);
  EXPECT_EQ(stale.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(stale.error_message().find("stale lease epoch 1 for github:a/b"), std::string::npos);

  grpc::ClientContext status_ctx;
  v1::GetStatusResponse status;
  ASSERT_TRUE(stub_->GetStatus(&status_ctx, v1::GetStatusRequest(), &status).ok());
  ASSERT_EQ(status.repositories_size(), 1);
  EXPECT_EQ(status.repositories(0).phase(), v1::REPO_PHASE_IDLE);
  EXPECT_TRUE(status.quiescent());

  grpc::ClientContext bad_ctx;
  reg.set_worker_id("no spaces allowed");
  grpc::Status bad = stub_->RegisterWorker(&bad_ctx, reg, &registered);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(bad.error_message().find("worker_id"), std::string::npos);
}

TEST_F(CoreTest, StoreAddressWithoutHostTakesTheCallersHost) {
  // One server per address family: a host without IPv6 loopback fails only the second.
  CoordinatorService service(core_.get(), AccessOptions{"", true, ""});
  CoordinatorService service6(core_.get(), AccessOptions{"", true, ""});
  int port4 = 0, port6 = 0;
  auto serve = [](CoordinatorService* s, const std::string& address, int* port) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort(address, grpc::InsecureServerCredentials(), port);
    builder.RegisterService(s);
    return builder.BuildAndStart();
  };
  std::unique_ptr<grpc::Server> server = serve(&service, "127.0.0.1:0", &port4);
  std::unique_ptr<grpc::Server> server6 = serve(&service6, "[::1]:0", &port6);
  ASSERT_NE(server, nullptr);
  ASSERT_GT(port4, 0);

  auto register_worker = [](const std::string& target, const std::string& id,
                            const std::string& address) {
    auto stub = v1::Coordinator::NewStub(
        grpc::CreateChannel(target, grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::RegisterWorkerRequest reg;
    reg.set_worker_id(id);
    reg.set_store_address(address);
    v1::RegisterWorkerResponse registered;
    return stub->RegisterWorker(&ctx, reg, &registered);
  };
  std::map<std::string, std::string> want;
  ASSERT_TRUE(register_worker("127.0.0.1:" + std::to_string(port4), "v4", ":50052").ok());
  want["v4"] = "127.0.0.1:50052";
  ASSERT_TRUE(register_worker("127.0.0.1:" + std::to_string(port4), "named", "w.example:7").ok());
  want["named"] = "w.example:7";
  if (server6 != nullptr && port6 > 0) {  // hosts without IPv6 loopback skip this part
    ASSERT_TRUE(register_worker("[::1]:" + std::to_string(port6), "v6", "[::]:50053").ok());
    want["v6"] = "[::1]:50053";
  }
  // In process, there is no host to take.
  grpc::Status in_process = [&] {
    auto stub = v1::Coordinator::NewStub(server->InProcessChannel(grpc::ChannelArguments()));
    grpc::ClientContext ctx;
    v1::RegisterWorkerRequest reg;
    reg.set_worker_id("inproc");
    reg.set_store_address(":50054");
    v1::RegisterWorkerResponse registered;
    return stub->RegisterWorker(&ctx, reg, &registered);
  }();
  EXPECT_EQ(in_process.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(in_process.error_message().find("--advertise-address"), std::string::npos)
      << in_process.error_message();

  std::map<std::string, std::string> listed;
  const v1::GetStatusResponse status = Status();
  for (const v1::WorkerStatus& w : status.workers()) listed[w.worker_id()] = w.store_address();
  EXPECT_EQ(listed, want);
  server->Shutdown();
  if (server6 != nullptr) server6->Shutdown();
}

}  // namespace
}  // namespace issuescope::coordinator::testing

// CoordinatorService over a real gRPC in-process channel: one worker round trip and an error
// status crossing the wire.
#include "coordinator/coordinator_service.h"

#include <grpcpp/grpcpp.h>

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

}  // namespace
}  // namespace issuescope::coordinator::testing

// CoordinatorService: the gRPC service issuescope.v1.Coordinator, a thin adapter over a
// CoordinatorCore (proto in → core → proto out, absl::Status → grpc::Status through
// common/grpc_status.h). It holds no state of its own besides the admin token: when one is set,
// the admin calls that change state need "authorization: Bearer <token>" metadata
// (UNAUTHENTICATED otherwise; see security.h for which calls and why).
//
// Ownership: the core is not owned and must outlive the service. Thread-safety: as the core
// (fully thread-safe), so any number of gRPC threads may call it.
#pragma once

#include <string>
#include <utility>

#include "coordinator/coordinator_core.h"
#include "issuescope/v1/coordinator.grpc.pb.h"

namespace issuescope::coordinator {

// CoordinatorService serves issuescope.v1.Coordinator from a CoordinatorCore.
class CoordinatorService final : public v1::Coordinator::Service {
 public:
  // CoordinatorService serves `core` (not owned). `admin_token` empty: no token required.
  explicit CoordinatorService(CoordinatorCore* core, std::string admin_token = "")
      : core_(core), admin_token_(std::move(admin_token)) {}

  // Each RPC forwards to the CoordinatorCore method of the same name (see coordinator_core.h
  // for its semantics) and returns the core's status with the same code.

  grpc::Status RegisterWorker(grpc::ServerContext* ctx, const v1::RegisterWorkerRequest* req,
                              v1::RegisterWorkerResponse* resp) override;
  grpc::Status Heartbeat(grpc::ServerContext* ctx, const v1::HeartbeatRequest* req,
                         v1::HeartbeatResponse* resp) override;
  grpc::Status AcquireLeases(grpc::ServerContext* ctx, const v1::AcquireLeasesRequest* req,
                             v1::AcquireLeasesResponse* resp) override;
  grpc::Status ReportProgress(grpc::ServerContext* ctx, const v1::ReportProgressRequest* req,
                              v1::ReportProgressResponse* resp) override;
  grpc::Status ReleaseLease(grpc::ServerContext* ctx, const v1::ReleaseLeaseRequest* req,
                            v1::ReleaseLeaseResponse* resp) override;
  grpc::Status AddRepositories(grpc::ServerContext* ctx, const v1::AddRepositoriesRequest* req,
                               v1::AddRepositoriesResponse* resp) override;
  grpc::Status RemoveRepositories(grpc::ServerContext* ctx,
                                  const v1::RemoveRepositoriesRequest* req,
                                  v1::RemoveRepositoriesResponse* resp) override;
  grpc::Status TriggerCrawl(grpc::ServerContext* ctx, const v1::TriggerCrawlRequest* req,
                            v1::TriggerCrawlResponse* resp) override;
  grpc::Status GetStatus(grpc::ServerContext* ctx, const v1::GetStatusRequest* req,
                         v1::GetStatusResponse* resp) override;
  grpc::Status LeaveWorker(grpc::ServerContext* ctx, const v1::DrainWorkerRequest* req,
                           v1::DrainWorkerResponse* resp) override;
  grpc::Status DrainWorker(grpc::ServerContext* ctx, const v1::DrainWorkerRequest* req,
                           v1::DrainWorkerResponse* resp) override;
  grpc::Status PauseRepositories(grpc::ServerContext* ctx,
                                 const v1::PauseRepositoriesRequest* req,
                                 v1::PauseRepositoriesResponse* resp) override;
  grpc::Status ResumeRepositories(grpc::ServerContext* ctx,
                                  const v1::ResumeRepositoriesRequest* req,
                                  v1::ResumeRepositoriesResponse* resp) override;

 private:
  // Admin checks the bearer token of an admin call.
  grpc::Status Admin(const grpc::ServerContext* ctx, const char* method) const;

  CoordinatorCore* const core_;
  const std::string admin_token_;
};

}  // namespace issuescope::coordinator

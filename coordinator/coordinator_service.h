// CoordinatorService: the gRPC service issuescope.v1.Coordinator, a thin adapter over a
// CoordinatorCore (proto in → core → proto out, absl::Status → grpc::Status through
// common/grpc_status.h). It holds no state of its own besides its credentials (AccessOptions):
// admin calls need the admin token (and are refused when none is configured, unless
// insecure_admin), the workers' calls and GetStatus need the cluster token when one is
// configured; "authorization: Bearer <token>" metadata (security.h says which calls and why).
//
// Ownership: the core is not owned and must outlive the service. Thread-safety: as the core
// (fully thread-safe), so any number of gRPC threads may call it.
#pragma once

#include <string>
#include <utility>

#include "coordinator/coordinator_core.h"
#include "issuescope/v1/coordinator.grpc.pb.h"

namespace issuescope::coordinator {

// AccessOptions are the coordinator's credentials.
struct AccessOptions {
  // The admin token: admin calls need it. Empty: admin calls are refused (PERMISSION_DENIED),
  // unless insecure_admin.
  std::string admin_token;
  // Accept admin calls without a token when none is configured (a trusted network, tests).
  bool insecure_admin = false;
  // The cluster token: the workers' calls (register, heartbeat, leases, progress, leave) and
  // GetStatus need it (or the admin token). Empty: those calls are open.
  std::string cluster_token;
  // Bind worker calls to client certificates (the coordinator's --tls-client-ca): register,
  // heartbeat, acquire, report, release and leave are accepted only when the call's verified
  // client certificate names the request's worker_id (security.h CheckPeerIsWorker), on top of
  // the cluster token. Default: false (any cluster member may act as any worker id).
  bool bind_worker_ids = false;
};

// CoordinatorService serves issuescope.v1.Coordinator from a CoordinatorCore.
class CoordinatorService final : public v1::Coordinator::Service {
 public:
  // CoordinatorService serves `core` (not owned) with the credentials of `access`.
  CoordinatorService(CoordinatorCore* core, AccessOptions access)
      : core_(core), access_(std::move(access)) {}

  // Each RPC forwards to the CoordinatorCore method of the same name (see coordinator_core.h
  // for its semantics) and returns the core's status with the same code. RegisterWorker first
  // completes a store address without a host (":PORT") with the host the call came from
  // (ResolveStoreAddress in request_validation.h).

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
  // ReportIndexProgress needs the cluster token, as the workers' calls; with client
  // certificates (bind_worker_ids) the certificate must name the indexer_id.
  grpc::Status ReportIndexProgress(grpc::ServerContext* ctx,
                                   const v1::ReportIndexProgressRequest* req,
                                   v1::ReportIndexProgressResponse* resp) override;

 private:
  // Admin checks the credential of an admin call.
  grpc::Status Admin(const grpc::ServerContext* ctx, const char* method) const;
  // Member checks the credential of a worker's call or of GetStatus: the cluster token or the
  // admin token, when a cluster token is configured.
  grpc::Status Member(const grpc::ServerContext* ctx, const char* method) const;
  // Worker checks a worker's call for `worker_id`: Member, and with bind_worker_ids the client
  // certificate naming `worker_id`.
  grpc::Status Worker(const grpc::ServerContext* ctx, const char* method,
                      const std::string& worker_id) const;

  CoordinatorCore* const core_;
  const AccessOptions access_;
};

}  // namespace issuescope::coordinator

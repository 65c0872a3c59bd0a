#include "coordinator/coordinator_service.h"

#include "common/grpc_status.h"
#include "common/logging.h"
#include "coordinator/request_validation.h"
#include "security.h"

namespace issuescope::coordinator {
namespace {

// Serve calls the core and moves its answer (or error) into the gRPC reply.
template <typename Response>
grpc::Status Serve(const char* method, absl::StatusOr<Response> result, Response* resp) {
  if (!result.ok()) {
    // Stale leases and validation errors are the callers' business; log them quietly.
    spdlog::debug("{}: {}", method, result.status().ToString());
    return ToGrpcStatus(result.status());
  }
  *resp = std::move(result).value();
  return grpc::Status::OK;
}

}  // namespace

grpc::Status CoordinatorService::Admin(const grpc::ServerContext* ctx, const char* method) const {
  absl::Status allowed;
  if (!access_.admin_token.empty()) {
    allowed = CheckBearerToken(*ctx, access_.admin_token);
  } else if (!access_.insecure_admin) {
    allowed = absl::PermissionDeniedError(
        "admin calls are disabled: this coordinator has no admin token (start it with "
        "--admin-token-env VAR, or --insecure-admin on a trusted network)");
  }
  if (allowed.ok()) return grpc::Status::OK;
  spdlog::warn("{} from {} refused: {}", method, ctx->peer(), std::string(allowed.message()));
  return ToGrpcStatus(allowed);
}

grpc::Status CoordinatorService::Member(const grpc::ServerContext* ctx,
                                        const char* method) const {
  if (access_.cluster_token.empty()) return grpc::Status::OK;
  absl::Status allowed = CheckBearerToken(*ctx, access_.cluster_token);
  if (!allowed.ok() && !access_.admin_token.empty() &&
      CheckBearerToken(*ctx, access_.admin_token).ok()) {
    allowed = absl::OkStatus();
  }
  if (allowed.ok()) return grpc::Status::OK;
  spdlog::warn("{} from {} refused: {}", method, ctx->peer(), std::string(allowed.message()));
  return ToGrpcStatus(absl::UnauthenticatedError(
      "this call needs the cluster token: send metadata 'authorization: Bearer <token>' "
      "(--cluster-token-env on workers and the indexer)"));
}

grpc::Status CoordinatorService::Worker(const grpc::ServerContext* ctx, const char* method,
                                        const std::string& worker_id) const {
  if (grpc::Status s = Member(ctx, method); !s.ok()) return s;
  if (!access_.bind_worker_ids) return grpc::Status::OK;
  absl::Status allowed = CheckPeerIsWorker(*ctx, worker_id);
  if (allowed.ok()) return grpc::Status::OK;
  spdlog::warn("{} from {} refused: {}", method, ctx->peer(), std::string(allowed.message()));
  return ToGrpcStatus(allowed);
}

grpc::Status CoordinatorService::RegisterWorker(grpc::ServerContext* ctx,
                                                const v1::RegisterWorkerRequest* req,
                                                v1::RegisterWorkerResponse* resp) {
  if (grpc::Status s = Worker(ctx, "RegisterWorker", req->worker_id()); !s.ok()) return s;
  // A worker listening on every interface leaves its store's host to us: the one it calls from.
  absl::StatusOr<std::string> address = ResolveStoreAddress(req->store_address(), ctx->peer());
  if (!address.ok()) return ToGrpcStatus(address.status());
  v1::RegisterWorkerRequest resolved = *req;
  resolved.set_store_address(*std::move(address));
  return Serve("RegisterWorker", core_->RegisterWorker(resolved), resp);
}

grpc::Status CoordinatorService::Heartbeat(grpc::ServerContext* ctx, const v1::HeartbeatRequest* req,
                                           v1::HeartbeatResponse* resp) {
  if (grpc::Status s = Worker(ctx, "Heartbeat", req->worker_id()); !s.ok()) return s;
  return Serve("Heartbeat", core_->Heartbeat(*req), resp);
}

grpc::Status CoordinatorService::AcquireLeases(grpc::ServerContext* ctx,
                                               const v1::AcquireLeasesRequest* req,
                                               v1::AcquireLeasesResponse* resp) {
  if (grpc::Status s = Worker(ctx, "AcquireLeases", req->worker_id()); !s.ok()) return s;
  return Serve("AcquireLeases", core_->AcquireLeases(*req), resp);
}

grpc::Status CoordinatorService::ReportProgress(grpc::ServerContext* ctx,
                                                const v1::ReportProgressRequest* req,
                                                v1::ReportProgressResponse* resp) {
  if (grpc::Status s = Worker(ctx, "ReportProgress", req->worker_id()); !s.ok()) return s;
  return Serve("ReportProgress", core_->ReportProgress(*req), resp);
}

grpc::Status CoordinatorService::ReleaseLease(grpc::ServerContext* ctx,
                                              const v1::ReleaseLeaseRequest* req,
                                              v1::ReleaseLeaseResponse* resp) {
  if (grpc::Status s = Worker(ctx, "ReleaseLease", req->worker_id()); !s.ok()) return s;
  return Serve("ReleaseLease", core_->ReleaseLease(*req), resp);
}

grpc::Status CoordinatorService::AddRepositories(grpc::ServerContext* ctx,
                                                 const v1::AddRepositoriesRequest* req,
                                                 v1::AddRepositoriesResponse* resp) {
  if (grpc::Status s = Admin(ctx, "AddRepositories"); !s.ok()) return s;
  return Serve("AddRepositories", core_->AddRepositories(*req), resp);
}

grpc::Status CoordinatorService::RemoveRepositories(grpc::ServerContext* ctx,
                                                    const v1::RemoveRepositoriesRequest* req,
                                                    v1::RemoveRepositoriesResponse* resp) {
  if (grpc::Status s = Admin(ctx, "RemoveRepositories"); !s.ok()) return s;
  return Serve("RemoveRepositories", core_->RemoveRepositories(*req), resp);
}

grpc::Status CoordinatorService::TriggerCrawl(grpc::ServerContext* ctx,
                                              const v1::TriggerCrawlRequest* req,
                                              v1::TriggerCrawlResponse* resp) {
  if (grpc::Status s = Admin(ctx, "TriggerCrawl"); !s.ok()) return s;
  return Serve("TriggerCrawl", core_->TriggerCrawl(*req), resp);
}

grpc::Status CoordinatorService::ReportIndexProgress(grpc::ServerContext* ctx,
                                                     const v1::ReportIndexProgressRequest* req,
                                                     v1::ReportIndexProgressResponse* resp) {
  if (grpc::Status s = Worker(ctx, "ReportIndexProgress", req->indexer_id()); !s.ok()) return s;
  return Serve("ReportIndexProgress", core_->ReportIndexProgress(*req), resp);
}

grpc::Status CoordinatorService::GetStatus(grpc::ServerContext* ctx, const v1::GetStatusRequest* req,
                                           v1::GetStatusResponse* resp) {
  if (grpc::Status s = Member(ctx, "GetStatus"); !s.ok()) return s;
  return Serve("GetStatus", core_->GetStatus(*req), resp);
}

grpc::Status CoordinatorService::LeaveWorker(grpc::ServerContext* ctx,
                                             const v1::DrainWorkerRequest* req,
                                             v1::DrainWorkerResponse* resp) {
  if (grpc::Status s = Worker(ctx, "LeaveWorker", req->worker_id()); !s.ok()) return s;
  return Serve("LeaveWorker", core_->DrainWorker(*req), resp);
}

grpc::Status CoordinatorService::DrainWorker(grpc::ServerContext* ctx,
                                             const v1::DrainWorkerRequest* req,
                                             v1::DrainWorkerResponse* resp) {
  if (grpc::Status s = Admin(ctx, "DrainWorker"); !s.ok()) return s;
  return Serve("DrainWorker", core_->DrainWorker(*req), resp);
}

grpc::Status CoordinatorService::PauseRepositories(grpc::ServerContext* ctx,
                                                   const v1::PauseRepositoriesRequest* req,
                                                   v1::PauseRepositoriesResponse* resp) {
  if (grpc::Status s = Admin(ctx, "PauseRepositories"); !s.ok()) return s;
  return Serve("PauseRepositories", core_->PauseRepositories(*req), resp);
}

grpc::Status CoordinatorService::ResumeRepositories(grpc::ServerContext* ctx,
                                                    const v1::ResumeRepositoriesRequest* req,
                                                    v1::ResumeRepositoriesResponse* resp) {
  if (grpc::Status s = Admin(ctx, "ResumeRepositories"); !s.ok()) return s;
  return Serve("ResumeRepositories", core_->ResumeRepositories(*req), resp);
}

}  // namespace issuescope::coordinator

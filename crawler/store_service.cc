#include "store_service.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "common/logging.h"

namespace issuescope::crawler {
namespace {

grpc::Status Cancelled(absl::string_view what) {
  return ToGrpcStatus(absl::CancelledError(absl::StrCat(what, " cancelled by the client")));
}

}  // namespace

StoreService::StoreService(IssueStore* store, StoreServiceOptions options)
    : store_(store), options_(options) {}

void StoreService::Shutdown() { shutdown_.store(true); }

grpc::Status StoreService::GetIssue(grpc::ServerContext* context,
                                    const v1::GetIssueRequest* request,
                                    v1::IssueWithComments* response) {
  if (request->repo_slug().empty()) {
    return ToGrpcStatus(absl::InvalidArgumentError("GetIssue: repo_slug is empty"));
  }
  if (request->number() <= 0) {
    return ToGrpcStatus(absl::InvalidArgumentError(
        absl::StrCat("GetIssue: number must be > 0, got ", request->number())));
  }
  absl::StatusOr<v1::IssueWithComments> issue =
      store_->GetIssue(request->repo_slug(), request->number());
  if (!issue.ok()) return ToGrpcStatus(issue.status());
  *response = *std::move(issue);
  return grpc::Status::OK;
}

grpc::Status StoreService::ScanRepository(grpc::ServerContext* context,
                                          const v1::ScanRepositoryRequest* request,
                                          grpc::ServerWriter<v1::Issue>* writer) {
  if (request->repo_slug().empty()) {
    return ToGrpcStatus(absl::InvalidArgumentError("ScanRepository: repo_slug is empty"));
  }
  bool broken = false;
  absl::Status status = store_->ScanRepository(request->repo_slug(), [&](const v1::Issue& issue) {
    if (context->IsCancelled() || !writer->Write(issue)) {
      broken = true;
      return false;
    }
    return true;
  });
  if (!status.ok()) {
    spdlog::warn("ScanRepository {} failed: {}", request->repo_slug(), status.ToString());
    return ToGrpcStatus(status);
  }
  if (broken) return Cancelled("ScanRepository");
  return grpc::Status::OK;
}

grpc::Status StoreService::Changes(grpc::ServerContext* context,
                                   const v1::ChangesRequest* request,
                                   grpc::ServerWriter<v1::ChangeBatch>* writer) {
  if (!request->store_id().empty() && request->store_id() != store_->store_id()) {
    return ToGrpcStatus(absl::FailedPreconditionError(absl::StrCat(
        "the store was replaced: expected store id ", request->store_id(), ", this store is ",
        store_->store_id(), "; its sequence numbers restarted, so read again from seq 0")));
  }
  if (request->max_batch() < 0) {
    return ToGrpcStatus(absl::InvalidArgumentError(
        absl::StrCat("Changes: max_batch must be >= 0, got ", request->max_batch())));
  }
  int max_batch = request->max_batch() == 0 ? options_.default_batch
                                            : std::min(request->max_batch(), options_.max_batch);
  uint64_t seq = request->from_seq();
  spdlog::debug("Changes stream opened: from_seq={} follow={} max_batch={}", seq,
                request->follow(), max_batch);
  while (true) {
    if (context->IsCancelled()) return Cancelled("Changes");
    if (request->follow() && shutdown_.load()) {
      return ToGrpcStatus(absl::UnavailableError("the store service is shutting down"));
    }
    absl::StatusOr<v1::ChangeBatch> batch = store_->ReadChanges(seq, max_batch);
    if (!batch.ok()) {
      spdlog::warn("Changes from seq {} failed: {}", seq, batch.status().ToString());
      return ToGrpcStatus(batch.status());
    }
    if (batch->last_seq() > seq) {
      if (!writer->Write(*batch)) return Cancelled("Changes");
      seq = batch->last_seq();
      continue;
    }
    // Caught up.
    if (!request->follow()) return grpc::Status::OK;
    store_->WaitForChanges(seq, options_.wait_slice);
  }
}

grpc::Status StoreService::GetStoreInfo(grpc::ServerContext* context,
                                        const v1::GetStoreInfoRequest* request,
                                        v1::StoreInfo* response) {
  *response = store_->Info();
  return grpc::Status::OK;
}

}  // namespace issuescope::crawler

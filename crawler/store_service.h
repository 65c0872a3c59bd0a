// StoreService serves a crawler worker's IssueStore over gRPC (issuescope.v1.IssueStore): issue
// lookups, repository scans, store info and the change feed (Changes, optionally followed).
// It is a thin adapter: it validates requests, calls the IssueStore and converts statuses with
// common/grpc_status.h.
//
// Ownership: the service does not own the store, which must outlive it (and the gRPC server).
// Thread-safety: every handler is safe to run concurrently; Shutdown may be called from any
// thread. Call Shutdown before shutting the gRPC server down so that followed Changes streams
// return instead of holding the server open.
#pragma once

#include <atomic>

#include "absl/time/time.h"
#include "crawler/issue_store.h"
#include "issuescope/v1/store.grpc.pb.h"

namespace issuescope::crawler {

// StoreServiceOptions tune the change feed. Every field documents its Default.
struct StoreServiceOptions {
  // Events per batch when the request's max_batch is 0. Default: 500.
  int default_batch = 500;
  // Upper bound on events per batch; larger requests are clamped. Default: 5000.
  int max_batch = 5000;
  // How long a followed stream waits for new changes before it re-checks for cancellation and
  // shutdown. Bounds how long a cancelled or shut-down stream lingers. Default: 500 ms.
  absl::Duration wait_slice = absl::Milliseconds(500);
};

// StoreService: see the file comment.
class StoreService final : public v1::IssueStore::Service {
 public:
  // StoreService serves `store` (not owned; must outlive the service).
  explicit StoreService(IssueStore* store, StoreServiceOptions options = {});

  // GetIssue returns one issue with its comments: INVALID_ARGUMENT for an empty slug or a
  // number <= 0, NOT_FOUND when absent.
  grpc::Status GetIssue(grpc::ServerContext* context, const v1::GetIssueRequest* request,
                        v1::IssueWithComments* response) override;
  // ScanRepository streams every stored issue of a repository in number order.
  grpc::Status ScanRepository(grpc::ServerContext* context,
                              const v1::ScanRepositoryRequest* request,
                              grpc::ServerWriter<v1::Issue>* writer) override;
  // Changes streams change batches from request.from_seq: until caught up (then OK), or with
  // `follow` until the client cancels (CANCELLED) or Shutdown is called (UNAVAILABLE).
  // FAILED_PRECONDITION when request.store_id names another store (this one was replaced).
  grpc::Status Changes(grpc::ServerContext* context, const v1::ChangesRequest* request,
                       grpc::ServerWriter<v1::ChangeBatch>* writer) override;
  // GetStoreInfo returns the store id, last seq and record counts.
  grpc::Status GetStoreInfo(grpc::ServerContext* context, const v1::GetStoreInfoRequest* request,
                            v1::StoreInfo* response) override;

  // Shutdown makes followed Changes streams return within one wait slice and refuses new ones.
  void Shutdown();

 private:
  IssueStore* store_;
  StoreServiceOptions options_;
  std::atomic<bool> shutdown_{false};
};

}  // namespace issuescope::crawler

// SearchService is the gRPC service issuescope.v1.Search (proto/issuescope/v1/search.proto): a
// thin adapter that bounds request sizes, gives up early on requests whose deadline has passed
// or that were cancelled (Search and Aggregate check between their passes, StopCheck; Export
// checks before every hit it writes and stops when the client goes away), calls the Searcher
// and converts its statuses to gRPC statuses.
// Borrows the Searcher, which must outlive it. Thread-safe (the Searcher is).
#pragma once

#include <grpcpp/grpcpp.h>

#include <functional>

#include "issuescope/v1/search.grpc.pb.h"
#include "search/searcher.h"

namespace issuescope::search {

// kMaxRepoSlugBytes bounds the repo_slug of GetIssue requests.
inline constexpr size_t kMaxRepoSlugBytes = 512;
// kMaxRequestNames bounds the facets of Search and the dimensions of Aggregate requests.
inline constexpr int kMaxRequestNames = 32;

// SearchService implements issuescope.v1.Search over a Searcher.
class SearchService final : public v1::Search::Service {
 public:
  // SearchService serves queries with `searcher` (not owned).
  explicit SearchService(Searcher* searcher);

  // Search runs a query; see Searcher::Search.
  grpc::Status Search(grpc::ServerContext* context, const v1::SearchRequest* request,
                      v1::SearchResponse* response) override;
  // GetIssue returns one issue with comments; see Searcher::GetIssue.
  grpc::Status GetIssue(grpc::ServerContext* context, const v1::SearchGetIssueRequest* request,
                        v1::IssueWithComments* response) override;
  // GetIndexStatus reports the document count and feed positions; see Searcher::GetIndexStatus.
  grpc::Status GetIndexStatus(grpc::ServerContext* context,
                              const v1::GetIndexStatusRequest* request,
                              v1::IndexStatus* response) override;
  // Export streams every hit of a query; see Searcher::Export.
  grpc::Status Export(grpc::ServerContext* context, const v1::ExportRequest* request,
                      grpc::ServerWriter<v1::SearchHit>* writer) override;
  // Aggregate counts matches by dimensions; see Searcher::Aggregate.
  grpc::Status Aggregate(grpc::ServerContext* context, const v1::AggregateRequest* request,
                         v1::AggregateResponse* response) override;

  // SetReadiness makes every call answer `ready()`'s status while it is not OK (a replica still
  // making its first copy: UNAVAILABLE, so clients retry on another replica instead of reading
  // an empty index). Call before serving.
  void SetReadiness(std::function<absl::Status()> ready) { ready_ = std::move(ready); }

 private:
  // Admit: the readiness status, then whether the call was cancelled or is past its deadline.
  absl::Status Admit(grpc::ServerContext* context) const;

  Searcher* searcher_;
  std::function<absl::Status()> ready_;
};

}  // namespace issuescope::search

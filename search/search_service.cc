#include "search_service.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"
#include "query_parser.h"
#include "spdlog/spdlog.h"

namespace issuescope::search {
namespace {

// Expired reports (as a status) a request that was cancelled or whose deadline has passed.
absl::Status Expired(grpc::ServerContext* context) {
  if (context->IsCancelled()) return absl::CancelledError("request cancelled by the client");
  if (context->deadline() <= std::chrono::system_clock::now()) {
    return absl::DeadlineExceededError("the request's deadline passed; the search stopped");
  }
  return absl::OkStatus();
}

// Reply converts a result to a gRPC status, logging failures other than bad requests.
template <typename T>
grpc::Status Reply(absl::string_view method, absl::StatusOr<T> result, T* response) {
  if (!result.ok()) {
    const absl::StatusCode code = result.status().code();
    if (code == absl::StatusCode::kInternal || code == absl::StatusCode::kDataLoss) {
      spdlog::warn("{} failed: {}", std::string(method), result.status().ToString());
    } else {
      spdlog::debug("{} failed: {}", std::string(method), result.status().ToString());
    }
    return ToGrpcStatus(result.status());
  }
  *response = *std::move(result);
  return grpc::Status::OK;
}

}  // namespace

SearchService::SearchService(Searcher* searcher) : searcher_(searcher) {}

absl::Status SearchService::Admit(grpc::ServerContext* context) const {
  if (ready_) {
    if (absl::Status s = ready_(); !s.ok()) return s;
  }
  return Expired(context);
}

grpc::Status SearchService::Search(grpc::ServerContext* context,
                                   const v1::SearchRequest* request,
                                   v1::SearchResponse* response) {
  if (absl::Status s = Admit(context); !s.ok()) return ToGrpcStatus(s);
  if (request->query().size() > kMaxQueryBytes) {
    return ToGrpcStatus(absl::InvalidArgumentError(
        absl::StrCat("query is ", request->query().size(), " bytes long; at most ",
                     kMaxQueryBytes, " bytes are accepted")));
  }
  if (request->facets_size() > kMaxRequestNames) {
    return ToGrpcStatus(absl::InvalidArgumentError(absl::StrCat(
        request->facets_size(), " facets requested; at most ", kMaxRequestNames)));
  }
  if (request->page_token().size() > 256) {
    return ToGrpcStatus(absl::InvalidArgumentError("page_token is malformed (too long)"));
  }
  return Reply("Search", searcher_->Search(*request, [context] { return Expired(context); }),
               response);
}

grpc::Status SearchService::GetIssue(grpc::ServerContext* context,
                                     const v1::SearchGetIssueRequest* request,
                                     v1::IssueWithComments* response) {
  if (absl::Status s = Admit(context); !s.ok()) return ToGrpcStatus(s);
  if (request->repo_slug().size() > kMaxRepoSlugBytes) {
    return ToGrpcStatus(absl::InvalidArgumentError(absl::StrCat(
        "repo_slug is ", request->repo_slug().size(), " bytes long; at most ",
        kMaxRepoSlugBytes, " bytes are accepted")));
  }
  return Reply("GetIssue", searcher_->GetIssue(request->repo_slug(), request->number()),
               response);
}

grpc::Status SearchService::GetIndexStatus(grpc::ServerContext* context,
                                           const v1::GetIndexStatusRequest* request,
                                           v1::IndexStatus* response) {
  if (absl::Status s = Admit(context); !s.ok()) return ToGrpcStatus(s);
  return Reply("GetIndexStatus", searcher_->GetIndexStatus(), response);
}

grpc::Status SearchService::Export(grpc::ServerContext* context,
                                   const v1::ExportRequest* request,
                                   grpc::ServerWriter<v1::SearchHit>* writer) {
  if (absl::Status s = Admit(context); !s.ok()) return ToGrpcStatus(s);
  if (request->query().size() > kMaxQueryBytes) {
    return ToGrpcStatus(absl::InvalidArgumentError(
        absl::StrCat("query is ", request->query().size(), " bytes long; at most ",
                     kMaxQueryBytes, " bytes are accepted")));
  }
  absl::Status status = searcher_->Export(*request, [&](const v1::SearchHit& hit) {
    RETURN_IF_ERROR(Expired(context));
    if (!writer->Write(hit)) return absl::CancelledError("the client stopped reading the export");
    return absl::OkStatus();
  });
  if (!status.ok()) spdlog::debug("Export stopped: {}", status.ToString());
  return ToGrpcStatus(status);
}

grpc::Status SearchService::Aggregate(grpc::ServerContext* context,
                                      const v1::AggregateRequest* request,
                                      v1::AggregateResponse* response) {
  if (absl::Status s = Admit(context); !s.ok()) return ToGrpcStatus(s);
  if (request->query().size() > kMaxQueryBytes) {
    return ToGrpcStatus(absl::InvalidArgumentError(
        absl::StrCat("query is ", request->query().size(), " bytes long; at most ",
                     kMaxQueryBytes, " bytes are accepted")));
  }
  if (request->dimensions_size() > kMaxRequestNames) {
    return ToGrpcStatus(absl::InvalidArgumentError(absl::StrCat(
        request->dimensions_size(), " dimensions requested; at most 3")));
  }
  return Reply("Aggregate",
               searcher_->Aggregate(*request, [context] { return Expired(context); }), response);
}

}  // namespace issuescope::search

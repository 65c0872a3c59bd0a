// `issuescope search` and `issuescope show`: query a local data directory's index (--data) or a
// running search service (--server HOST:PORT) and print results for people (text) or scripts
// (--json: one JSON object per line). Also the target helpers `export` and `table` share.
#pragma once

#include <string>

#include "absl/status/status.h"
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "common/grpc_channel.h"
#include "issuescope/v1/search.grpc.pb.h"
#include "issuescope/v1/search.pb.h"

namespace issuescope::cli {

// QueryTarget is where queries go: exactly one of data_dir and server is set.
struct QueryTarget {
  // Data directory of `issuescope crawl` (its index is DIR/index); or
  std::string data_dir;
  // address of a search service.
  std::string server;
  // TLS to the search service (--tls-ca, and --tls-cert/--tls-key for a service that requires
  // client certificates); plaintext without a CA.
  ClientTlsFiles tls;
};

// SearchCommandOptions are the flags of `issuescope search`.
struct SearchCommandOptions {
  QueryTarget target;
  std::string query;
  int limit = 20;
  bool json = false;
  // Facets to count and print ("repo", "label", …; see SearchRequest.facets).
  std::vector<std::string> facets;
  // Values printed per facet.
  int facet_limit = 10;
  // Print what each hit's score is made of (SearchRequest.explain).
  bool explain = false;
};

// RunSearch prints the hits of a query.
absl::Status RunSearch(const SearchCommandOptions& options);

// ShowCommandOptions are the flags of `issuescope show`.
struct ShowCommandOptions {
  QueryTarget target;
  // "OWNER/NAME#N" or "github:OWNER/NAME#N".
  std::string issue;
  bool json = false;
};

// RunShow prints one issue with its comments.
absl::Status RunShow(const ShowCommandOptions& options);

// SearchVia runs one search request against the target (used by `up` for its example queries).
absl::StatusOr<v1::SearchResponse> SearchVia(const QueryTarget& target,
                                             const v1::SearchRequest& request);

// CheckQueryTarget checks that exactly one of --data/--server is given, that TLS files come
// only with --server, and that a data directory has an index.
absl::Status CheckQueryTarget(const QueryTarget& target);

// ConnectSearch makes a stub of the search service at target.server (HOST:PORT, or a list of
// replicas: CreateSearchChannel, common/grpc_channel.h), over TLS when
// target.tls names a CA. INVALID_ARGUMENT naming the flag and file when a TLS file is unusable.
absl::StatusOr<std::unique_ptr<v1::Search::Stub>> ConnectSearch(const QueryTarget& target);

// LocalIndexPath is the index directory of a data directory.
std::string LocalIndexPath(const QueryTarget& target);

// FormatDate renders a timestamp as RFC 3339; "" when unset.
std::string FormatDate(const google::protobuf::Timestamp& ts);

// HitToJson renders a hit as one JSON object: the export record of search/export_format.h.
std::string HitToJson(const v1::SearchHit& hit);

// PrintFacets prints the facets of a response as text, or as one JSON line
// {"total", "total_exact", "facets_exact", "facets_counted", "facets": {name: [[value, count], …]}}.
void PrintFacets(const v1::SearchResponse& response, bool json);

// PrintHits prints hits as text (with highlighted snippets) or JSON lines.
void PrintHits(const v1::SearchResponse& response, bool json);

}  // namespace issuescope::cli

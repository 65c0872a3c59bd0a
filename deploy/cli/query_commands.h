// `issuescope search` and `issuescope show`: query a local data directory's index (--data) or a
// running search service (--server HOST:PORT) and print results for people (text) or scripts
// (--json: one JSON object per line).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "issuescope/v1/search.pb.h"

namespace issuescope::cli {

struct QueryTarget {
  // Data directory of `issuescope crawl` (its index is DIR/index); or
  std::string data_dir;
  // address of a search service.
  std::string server;
};

struct SearchCommandOptions {
  QueryTarget target;
  std::string query;
  int limit = 20;
  bool json = false;
};

// RunSearch prints the hits of a query.
absl::Status RunSearch(const SearchCommandOptions& options);

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

// HitToJson renders a hit as one JSON object (repo, number, title, state, score, url, labels,
// author, created_at, updated_at, comments, snippet).
std::string HitToJson(const v1::SearchHit& hit);

// PrintHits prints hits as text (with highlighted snippets) or JSON lines.
void PrintHits(const v1::SearchResponse& response, bool json);

}  // namespace issuescope::cli

// Searcher answers queries over the Xapian index written by the indexer (schema in
// common/index_schema.h): ranked, paginated hits with highlighted snippets, one issue by key,
// and the status of the index. It opens an on-disk index lazily (so the service can start
// before the index exists) and reopens it before every call, so new commits become visible.
//
// Thread-safety: all methods are thread-safe; calls are serialized by one mutex because a
// Xapian::Database is not safe for concurrent use. Xapian exceptions never escape: they become
// statuses (cannot open → UNAVAILABLE "index not built yet", query errors → INVALID_ARGUMENT,
// anything else → INTERNAL naming the operation).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "issuescope/v1/search.pb.h"
#include "xapian.h"

namespace issuescope::search {

// kDefaultPageSize is the page size used when a request asks for 0.
inline constexpr int kDefaultPageSize = 20;
// kMaxPageSize is the largest page size accepted.
inline constexpr int kMaxPageSize = 1000;
// kSnippetBytes is the approximate length of a snippet.
inline constexpr size_t kSnippetBytes = 200;

// Searcher is the query engine; see the file comment.
class Searcher {
 public:
  // ForPath searches the on-disk index at `path`, opened at the first call that needs it.
  static std::unique_ptr<Searcher> ForPath(const std::string& path);
  // ForDatabase searches an already open database (e.g. Xapian::InMemory::open() in tests).
  static std::unique_ptr<Searcher> ForDatabase(Xapian::Database db);

  // Search runs a query (docs/QUERY.md). Hits are ranked by BM25 when the query has free text,
  // else newest created first (then highest number); `sort:` overrides. `total` is exact.
  // INVALID_ARGUMENT for a malformed query, a page_size outside 0..kMaxPageSize, or a
  // page_token that is malformed or belongs to another query.
  absl::StatusOr<v1::SearchResponse> Search(const v1::SearchRequest& request);

  // GetIssue returns the indexed issue `repo_slug`#`number` ("github:owner/name"; any case)
  // with its comments and tags. NOT_FOUND when the index lacks it.
  absl::StatusOr<v1::IssueWithComments> GetIssue(absl::string_view repo_slug, int64_t number);

  // GetIndexStatus returns the document count and the change-feed positions ("feed:<store_id>"
  // metadata) the index has consumed, ordered by store id. UNIMPLEMENTED for the in-memory
  // backend, which cannot list metadata keys; DATA_LOSS for a position that is not a number.
  absl::StatusOr<v1::IndexStatus> GetIndexStatus();

 private:
  Searcher(std::string path, std::optional<Xapian::Database> db);

  // Database opens or reopens the index; caller holds mu_.
  absl::StatusOr<Xapian::Database*> Database();
  absl::StatusOr<v1::SearchResponse> SearchLocked(const v1::SearchRequest& request);
  absl::StatusOr<v1::IssueWithComments> GetIssueLocked(const std::string& slug, int64_t number);
  absl::StatusOr<v1::IndexStatus> GetIndexStatusLocked();
  // ConvertError maps a Xapian exception raised while doing `what` to a status.
  absl::Status ConvertError(const Xapian::Error& e, absl::string_view what) const;

  std::mutex mu_;
  const std::string path_;               // empty for ForDatabase
  std::optional<Xapian::Database> db_;   // guarded by mu_
};

}  // namespace issuescope::search

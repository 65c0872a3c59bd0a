// Searcher answers queries over the Xapian index written by the indexer (schema in
// common/index_schema.h): ranked, paginated hits with highlighted snippets and exact facet
// counts, aggregate tables, streamed exports, one issue by key, and the status of the index. It
// opens an on-disk index (sharded or not) with index::OpenIndexForReading, lazily (so the
// service can start before the index exists), and reopens it before every call (every export
// chunk), so new commits become visible and queries keep working while the indexer commits.
//
// Thread-safety: all methods are thread-safe. A Xapian::Database is not safe for concurrent
// use, so each call borrows a database handle of its own from a small pool (at most
// SearcherOptions::max_handles open handles of an on-disk index; calls beyond that wait for
// one); ForDatabase has the one handle it was given, so its calls are serialized. Export holds
// a handle per chunk only. Xapian exceptions never escape: they become statuses (cannot open →
// UNAVAILABLE "index not built yet", query errors → INVALID_ARGUMENT, anything else → INTERNAL
// naming the operation).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/index_layout.h"
#include "issuescope/v1/search.pb.h"
#include "search/match_split.h"
#include "search/remote_proximity.h"
#include "xapian.h"

namespace issuescope::search {

// kDefaultPageSize is the page size used when a request asks for 0.
inline constexpr int kDefaultPageSize = 20;
// kMaxPageSize is the largest page size accepted.
inline constexpr int kMaxPageSize = 1000;
// kSnippetBytes is the approximate length of a snippet.
inline constexpr size_t kSnippetBytes = 200;

// SearcherOptions tunes the work a Searcher does per request.
struct SearcherOptions {
  // Facets are counted over every match of a query with at most this many; beyond it over the
  // matches among an evenly spread sample of document ids sized to hold about this many
  // (search/docid_sample.h), and a response says facets_exact=false and how many it counted.
  // Queries matching everything are always exact (term frequencies). Default: 20000.
  uint64_t facet_bound = 20000;
  // The total of a query is exact when it has at most this many matches; beyond, it is
  // Xapian's estimate after ranking (at least) this many, and the response says
  // total_exact=false. Bounds the work of broad queries (a word in every issue). 0: always
  // exact. Default: 20000.
  uint64_t count_bound = 20000;
  // Database handles an on-disk index may have open at once, i.e. calls served in parallel;
  // 0 means the number of cores (at least 2). Default: 0.
  int max_handles = 0;
  // A search or aggregation may run its matching on up to this many cores at once, when that
  // many database handles are idle (MatchSplit: each part on a share of the shards); under
  // load, when no other handle is free, a call runs on one. 0 means the number of cores; 1
  // turns splitting off. Default: 0.
  int split_parts = 0;
  // Hits fetched per round trip to the index while exporting. Default: 500.
  int export_chunk = 500;
  // A database handle that opened a shard on an alternate server (its `remote` line's own
  // server could not be reached: search/index_reader.h) asks that server again this often,
  // and moves back to it once it answers. Default: 30 s.
  absl::Duration primary_retry = absl::Seconds(30);
  // Timeouts of connections to shard servers (an index whose stub names them), in ms: to
  // connect, and for each exchange of a search (search/index_reader.h, ShardTimeouts).
  // Defaults: 2000 and 10000.
  unsigned shard_connect_timeout_ms = 2000;
  unsigned shard_timeout_ms = 10000;
};

// StopCheck says whether a call should stop: OK to go on, else the status to return (e.g.
// DEADLINE_EXCEEDED or CANCELLED, from the gRPC call's deadline and cancellation). A search or
// aggregation asks it after getting a database handle and between its passes (parse, ranking,
// relaxed ranking, facet count); a pass itself runs to its end (Xapian 1.4 cannot stop a
// match; Enquire::set_time_limit only turns check_at_least off).
using StopCheck = std::function<absl::Status()>;

// ExportSink receives each exported hit in order; a non-OK status stops the export and is
// returned by Export (e.g. CANCELLED when the client went away).
using ExportSink = std::function<absl::Status(const v1::SearchHit&)>;

// Searcher is the query engine; see the file comment.
class Searcher {
 public:
  // ForPath searches the index directory at `path`, opened at the first call that needs it.
  static std::unique_ptr<Searcher> ForPath(const std::string& path,
                                           SearcherOptions options = SearcherOptions());
  // ForDatabase searches an already open database (e.g. Xapian::InMemory::open() in tests).
  static std::unique_ptr<Searcher> ForDatabase(Xapian::Database db,
                                               SearcherOptions options = SearcherOptions());

  // Search runs a query (docs/QUERY.md). A query naming `is:deleted` or `is:transferred`
  // searches the issues the tracker reported deleted or transferred away (ForPath only; they
  // are not in the live index), with the same language, ranking, facets and pages. Hits are ranked by BM25 (RankingWeight: b = 0) when
  // the query has free text, else newest created first (then highest number); `sort:`
  // overrides. `total` is exact up to SearcherOptions::count_bound matches, an estimate beyond
  // (see total_exact); facets are exact up to SearcherOptions::facet_bound matches, counted
  // over an evenly spread sample of about that many beyond (see facets_exact). Pages of value-sorted results
  // continue after the last hit's sort key, so they neither repeat nor skip hits while
  // documents are added. INVALID_ARGUMENT for a malformed query, a page_size
  // outside 0..kMaxPageSize, a facet_limit outside 0..1000, an unknown facet, or a page_token
  // that is malformed or belongs to another query.
  // `stop` (optional) ends the search early (see StopCheck).
  absl::StatusOr<v1::SearchResponse> Search(const v1::SearchRequest& request,
                                            const StopCheck& stop = nullptr);

  // Aggregate counts every match of the query by the request's 1–3 dimensions, exactly; rows
  // sorted by values, "" for an issue without a value. INVALID_ARGUMENT for a malformed query
  // or a missing, unknown, repeated or fourth dimension.
  absl::StatusOr<v1::AggregateResponse> Aggregate(const v1::AggregateRequest& request,
                                                  const StopCheck& stop = nullptr);

  // Export passes every hit of the query (at most request.limit when > 0) to `sink`, in the
  // query's order, fetching SearcherOptions::export_chunk hits at a time. Returns the first
  // non-OK status of `sink`, or the error of the query.
  absl::Status Export(const v1::ExportRequest& request, const ExportSink& sink);

  // GetIssue returns the indexed issue `repo_slug`#`number` ("github:owner/name"; any case)
  // with its comments and tags. NOT_FOUND when the index lacks it.
  absl::StatusOr<v1::IssueWithComments> GetIssue(absl::string_view repo_slug, int64_t number);

  // SplitCalls is the number of searches and aggregations so far that borrowed handles to run
  // split over several cores (for monitoring and tests).
  uint64_t SplitCalls() const { return split_searches_.load(std::memory_order_relaxed); }

  // GetIndexStatus returns the document count and the change-feed positions the index has
  // consumed (index::ReadFeedPositions: the minimum over the shards), ordered by store id.
  // UNIMPLEMENTED for the in-memory backend, which cannot list metadata keys. On-disk indexes
  // skip positions that are not numbers; ForDatabase reports them as DATA_LOSS.
  absl::StatusOr<v1::IndexStatus> GetIndexStatus();

 private:
  // Handle is one database handle of the pool: its database (empty until first opened) and
  // the shard servers it could not reach and so reads from their alternates.
  struct Handle {
    std::optional<Xapian::Database> db;
    std::vector<index::ShardServer> missed;
    absl::Time retry_missed_at = absl::InfinitePast();
  };
  // Lease is a database handle borrowed from the pool; returned when the Lease goes away. Its
  // database is empty until Open() first opens the index.
  class Lease {
   public:
    Lease(Searcher* owner, std::unique_ptr<Handle> db) : owner_(owner), db_(std::move(db)) {}
    Lease(Lease&&) = default;
    ~Lease();
    // Open opens or reopens the index; throws what Xapian throws.
    Xapian::Database* Open();

   private:
    // OpenAfresh opens the index again (connecting again to its shard servers).
    void OpenAfresh();
    Searcher* owner_;
    std::unique_ptr<Handle> db_;
  };

  // `gone`: this searcher reads the gone databases of `path` (OpenGoneForReading).
  Searcher(std::string path, std::optional<Xapian::Database> db, SearcherOptions options,
           bool gone);

  // Borrow waits for a free handle (or room for a new one) and lends it.
  Lease Borrow();
  // BorrowIdle lends up to `n` more handles without waiting: those idle or with room to open;
  // none while another call waits for a handle.
  std::vector<Lease> BorrowIdle(int n);
  // Split opens `lease` and up to split_parts - 1 idle handles (kept in `helpers`; no more
  // than the index has shards) and returns the MatchSplit over them, `lease`'s first.
  MatchSplit Split(Lease& lease, std::vector<Lease>* helpers);
  absl::StatusOr<v1::SearchResponse> SearchWith(Lease& lease, const v1::SearchRequest& request,
                                                const StopCheck& stop);
  absl::StatusOr<v1::AggregateResponse> AggregateWith(Lease& lease,
                                                      const v1::AggregateRequest& request,
                                                      const StopCheck& stop);
  absl::StatusOr<v1::IssueWithComments> GetIssueWith(Lease& lease, const std::string& slug,
                                                     int64_t number);
  absl::StatusOr<v1::IndexStatus> GetIndexStatusWith(Lease& lease);
  // ConvertError maps a Xapian exception raised while doing `what` to a status.
  absl::Status ConvertError(const Xapian::Error& e, absl::string_view what) const;

  const std::string path_;  // empty for ForDatabase
  // True for the searcher of the gone issues (see gone_).
  const bool gone_mode_;
  // ForPath's searcher of the index's gone databases (common/index_layout.h, kGoneDirName):
  // searches, aggregations and exports whose query names `is:deleted` or `is:transferred`
  // (NamesGoneIssues) go there, and GetIssue of an issue the live index lacks looks there.
  // Null for ForDatabase and in the gone searcher itself.
  std::unique_ptr<Searcher> gone_;
  const SearcherOptions options_;
  // Whether the index's stub names remote shards (index::HasRemoteShards, read once when the
  // searcher is made; false for the gone issues' searcher, whose databases are local): sorted
  // queries then sort with the sort key slots (PageOptions::sort_by_key_slots).
  const bool remote_shards_;
  // RemoteLayout is the layout of the remote shards for `db`'s UUID (probed again when the
  // shard servers changed), or null: no remote shards, or the probe failed (tried again after
  // kLayoutRetry).
  std::shared_ptr<const RemoteShardLayout> RemoteLayout(const Xapian::Database& db);
  std::mutex layout_mu_;
  std::shared_ptr<const RemoteShardLayout> layout_;  // guarded by layout_mu_
  bool layout_probing_ = false;                       // guarded by layout_mu_
  absl::Time layout_failed_at_ = absl::InfinitePast();  // guarded by layout_mu_
  const int max_handles_;
  const int split_parts_;
  std::mutex mu_;
  std::condition_variable returned_;
  // Handles not lent out (guarded by mu_); an empty optional is not opened yet.
  std::vector<std::unique_ptr<Handle>> idle_;
  int handles_ = 0;  // handles in existence, idle or lent (guarded by mu_)
  int waiting_ = 0;  // calls waiting in Borrow for a handle (guarded by mu_)
  std::atomic<uint64_t> split_searches_{0};
};

}  // namespace issuescope::search

// IssueStore is a crawler worker's durable store: the issues and comments it crawled, their
// tombstones, and a change log (the worker's change feed) with dense, monotonic sequence numbers.
//
// Layout: one RocksDB database with one column family per record kind:
//   issues   : repo_slug '\0' BE64(number)               -> serialized v1::Issue
//   comments : repo_slug '\0' BE64(number) BE64(id)      -> serialized v1::Comment
//   changes  : BE64(seq)                                  -> kind(1) BE64(number) repo_slug
//   meta     : "store_id" -> hex id; "epoch/<slug>" -> BE64 fencing epoch;
//              "count/issues", "count/comments" -> BE64 record counts;
//              "data_loss" -> the report of the last recovery that lost writes
//   raw      : the raw bodies of fetched listing pages, zstd-compressed (crawler/raw_pages.cc):
//              'p' slug '\0' BE64(fetch µs) BE64(seq) -> header JSON '\n' body;
//              'x' slug '\0' item key -> the page key holding the item's newest copy;
//              'r' page key -> BE64 number of items whose newest copy is on the page;
//              's' -> BE64 next page seq;
//              'q' slug '\0' listing '\0' item key -> a quarantined item (QuarantinedItem, JSON):
//              an item the crawl could not use, kept as received with why, until the same item
//              is quarantined again (replaced) — never applied, never in the change feed.
//              Retention: a page is kept while it holds the newest fetched copy of at least one
//              issue or comment, so `issuescope reparse` can re-derive every record it covers and
//              the column family stays proportional to the live data.
// Every Apply*/MarkDeleted call commits its records, change-log entries, fencing epoch and
// counters in ONE WriteBatch with the write-ahead log on and synced (WriteOptions::sync), so a
// crash never splits them, and a page is on disk before the crawler reports the cursor past it
// (one fsync per page of 100, small next to the HTTP request that fetched it).
//
// Versions: a record is replaced only by a newer `updated_at`, or by an equal `updated_at` with
// different content (a later fetch wins). `fetched_at` alone never makes a change. A tombstone
// (Issue.deleted) is replaced only by a strictly newer `updated_at`.
//
// Write-ahead log damage: the WAL is first replayed strictly (only a torn last record, a write
// never acknowledged, is tolerated). When it is corrupt, the store is recovered to the last
// consistent point before the damage (RocksDB's point-in-time recovery), which loses every write
// after it; the loss is never silent: the store takes a new store id (so the coordinator grants
// each of its repositories a FULL crawl, ignoring cursors and ETags, and the indexer re-reads the
// feed from seq 0), logs it, keeps the report in meta "data_loss", and data_loss() returns it.
// A marker file (ISSUESCOPE-DATA-LOSS) written before the recovery makes this survive a crash.
//
// Ownership: the store owns its RocksDB handle; a caller-supplied Env must outlive it.
// Thread-safety: all methods are safe to call concurrently. Writers serialise on a mutex, so
// sequence numbers are dense and appear in commit order; readers do not block writers.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "issuescope/v1/model.pb.h"
#include "issuescope/v1/store.pb.h"
#include "rocksdb/db.h"
#include "rocksdb/env.h"
#include "rocksdb/options.h"

namespace issuescope::crawler {

// StoreOptions are the options for opening a store. Every field documents its Default.
struct StoreOptions {
  // RocksDB Env; nullptr means the default (on-disk) Env. Tests pass rocksdb::NewMemEnv(...).
  // Default: nullptr.
  rocksdb::Env* env = nullptr;
  // Create the store if missing. Default: true.
  bool create_if_missing = true;
};

// RawPage is one fetched listing page as the tracker sent it, with what is needed to parse it
// again (IssueStore::PutRawPage / ScanRawPages).
struct RawPage {
  // The repository as leased (it becomes the records' repo on reparse).
  v1::RepositoryRef repo;
  // "issues", "comments" (repository-wide) or "notes" (one issue's comments).
  std::string listing;
  // The request URL, without credentials.
  std::string url;
  // When the page was fetched (becomes the records' fetched_at on reparse).
  absl::Time fetched_at = absl::InfinitePast();
  // Whether the lease kept pull requests.
  bool include_pull_requests = true;
  // For "notes": the issue the comments belong to (number, key, html URL).
  int64_t issue_number = 0;
  std::string issue_key;
  std::string issue_url;
  // The response body as received.
  std::string body;
};

// QuarantinedItem is one listing item the crawl could not use (crawler/github_parse.h,
// BadItem): kept as received, with why, so it can be inspected (and reported) without blocking
// the rest of its page or repository (IssueStore::PutQuarantined / ScanQuarantined).
struct QuarantinedItem {
  // "issues", "comments" or "notes".
  std::string listing;
  // The request URL of the page, without credentials.
  std::string url;
  // When the page was fetched.
  absl::Time fetched_at = absl::InfinitePast();
  // Position on the page, and the item's key as sent ("number 12"; "" when unreadable).
  int64_t index = 0;
  std::string key;
  // What is wrong with it, naming the field.
  std::string error;
  // The item's JSON.
  std::string raw;
};

// StoreWriteCounts counts what one ApplyIssues or ApplyComments call changed.
struct StoreWriteCounts {
  // Records that were new or newer than the stored version.
  int64_t stored = 0;
  // Identical or older versions, skipped.
  int64_t unchanged = 0;
};

// IssueStore: see the file comment.
class IssueStore {
 public:
  // Open opens (or creates) the store at `path`. Errors: the RocksDB error converted (e.g.
  // INVALID_ARGUMENT when missing and !create_if_missing), DATA_LOSS for a corrupt change log or
  // meta record.
  static absl::StatusOr<std::unique_ptr<IssueStore>> Open(const std::string& path,
                                                          const StoreOptions& options = {});
  // ~IssueStore closes the database.
  ~IssueStore();
  IssueStore(const IssueStore&) = delete;
  IssueStore& operator=(const IssueStore&) = delete;

  // store_id is the random id fixed when the store was created (32 hex chars), replaced by a
  // new one when a corrupt write-ahead log lost writes (see the file comment).
  const std::string& store_id() const { return store_id_; }
  // data_loss is OK when no open of this store ever lost writes, else DATA_LOSS with the report
  // of the last loss (what was corrupt, the old and new store ids).
  const absl::Status& data_loss() const { return data_loss_; }
  // data_loss_at_open is true when this very Open recovered from a corrupt write-ahead log.
  bool data_loss_at_open() const { return data_loss_at_open_; }

  // ApplyIssues stores a page of issues of one repository, idempotently: an issue is written
  // only if it is new, or its updated_at is newer than the stored one, or its updated_at is
  // equal and its content (ignoring fetched_at) differs. Every write appends one UPSERT change.
  // Fencing: FAILED_PRECONDITION (nothing written) when `epoch` is lower than the highest epoch
  // this store has accepted for the repository; a higher epoch is recorded. INVALID_ARGUMENT
  // (nothing written) for an empty or malformed slug or an issue number <= 0.
  absl::StatusOr<StoreWriteCounts> ApplyIssues(absl::string_view repo_slug, uint64_t epoch,
                                          const std::vector<v1::Issue>& issues);
  // ApplyComments is the same for comments (keyed by repo, issue number, comment id; both must
  // be > 0). A comment's change names its issue, so the issue is re-indexed with the comment.
  absl::StatusOr<StoreWriteCounts> ApplyComments(absl::string_view repo_slug, uint64_t epoch,
                                            const std::vector<v1::Comment>& comments);
  // MarkDeleted keeps a tombstone (the stored issue with deleted = true, or a bare one when the
  // issue was never stored) and appends a DELETE change; `transferred_to` ("github:o/r#n") says
  // where a transferred issue went. Marking a tombstone again the same way is a no-op.
  absl::Status MarkDeleted(absl::string_view repo_slug, uint64_t epoch, int64_t number,
                           absl::string_view transferred_to = "");

  // GetIssue returns the issue (possibly a tombstone) with its comments, oldest first
  // (created_at, then id). NOT_FOUND when the issue itself is absent.
  absl::StatusOr<v1::IssueWithComments> GetIssue(absl::string_view repo_slug,
                                                 int64_t number) const;
  // ScanRepository calls `fn` for each stored issue of the repository (tombstones included) in
  // number order until it returns false.
  absl::Status ScanRepository(absl::string_view repo_slug,
                              const std::function<bool(const v1::Issue&)>& fn) const;
  // ReadChanges returns the changes with seq > from_seq, coalesced per issue (one event with the
  // highest seq), ordered by seq, each with the issue's current state and all its comments, at
  // most `max_events` (> 0) events. An event is DELETE when the issue is a tombstone, else
  // UPSERT. batch.last_seq is the highest seq covered (== from_seq when there is nothing new).
  // A batch takes no further issues once its events pass kMaxBatchBytes (it always holds one).
  absl::StatusOr<v1::ChangeBatch> ReadChanges(uint64_t from_seq, int max_events) const;
  // kMaxBatchBytes bounds a change batch's size (gRPC's default message limit is 4 MB).
  static constexpr size_t kMaxBatchBytes = 1 << 20;
  // last_seq is the highest sequence number in the change log (0 when empty).
  uint64_t last_seq() const;
  // WaitForChanges blocks until last_seq() > seq or `timeout` passes; returns last_seq().
  uint64_t WaitForChanges(uint64_t seq, absl::Duration timeout) const;
  // Info returns the id, last seq, and issue (tombstones included) and comment record counts.
  v1::StoreInfo Info() const;

  // PutRawPage keeps the raw body of one listing page of `repo_slug`; `item_keys` name the
  // records parsed from it (RawIssueItem / RawCommentItem). Each item's reference moves to this
  // page; pages left with no referenced item are deleted. A page with no items is not kept.
  // Not fenced and not synced (a cache for reparse; losing the newest pages in a crash only
  // means reparse re-derives older copies of those records).
  absl::Status PutRawPage(absl::string_view repo_slug, const RawPage& page,
                          const std::vector<std::string>& item_keys);
  // ScanRawPages calls `fn` for each kept page of `repo_slug` (all repositories when empty),
  // per repository in fetch order, until it returns false. DATA_LOSS for a corrupt page.
  absl::Status ScanRawPages(absl::string_view repo_slug,
                            const std::function<bool(const std::string& slug,
                                                     const RawPage& page)>& fn) const;
  // PutQuarantined keeps a listing item of `repo_slug` the crawl could not use; an item with the
  // same listing and key (or, without a key, the same fetch time and index) is replaced. Not
  // fenced and not synced, like PutRawPage.
  absl::Status PutQuarantined(absl::string_view repo_slug, const QuarantinedItem& item);
  // ScanQuarantined calls `fn` for each quarantined item of `repo_slug` (all repositories when
  // empty) until it returns false. DATA_LOSS for a corrupt record.
  absl::Status ScanQuarantined(
      absl::string_view repo_slug,
      const std::function<bool(const std::string& slug, const QuarantinedItem& item)>& fn) const;
  // RawPageCount counts the kept raw pages of `repo_slug` (all when empty).
  absl::StatusOr<int64_t> RawPageCount(absl::string_view repo_slug) const;
  // RawIssueItem / RawCommentItem are the item keys PutRawPage takes.
  static std::string RawIssueItem(int64_t number);
  static std::string RawCommentItem(int64_t issue_number, int64_t comment_id);
  // raw_compression names the raw column family's compression ("zstd", or "lz4"/"snappy"/"none"
  // when this RocksDB lacks zstd).
  const std::string& raw_compression() const { return raw_compression_; }
  // Epoch returns the highest fencing epoch accepted for `repo_slug` (0 when none).
  absl::StatusOr<uint64_t> Epoch(absl::string_view repo_slug) const;

 private:
  // Change is one decoded change-log entry.
  struct Change {
    v1::ChangeKind kind = v1::CHANGE_KIND_UNSPECIFIED;
    std::string repo_slug;
    int64_t number = 0;
  };
  class Writer;  // One write transaction (defined in the .cc).

  IssueStore() = default;

  absl::Status Recover();
  // ReportDataLoss turns a data-loss marker left by Open into a new store id and a "data_loss"
  // record (removing the marker), or loads the last recorded loss.
  absl::Status ReportDataLoss();
  // DataLossMarkerPath is the marker file Open writes before a lossy recovery.
  static std::string DataLossMarkerPath(const std::string& path);
  // LoadIssue reads one issue; *found is false when absent.
  absl::Status LoadIssue(const std::string& key, v1::Issue* issue, bool* found) const;
  // LoadCurrent reads an issue with its comments; the issue field is unset when absent.
  absl::StatusOr<v1::IssueWithComments> LoadCurrent(absl::string_view repo_slug, int64_t number,
                                                    bool* found) const;
  // RawColumnFamilyOptions are the raw column family's options (zstd when built in); sets
  // *compression to its name (crawler/raw_pages.cc).
  static rocksdb::ColumnFamilyOptions RawColumnFamilyOptions(std::string* compression);
  // Publish makes `seq` visible to last_seq() and wakes WaitForChanges.
  void Publish(uint64_t seq);

  std::unique_ptr<rocksdb::DB> db_;
  rocksdb::ColumnFamilyHandle* issues_cf_ = nullptr;
  rocksdb::ColumnFamilyHandle* comments_cf_ = nullptr;
  rocksdb::ColumnFamilyHandle* changes_cf_ = nullptr;
  rocksdb::ColumnFamilyHandle* meta_cf_ = nullptr;
  rocksdb::ColumnFamilyHandle* raw_cf_ = nullptr;
  std::string raw_compression_;
  // Serialises PutRawPage (its reference counts are read-modify-write).
  std::mutex raw_mu_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  std::string store_id_;
  std::string path_;
  rocksdb::Env* env_ = nullptr;
  absl::Status data_loss_;
  bool data_loss_at_open_ = false;

  // Serialises writers; guards the counters below while a batch is built.
  std::mutex write_mu_;
  std::atomic<int64_t> issue_count_{0};
  std::atomic<int64_t> comment_count_{0};

  // Guards last_seq_; WaitForChanges awaits on it.
  mutable absl::Mutex seq_mu_;
  uint64_t last_seq_ ABSL_GUARDED_BY(seq_mu_) = 0;
};

}  // namespace issuescope::crawler

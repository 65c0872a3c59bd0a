// IndexWriter: the one writer of a Xapian index, fed with change-feed batches of crawler
// workers' stores. Each issue is one document keyed by its unique term (index::IdTerm); the
// highest consumed sequence number of each store is kept in the index's metadata
// ("feed:<store_id>") and committed in the SAME Xapian commit as the documents it covers, so
// indexing is exactly-once across crashes: after a restart, a follower resumes from Position()
// and every event it gets again is either already indexed or not indexed at all.
//
// An issue is never rolled back: an incoming version (index::IssueVersion: the issue's updated_at,
// then its newest comment's, then its fetched_at) older than the indexed one
// (index::DocumentVersion) is skipped; equal versions replace.
//
// Commits: by default every Apply commits. With IndexWriterOptions::max_pending_events > 0,
// Applies are grouped into one Xapian transaction that commits when it holds that many events,
// when max_commit_delay has passed since it began (checked by Apply and FlushIfDue), on Flush,
// and on destruction. A crash loses the whole group — documents and positions together.
// The in-memory backend ("" or ":memory:") has no transactions and no durability.
//
// Deleted and transferred issues (tombstones: DELETE events, issues marked deleted) leave the
// index and go to its gone database (index::GonePath; index_layout.h), with their last indexed
// state, which search answers `is:deleted` / `is:transferred` from. A copy fetched before the
// issue was seen gone (the tombstone's fetched_at) does not bring it back; one fetched after
// does, and leaves the gone database (without fetch times, index::IndexVersion decides).
//
// Thread-safety: every method is safe to call concurrently (one mutex). Xapian exceptions never
// escape: they become absl statuses naming the operation.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "indexer/change_sink.h"
#include "indexer/tagger.h"
#include "issuescope/v1/store.pb.h"
#include "xapian.h"

namespace issuescope::indexer {

// IndexWriterOptions tunes commits and tagging.
struct IndexWriterOptions {
  // Group commits: commit once this many events are pending. 0 commits every Apply.
  // Default: 0.
  int max_pending_events = 0;
  // With grouping, commit a group at the latest this long after its first Apply (checked by
  // Apply and FlushIfDue). Default: 1 s.
  absl::Duration max_commit_delay = absl::Seconds(1);
  // Clock for max_commit_delay. nullptr means Clock::Real(). Not owned. Default: nullptr.
  Clock* clock = nullptr;
  // Tags each issue before it is indexed; nullptr leaves tags as they arrive. Not owned.
  // Default: nullptr.
  Tagger* tagger = nullptr;
  // Test hook: called (under the writer's mutex) right after every successful commit, with the
  // index path. Crash tests end the process from it. Default: none.
  std::function<void(const std::string& path)> after_commit;
};

// RetagBatchResult is what one IndexWriter::RetagBatch did.
struct RetagBatchResult {
  // Documents re-tagged in this batch.
  int64_t retagged = 0;
  // Highest document id looked at (the cursor to continue after).
  Xapian::docid last_docid = 0;
  // True when no document with a higher id remains.
  bool finished = false;
};

// RetagMetadata computes the metadata to commit with a re-tag batch from its result.
using RetagMetadata =
    std::function<std::vector<std::pair<std::string, std::string>>(const RetagBatchResult&)>;

class IndexWriter : public ChangeSink {
 public:
  // Open opens (creating) an on-disk Xapian database at `path`; "" or ":memory:" selects the
  // in-memory backend. FAILED_PRECONDITION "index DIR is locked by another indexer" when another
  // writer holds it; FAILED_PRECONDITION naming the path for any other opening error.
  static absl::StatusOr<std::unique_ptr<IndexWriter>> Open(const std::string& path,
                                                           IndexWriterOptions options = {});

  // ~IndexWriter commits a pending group (errors are logged).
  ~IndexWriter();
  IndexWriter(const IndexWriter&) = delete;
  IndexWriter& operator=(const IndexWriter&) = delete;

  // Apply indexes one batch of the feed of store `batch.store_id()`. Events with seq <= the
  // store's position are skipped; UPSERT with an issue replaces the document unless the indexed
  // version is newer (an issue the tracker reports deleted is removed instead); UPSERT without
  // an issue is skipped; DELETE removes the document unless the indexed version is newer than
  // the event's issue (a DELETE without issue state always removes). Then the position becomes
  // max(position, last_seq) and is committed with the documents (per the commit policy).
  // INVALID_ARGUMENT, with nothing written, for an empty store_id, an unknown event kind or an
  // event seq above last_seq. `result`, when given, receives the counts.
  //
  // When a failed commit discarded the pending group, every store whose position went back
  // gets ABORTED once on its next Apply (nothing written), so its follower resumes from
  // Position() instead of continuing above the discarded events.
  absl::Status Apply(const v1::ChangeBatch& batch, ApplyResult* result = nullptr) override;

  // Flush commits the pending group now (no-op without one).
  absl::Status Flush() override;
  // FlushIfDue commits the pending group if max_commit_delay has passed since it began.
  absl::Status FlushIfDue() override;

  // Position returns the highest consumed sequence number of a store (0 when unknown),
  // including a pending group's.
  uint64_t Position(absl::string_view store_id) const override;
  // Positions returns every store's position, sorted by store id.
  std::vector<std::pair<std::string, uint64_t>> Positions() const override;
  // CommittedPositions returns every store's committed position (without the pending group).
  std::vector<std::pair<std::string, uint64_t>> CommittedPositions() const override;
  // DocumentCount returns the number of indexed issues (including a pending group's).
  int64_t DocumentCount() const override;

  // RetagBatch re-tags, with `tagger`, up to `max_docs` documents whose id is above
  // `after_docid` (rebuilding each from its stored issue; document ids are kept), writes the
  // metadata `metadata(result)` returns, and commits them together with any pending group, so
  // readers see whole batches. DATA_LOSS naming the document when one holds no issue.
  // Documents with an id above `up_to_docid` are left alone (finished is then true). The batch
  // that finishes also rebuilds every document of the gone database with `tagger`.
  absl::StatusOr<RetagBatchResult> RetagBatch(Tagger* tagger, Xapian::docid after_docid,
                                              Xapian::docid up_to_docid, int max_docs,
                                              const RetagMetadata& metadata);
  // LastDocid returns the highest document id ever assigned (0 for a new index).
  absl::StatusOr<Xapian::docid> LastDocid() const;
  // GetMetadata returns a metadata value ("" when unset), including a pending group's.
  absl::StatusOr<std::string> GetMetadata(const std::string& key) const;
  // CommitMetadata sets metadata (an empty value removes the key) and commits it, together with
  // any pending group.
  absl::Status CommitMetadata(const std::vector<std::pair<std::string, std::string>>& entries);
  // Lookup returns the indexed issue `number` of `repo_slug` (including a pending group's);
  // NOT_FOUND when it is not indexed.
  absl::StatusOr<v1::IssueWithComments> Lookup(absl::string_view repo_slug, int64_t number) const;
  // LookupGone returns the gone record of issue `number` of `repo_slug` (including a pending
  // group's): its last indexed state, deleted, with transferred_to when it moved. NOT_FOUND
  // when the issue is not gone.
  absl::StatusOr<v1::IssueWithComments> LookupGone(absl::string_view repo_slug,
                                                   int64_t number) const;
  // GoneCount returns the number of gone issues (including a pending group's).
  int64_t GoneCount() const;
  // path returns the path the index was opened at ("" for in-memory).
  const std::string& path() const { return path_; }

 private:
  IndexWriter(std::string path, Xapian::WritableDatabase db, bool transactional,
              IndexWriterOptions options);

  absl::Status LoadPositionsLocked();
  // OpenGoneLocked opens (creating) the gone database (index::GonePath; in memory for the
  // in-memory backend) unless it is open.
  absl::Status OpenGoneLocked();
  // RecordGoneLocked writes the gone document of the issue a tombstone event is about: its
  // indexed state when it has one, else the event's, marked deleted with the event's
  // transferred_to. Throws what Xapian throws.
  void RecordGoneLocked(const std::string& term, const v1::ChangeEvent& event);
  // GoneSupersedesLocked is true when the gone database holds `term` at a version not older
  // than `incoming`'s. Throws what Xapian throws.
  bool GoneSupersedesLocked(const std::string& term, const v1::IssueWithComments& incoming);
  absl::Status BeginGroupLocked();
  absl::Status ApplyLocked(const v1::ChangeBatch& batch, ApplyResult* result);
  absl::Status CommitLocked();
  absl::Status RollbackLocked(absl::Status cause);

  const std::string path_;
  const bool transactional_;
  const IndexWriterOptions options_;
  Clock* const clock_;

  mutable std::mutex mu_;
  Xapian::WritableDatabase db_;
  // The gone database (index_layout.h, kGoneDirName): opened when it exists or on the first
  // tombstone; committed just before db_.
  std::optional<Xapian::WritableDatabase> gone_;
  // Positions including the pending group's; the committed ones are in the metadata.
  std::map<std::string, uint64_t, std::less<>> positions_;
  // Positions as of the last commit (or the open): what a crash would not take back.
  std::map<std::string, uint64_t, std::less<>> committed_;
  // Whether a group (transaction) is open, since when, and how many events it holds.
  bool in_group_ = false;
  absl::Time group_started_;
  int64_t group_events_ = 0;
  // Stores whose uncommitted events a failed commit discarded (see Apply).
  std::set<std::string, std::less<>> rewound_;
};

}  // namespace issuescope::indexer

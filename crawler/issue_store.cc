#include "crawler/issue_store.h"

#include <algorithm>
#include <map>
#include <random>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/repo_slug.h"
#include "common/rocksdb_status.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "store_keys.h"
#include "google/protobuf/util/message_differencer.h"
#include "rocksdb/write_batch.h"
#include "spdlog/spdlog.h"

namespace issuescope::crawler {
namespace {

using namespace store_keys;  // NOLINT: the store's own key layout

constexpr char kStoreIdKey[] = "store_id";
constexpr char kIssueCountKey[] = "count/issues";
constexpr char kCommentCountKey[] = "count/comments";
constexpr char kEpochPrefix[] = "epoch/";
constexpr char kDataLossKey[] = "data_loss";

// SameContent compares two records, ignoring fetched_at.
template <typename Record>
bool SameContent(Record a, Record b) {
  a.clear_fetched_at();
  b.clear_fetched_at();
  return google::protobuf::util::MessageDifferencer::Equals(a, b);
}

// ShouldReplace decides whether `incoming` replaces `stored` (see the header's version rules).
template <typename Record>
bool ShouldReplace(const Record& stored, const Record& incoming, bool stored_is_tombstone) {
  int cmp = CompareTimestamps(incoming.updated_at(), stored.updated_at());
  if (stored_is_tombstone) return cmp > 0;
  if (cmp != 0) return cmp > 0;
  return !SameContent(stored, incoming);
}

std::string NewStoreId() {
  std::random_device rd;
  std::mt19937_64 gen((static_cast<uint64_t>(rd()) << 32) ^ rd());
  std::string raw;
  PutBE64(&raw, gen());
  PutBE64(&raw, gen() ^ (static_cast<uint64_t>(rd()) << 32));
  return absl::BytesToHexString(raw);
}

absl::Status ReadCounter(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, const std::string& key,
                         uint64_t* out) {
  std::string value;
  rocksdb::Status s = db->Get(rocksdb::ReadOptions(), cf, key, &value);
  if (s.IsNotFound()) {
    *out = 0;
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(FromRocksStatus(s, absl::StrCat("reading meta record ", key)));
  if (value.size() != 8) {
    return absl::DataLossError(absl::StrCat("corrupt meta record ", key, ": ", value.size(),
                                            " bytes, want 8"));
  }
  *out = GetBE64(value);
  return absl::OkStatus();
}

// BatchBytes estimates the WriteBatch of a page of `records`: each serialized record, its key,
// its change-log entry and the batch's framing (an over-estimate costs only unused capacity).
template <typename Record>
size_t BatchBytes(const std::vector<Record>& records) {
  size_t bytes = 256;
  for (const Record& r : records) bytes += r.ByteSizeLong() + 192;
  return bytes;
}

}  // namespace

// Writer is one write transaction: it holds the store's write mutex, overlays the records it
// has staged on the stored ones, and commits everything in one WriteBatch. The records given to
// Put are referenced, not copied, until Commit (a page can be tens of MiB); `reserve_bytes`
// sizes the batch up front, so a large page is not copied while the batch grows.
class IssueStore::Writer {
 public:
  Writer(IssueStore* store, absl::string_view slug, size_t reserve_bytes = 0)
      : store_(store),
        slug_(slug),
        lock_(store->write_mu_),
        next_seq_(store->last_seq() + 1),
        batch_(reserve_bytes) {}

  // Fence rejects a stale epoch and stages a newer one.
  absl::Status Fence(uint64_t epoch) {
    uint64_t stored = 0;
    RETURN_IF_ERROR(ReadCounter(store_->db_.get(), store_->meta_cf_,
                                absl::StrCat(kEpochPrefix, slug_), &stored));
    if (epoch < stored) {
      return absl::FailedPreconditionError(
          absl::StrCat("stale lease for ", slug_, ": epoch ", epoch, " is older than epoch ",
                       stored, " already accepted by this store; stop writing"));
    }
    if (epoch > stored) {
      batch_.Put(store_->meta_cf_, absl::StrCat(kEpochPrefix, slug_), BE64(epoch));
      dirty_ = true;
    }
    return absl::OkStatus();
  }

  // Find looks a record up in the staged writes, then in the store.
  template <typename Record>
  absl::Status Find(rocksdb::ColumnFamilyHandle* cf, const std::string& key,
                    absl::string_view what, Record* out, bool* found) {
    auto it = staged_.find({cf, key});
    if (it != staged_.end()) {
      out->CopyFrom(*it->second);
      *found = true;
      return absl::OkStatus();
    }
    std::string value;
    {
      rocksdb::Status s = store_->db_->Get(rocksdb::ReadOptions(), cf, key, &value);
      if (s.IsNotFound()) {
        *found = false;
        return absl::OkStatus();
      }
      RETURN_IF_ERROR(FromRocksStatus(s, absl::StrCat("reading ", what)));
    }
    if (!out->ParseFromString(value)) {
      return absl::DataLossError(absl::StrCat("corrupt stored record of ", what));
    }
    *found = true;
    return absl::OkStatus();
  }

  // Put stages a record and its change-log entry; `record` must outlive Commit.
  void Put(rocksdb::ColumnFamilyHandle* cf, const std::string& key,
           const google::protobuf::Message& record, bool is_new, v1::ChangeKind kind,
           int64_t number) {
    batch_.Put(cf, key, record.SerializeAsString());
    staged_[{cf, key}] = &record;
    batch_.Put(store_->changes_cf_, BE64(next_seq_++), EncodeChange(kind, slug_, number));
    if (is_new) ++(cf == store_->issues_cf_ ? new_issues_ : new_comments_);
    dirty_ = true;
  }

  // Commit writes the batch (if anything is staged) and publishes its sequence numbers.
  absl::Status Commit() {
    if (!dirty_) return absl::OkStatus();
    int64_t issues = store_->issue_count_.load() + new_issues_;
    int64_t comments = store_->comment_count_.load() + new_comments_;
    batch_.Put(store_->meta_cf_, kIssueCountKey, BE64(static_cast<uint64_t>(issues)));
    batch_.Put(store_->meta_cf_, kCommentCountKey, BE64(static_cast<uint64_t>(comments)));
    rocksdb::WriteOptions options;  // WAL on and synced: a page is durable before it is reported.
    options.sync = true;
    RETURN_IF_ERROR(FromRocksStatus(store_->db_->Write(options, &batch_),
                                    absl::StrCat("writing a batch for ", slug_)));
    store_->issue_count_.store(issues);
    store_->comment_count_.store(comments);
    store_->Publish(next_seq_ - 1);
    return absl::OkStatus();
  }

 private:
  IssueStore* store_;
  std::string slug_;
  std::lock_guard<std::mutex> lock_;
  uint64_t next_seq_;
  rocksdb::WriteBatch batch_;
  std::map<std::pair<rocksdb::ColumnFamilyHandle*, std::string>, const google::protobuf::Message*>
      staged_;
  int64_t new_issues_ = 0;
  int64_t new_comments_ = 0;
  bool dirty_ = false;
};

absl::StatusOr<uint64_t> IssueStore::Epoch(absl::string_view repo_slug) const {
  uint64_t epoch = 0;
  RETURN_IF_ERROR(ReadCounter(db_.get(), meta_cf_, absl::StrCat(kEpochPrefix, repo_slug), &epoch));
  return epoch;
}

absl::StatusOr<std::unique_ptr<IssueStore>> IssueStore::Open(const std::string& path,
                                                             const StoreOptions& options) {
  rocksdb::DBOptions db_options;
  db_options.create_if_missing = options.create_if_missing;
  db_options.create_missing_column_families = true;
  if (options.env != nullptr) db_options.env = options.env;
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  for (const char* name : {"default", "issues", "comments", "changes", "meta"}) {
    families.emplace_back(name, rocksdb::ColumnFamilyOptions());
  }
  std::string raw_compression;
  families.emplace_back("raw", IssueStore::RawColumnFamilyOptions(&raw_compression));
  std::unique_ptr<IssueStore> store(new IssueStore());
  store->path_ = path;
  store->env_ = db_options.env;
  rocksdb::DB* db = nullptr;
  // First replay the WAL strictly: only a torn last record (a write that was never acknowledged)
  // is tolerated. Any other damage fails here instead of being cut off silently.
  db_options.wal_recovery_mode = rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
  rocksdb::Status opened = rocksdb::DB::Open(db_options, path, families, &store->handles_, &db);
  if (opened.IsCorruption()) {
    // Record the loss durably before the point-in-time open drops the log's damaged suffix (and
    // with it the evidence); Recover() turns the marker into a new store id and removes it.
    const std::string report =
        absl::StrCat("the write-ahead log of issue store ", path, " is corrupt (",
                     opened.ToString(), "); recovered to the last consistent point before the "
                     "damage, and every write after it is lost");
    spdlog::warn("issue store {}: corrupt write-ahead log ({}); recovering to the last "
                 "consistent point", path, opened.ToString());
    RETURN_IF_ERROR(FromRocksStatus(
        rocksdb::WriteStringToFile(db_options.env, report, DataLossMarkerPath(path),
                                   /*should_sync=*/true),
        absl::StrCat("recording the data loss of issue store ", path)));
    store->handles_.clear();
    db_options.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
    opened = rocksdb::DB::Open(db_options, path, families, &store->handles_, &db);
  }
  RETURN_IF_ERROR(FromRocksStatus(opened, absl::StrCat("opening issue store ", path)));
  store->db_.reset(db);
  store->issues_cf_ = store->handles_[1];
  store->comments_cf_ = store->handles_[2];
  store->changes_cf_ = store->handles_[3];
  store->meta_cf_ = store->handles_[4];
  store->raw_cf_ = store->handles_[5];
  store->raw_compression_ = raw_compression;
  RETURN_IF_ERROR(store->Recover());
  return store;
}

IssueStore::~IssueStore() {
  if (db_ == nullptr) return;
  for (rocksdb::ColumnFamilyHandle* handle : handles_) db_->DestroyColumnFamilyHandle(handle);
  db_->Close().PermitUncheckedError();
}

absl::Status IssueStore::Recover() {
  std::string id;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), meta_cf_, kStoreIdKey, &id);
  if (s.IsNotFound()) {
    id = NewStoreId();
    rocksdb::WriteOptions write_options;
    write_options.sync = true;
    RETURN_IF_ERROR(FromRocksStatus(db_->Put(write_options, meta_cf_, kStoreIdKey, id),
                                    "writing the store id"));
  } else {
    RETURN_IF_ERROR(FromRocksStatus(s, "reading the store id"));
    if (id.size() < 16) return absl::DataLossError("corrupt meta record store_id: too short");
  }
  store_id_ = id;
  RETURN_IF_ERROR(ReportDataLoss());

  uint64_t count = 0;
  RETURN_IF_ERROR(ReadCounter(db_.get(), meta_cf_, kIssueCountKey, &count));
  issue_count_.store(static_cast<int64_t>(count));
  RETURN_IF_ERROR(ReadCounter(db_.get(), meta_cf_, kCommentCountKey, &count));
  comment_count_.store(static_cast<int64_t>(count));

  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), changes_cf_));
  it->SeekToLast();
  uint64_t last = 0;
  if (it->Valid()) {
    if (it->key().size() != 8) {
      return absl::DataLossError(absl::StrCat("corrupt change-log key \"",
                                              absl::CHexEscape(it->key().ToString()), "\""));
    }
    last = GetBE64(absl::string_view(it->key().data(), it->key().size()));
  }
  RETURN_IF_ERROR(FromRocksStatus(it->status(), "reading the last change-log entry"));
  Publish(last);
  return absl::OkStatus();
}

std::string IssueStore::DataLossMarkerPath(const std::string& path) {
  return path + "/ISSUESCOPE-DATA-LOSS";
}

absl::Status IssueStore::ReportDataLoss() {
  const std::string marker = DataLossMarkerPath(path_);
  rocksdb::Status exists = env_->FileExists(marker);
  if (exists.IsNotFound()) {
    // No loss at this open; report the last one recorded, if any.
    std::string last;
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), meta_cf_, kDataLossKey, &last);
    if (s.ok()) {
      data_loss_ = absl::DataLossError(last);
    } else if (!s.IsNotFound()) {
      return FromRocksStatus(s, "reading the data-loss record");
    }
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(FromRocksStatus(exists, absl::StrCat("looking for ", marker)));
  std::string report;
  RETURN_IF_ERROR(FromRocksStatus(rocksdb::ReadFileToString(env_, marker, &report),
                                  absl::StrCat("reading ", marker)));
  // What was lost is unknown, so the store takes a new id: the coordinator grants a FULL crawl
  // of every repository whose cursor an older id set (its ETags and cursor say nothing about
  // this store any more), and the indexer reads the whole change feed again from seq 0 (the
  // lost sequence numbers will be handed out again).
  const std::string old_id = store_id_;
  store_id_ = NewStoreId();
  const std::string message =
      absl::StrCat(report, ". At ", absl::FormatTime(absl::RFC3339_sec, absl::Now(),
                                                     absl::UTCTimeZone()),
                   " the store id changed from ", old_id, " to ", store_id_,
                   ", so every repository it held is crawled in full again");
  rocksdb::WriteBatch batch;
  batch.Put(meta_cf_, kStoreIdKey, store_id_);
  batch.Put(meta_cf_, kDataLossKey, message);
  rocksdb::WriteOptions write_options;
  write_options.sync = true;
  RETURN_IF_ERROR(FromRocksStatus(db_->Write(write_options, &batch),
                                  "recording the new store id after a data loss"));
  RETURN_IF_ERROR(FromRocksStatus(env_->DeleteFile(marker), absl::StrCat("removing ", marker)));
  spdlog::error("DATA_LOSS: {}", message);
  data_loss_ = absl::DataLossError(message);
  data_loss_at_open_ = true;
  return absl::OkStatus();
}

void IssueStore::Publish(uint64_t seq) {
  absl::MutexLock lock(&seq_mu_);
  last_seq_ = seq;
}

uint64_t IssueStore::last_seq() const {
  absl::MutexLock lock(&seq_mu_);
  return last_seq_;
}

uint64_t IssueStore::WaitForChanges(uint64_t seq, absl::Duration timeout) const {
  absl::MutexLock lock(&seq_mu_);
  auto advanced = [this, seq]() { return last_seq_ > seq; };
  seq_mu_.AwaitWithTimeout(absl::Condition(&advanced), timeout);
  return last_seq_;
}

absl::StatusOr<StoreWriteCounts> IssueStore::ApplyIssues(absl::string_view repo_slug, uint64_t epoch,
                                                    const std::vector<v1::Issue>& issues) {
  RETURN_IF_ERROR(CheckSlug(repo_slug));
  for (size_t i = 0; i < issues.size(); ++i) {
    if (issues[i].number() <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("issue ", i, " of the page for ", repo_slug,
                                                     " has number ", issues[i].number(),
                                                     "; numbers must be > 0"));
    }
  }
  Writer writer(this, repo_slug, BatchBytes(issues));
  RETURN_IF_ERROR(writer.Fence(epoch));
  StoreWriteCounts result;
  for (const v1::Issue& issue : issues) {
    std::string key = IssueRowKey(repo_slug, issue.number());
    v1::Issue stored;
    bool found = false;
    RETURN_IF_ERROR(writer.Find(issues_cf_, key, issuescope::IssueKey(repo_slug, issue.number()),
                                &stored, &found));
    if (found && !ShouldReplace(stored, issue, stored.deleted())) {
      ++result.unchanged;
      continue;
    }
    writer.Put(issues_cf_, key, issue, !found,
               issue.deleted() ? v1::CHANGE_KIND_DELETE : v1::CHANGE_KIND_UPSERT, issue.number());
    ++result.stored;
  }
  RETURN_IF_ERROR(writer.Commit());
  return result;
}

absl::StatusOr<StoreWriteCounts> IssueStore::ApplyComments(absl::string_view repo_slug,
                                                      uint64_t epoch,
                                                      const std::vector<v1::Comment>& comments) {
  RETURN_IF_ERROR(CheckSlug(repo_slug));
  for (size_t i = 0; i < comments.size(); ++i) {
    if (comments[i].issue_number() <= 0 || comments[i].id() <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "comment ", i, " of the page for ", repo_slug, " has issue number ",
          comments[i].issue_number(), " and id ", comments[i].id(), "; both must be > 0"));
    }
  }
  Writer writer(this, repo_slug, BatchBytes(comments));
  RETURN_IF_ERROR(writer.Fence(epoch));
  StoreWriteCounts result;
  for (const v1::Comment& comment : comments) {
    std::string key = CommentKey(repo_slug, comment.issue_number(), comment.id());
    v1::Comment stored;
    bool found = false;
    RETURN_IF_ERROR(writer.Find(
        comments_cf_, key,
        absl::StrCat("comment ", comment.id(), " of ",
                     issuescope::IssueKey(repo_slug, comment.issue_number())),
        &stored, &found));
    if (found && !ShouldReplace(stored, comment, false)) {
      ++result.unchanged;
      continue;
    }
    writer.Put(comments_cf_, key, comment, !found, v1::CHANGE_KIND_UPSERT,
               comment.issue_number());
    ++result.stored;
  }
  RETURN_IF_ERROR(writer.Commit());
  return result;
}

absl::Status IssueStore::MarkDeleted(absl::string_view repo_slug, uint64_t epoch,
                                     int64_t number, absl::string_view transferred_to) {
  RETURN_IF_ERROR(CheckSlug(repo_slug));
  if (number <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot delete issue ", number, " of ", repo_slug, ": numbers must be > 0"));
  }
  Writer writer(this, repo_slug);
  RETURN_IF_ERROR(writer.Fence(epoch));
  std::string key = IssueRowKey(repo_slug, number);
  v1::Issue issue;
  bool found = false;
  RETURN_IF_ERROR(
      writer.Find(issues_cf_, key, issuescope::IssueKey(repo_slug, number), &issue, &found));
  if (!found) {
    absl::StatusOr<v1::RepositoryRef> repo = ParseRepoSpec(repo_slug);
    if (repo.ok()) *issue.mutable_repo() = *repo;
    issue.set_number(number);
    issue.set_key(absl::StrCat(number));
  }
  if (!issue.deleted() || issue.transferred_to() != transferred_to) {
    issue.set_deleted(true);
    issue.set_transferred_to(std::string(transferred_to));
    // Seen gone now: the tombstone is newer than every copy fetched before (the indexer keeps a
    // replayed older copy from bringing the issue back).
    *issue.mutable_fetched_at() = ToProto(absl::Now());
    writer.Put(issues_cf_, key, issue, !found, v1::CHANGE_KIND_DELETE, number);
  }
  return writer.Commit();
}

}  // namespace issuescope::crawler

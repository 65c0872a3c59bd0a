#include "indexer/index_writer.h"

#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/index_document.h"
#include "common/index_layout.h"
#include "common/xapian_status.h"
#include "common/index_schema.h"
#include "common/repo_slug.h"
#include "common/time_util.h"
#include "spdlog/spdlog.h"

namespace issuescope::indexer {
namespace {

std::string FeedKey(absl::string_view store_id) {
  return absl::StrCat(index::kFeedMetadataPrefix, store_id);
}

bool IsInMemoryPath(const std::string& path) { return path.empty() || path == ":memory:"; }

// The unique term of the document an event is about: the issue's own (the term BuildDocument
// gives it) when the event carries the issue, else the event's repository slug and number.
std::string EventIdTerm(const v1::ChangeEvent& event) {
  if (event.current().has_issue()) {
    const v1::Issue& issue = event.current().issue();
    return index::IdTerm(RepoSlug(issue.repo()), issue.number());
  }
  return index::IdTerm(event.repo_slug(), event.number());
}

// ValidateBatch checks a batch before anything is written, so a bad batch changes nothing.
absl::Status ValidateBatch(const v1::ChangeBatch& batch) {
  if (batch.store_id().empty()) {
    return absl::InvalidArgumentError("change batch has no store_id");
  }
  for (const v1::ChangeEvent& event : batch.events()) {
    if (event.seq() > batch.last_seq()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "change batch of store ", batch.store_id(), ": event seq ", event.seq(),
          " is above the batch's last_seq ", batch.last_seq()));
    }
    if (event.kind() != v1::CHANGE_KIND_UPSERT && event.kind() != v1::CHANGE_KIND_DELETE) {
      return absl::InvalidArgumentError(absl::StrCat(
          "change batch of store ", batch.store_id(), ": event seq ", event.seq(),
          " has unknown kind ", static_cast<int>(event.kind())));
    }
    if (event.kind() == v1::CHANGE_KIND_DELETE && !event.current().has_issue() &&
        event.repo_slug().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "change batch of store ", batch.store_id(), ": DELETE event seq ", event.seq(),
          " names no repository"));
    }
  }
  return absl::OkStatus();
}

absl::Status XapianError(absl::string_view operation, const Xapian::Error& e) {
  return FromXapianError(e, operation);
}

// TombstoneWins says whether a tombstone (`tomb`: the issue as last seen, fetched_at = when it
// was seen gone) outranks a copy of the same issue (`copy`). Both observed: by when, since a
// copy fetched before the issue was seen gone is older news, whatever its updated_at or
// comments, and one fetched after means the issue is back. Else (no fetch times, as in older
// data) by index::IndexVersion, ties to the tombstone.
bool TombstoneWins(const v1::IssueWithComments& tomb, const v1::IssueWithComments& copy) {
  const absl::Time seen_gone = FromProto(tomb.issue().fetched_at());
  const absl::Time fetched = FromProto(copy.issue().fetched_at());
  if (seen_gone > absl::UnixEpoch() && fetched > absl::UnixEpoch()) return seen_gone >= fetched;
  return !(index::IssueVersion(tomb) < index::IssueVersion(copy));
}

}  // namespace

absl::StatusOr<std::unique_ptr<IndexWriter>> IndexWriter::Open(const std::string& path,
                                                               IndexWriterOptions options) {
  const bool in_memory = IsInMemoryPath(path);
  Xapian::WritableDatabase db;
  try {
    if (in_memory) {
      db = Xapian::WritableDatabase(std::string(), Xapian::DB_BACKEND_INMEMORY);
    } else {
      db = Xapian::WritableDatabase(path, Xapian::DB_CREATE_OR_OPEN);
    }
  } catch (const Xapian::DatabaseLockError&) {
    return absl::FailedPreconditionError(
        absl::StrCat("index ", path, " is locked by another indexer"));
  } catch (const Xapian::Error& e) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open index ", path, ": ", e.get_description()));
  }
  std::unique_ptr<IndexWriter> writer(new IndexWriter(in_memory ? std::string() : path,
                                                      std::move(db), !in_memory, options));
  std::lock_guard<std::mutex> lock(writer->mu_);
  std::error_code ec;
  if (!in_memory && std::filesystem::exists(index::GonePath(path), ec)) {
    absl::Status gone = writer->OpenGoneLocked();
    if (!gone.ok()) return gone;
  }
  absl::Status loaded = writer->LoadPositionsLocked();
  if (!loaded.ok()) return loaded;
  return writer;
}

IndexWriter::IndexWriter(std::string path, Xapian::WritableDatabase db, bool transactional,
                         IndexWriterOptions options)
    : path_(std::move(path)),
      transactional_(transactional),
      options_(options),
      clock_(options.clock != nullptr ? options.clock : Clock::Real()),
      db_(std::move(db)) {}

IndexWriter::~IndexWriter() {
  std::lock_guard<std::mutex> lock(mu_);
  absl::Status status = CommitLocked();
  if (!status.ok()) spdlog::error("final commit of index {} failed: {}", path_, status.ToString());
  try {
    if (gone_) gone_->close();
    db_.close();
  } catch (const Xapian::Error& e) {
    spdlog::error("closing index {} failed: {}", path_, e.get_description());
  }
}

absl::Status IndexWriter::OpenGoneLocked() {
  if (gone_) return absl::OkStatus();
  const std::string gone_path = index::GonePath(path_);
  try {
    if (path_.empty()) {
      gone_.emplace(std::string(), Xapian::DB_BACKEND_INMEMORY);
    } else {
      gone_.emplace(gone_path, Xapian::DB_CREATE_OR_OPEN);
      // Opened inside a group: its writes join the group (committed or cancelled with it).
      if (in_group_ && transactional_) gone_->begin_transaction(/*flushed=*/true);
    }
  } catch (const Xapian::Error& e) {
    gone_.reset();
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot open the gone database ", gone_path, ": ", e.get_description()));
  }
  return absl::OkStatus();
}

bool IndexWriter::GoneSupersedesLocked(const std::string& term,
                                       const v1::IssueWithComments& incoming) {
  if (!gone_) return false;
  Xapian::PostingIterator it = gone_->postlist_begin(term);
  if (it == gone_->postlist_end(term)) return false;
  // A copy observed before the issue was seen gone (a replay, another worker's older store)
  // does not bring the issue back; one fetched after it does (TombstoneWins).
  absl::StatusOr<v1::IssueWithComments> tomb = index::ReadDocument(gone_->get_document(*it));
  if (!tomb.ok()) return false;
  return TombstoneWins(*tomb, incoming);
}

void IndexWriter::RecordGoneLocked(const std::string& term, const v1::ChangeEvent& event) {
  const bool has_issue = event.current().has_issue();
  v1::IssueWithComments last;
  bool have = false;
  bool tagged = false;
  Xapian::PostingIterator live = db_.postlist_begin(term);
  if (live != db_.postlist_end(term)) {
    // The indexed state is the fullest (comments, tags); the event says where it went.
    absl::StatusOr<v1::IssueWithComments> indexed = index::ReadDocument(db_.get_document(*live));
    if (indexed.ok()) {
      last = *std::move(indexed);
      have = tagged = true;
    }
  }
  if (!have) {
    Xapian::PostingIterator gone = gone_->postlist_begin(term);
    if (gone != gone_->postlist_end(term)) {
      // Gone already (e.g. a deletion now known as a transfer): keep what was recorded, unless
      // the event is older than the record.
      absl::StatusOr<v1::IssueWithComments> recorded =
          index::ReadDocument(gone_->get_document(*gone));
      if (recorded.ok()) {
        // An older tombstone (seen gone earlier) changes nothing.
        if (has_issue && FromProto(event.current().issue().fetched_at()) <
                             FromProto(recorded->issue().fetched_at())) {
          return;
        }
        last = *std::move(recorded);
        have = tagged = true;
      }
    }
  }
  if (!have && has_issue) {
    last = event.current();
    have = true;
  }
  if (!have) {
    absl::StatusOr<v1::RepositoryRef> repo = ParseRepoSpec(event.repo_slug());
    if (repo.ok()) *last.mutable_issue()->mutable_repo() = *repo;
    last.mutable_issue()->set_number(event.number());
  }
  v1::Issue* issue = last.mutable_issue();
  issue->set_deleted(true);
  if (has_issue) {
    const v1::Issue& tomb = event.current().issue();
    issue->set_transferred_to(tomb.transferred_to());
    // The tombstone's version: what GoneSupersedesLocked compares later copies with.
    if (tomb.has_updated_at()) *issue->mutable_updated_at() = tomb.updated_at();
    if (tomb.has_fetched_at()) *issue->mutable_fetched_at() = tomb.fetched_at();
  }
  if (!tagged && options_.tagger != nullptr && !issue->title().empty()) {
    options_.tagger->Tag(&last);
  }
  gone_->replace_document(term, index::BuildGoneDocument(last));
}

absl::Status IndexWriter::LoadPositionsLocked() {
  positions_.clear();
  try {
    const std::string prefix = index::kFeedMetadataPrefix;
    for (auto it = db_.metadata_keys_begin(prefix); it != db_.metadata_keys_end(prefix); ++it) {
      const std::string key = *it;
      const std::string value = db_.get_metadata(key);
      uint64_t seq = 0;
      if (!absl::SimpleAtoi(value, &seq)) {
        return absl::DataLossError(absl::StrCat("index ", path_, ": metadata ", key,
                                                " is not a sequence number: \"", value, "\""));
      }
      positions_[key.substr(prefix.size())] = seq;
    }
  } catch (const Xapian::Error& e) {
    return XapianError(absl::StrCat("reading feed positions of index ", path_), e);
  }
  committed_ = positions_;
  return absl::OkStatus();
}

absl::Status IndexWriter::Apply(const v1::ChangeBatch& batch, ApplyResult* result) {
  ApplyResult local;
  std::lock_guard<std::mutex> lock(mu_);
  absl::Status status = ApplyLocked(batch, &local);
  if (result != nullptr) *result = local;
  return status;
}

absl::Status IndexWriter::BeginGroupLocked() {
  if (in_group_) return absl::OkStatus();
  if (transactional_) {
    // The gone database first, and cancelled again if the live one cannot begin: both or
    // neither are in the group.
    if (gone_) gone_->begin_transaction(/*flushed=*/true);
    try {
      db_.begin_transaction(/*flushed=*/true);
    } catch (const Xapian::Error&) {
      if (gone_) gone_->cancel_transaction();
      throw;
    }
  }
  in_group_ = true;
  group_started_ = clock_->Now();
  group_events_ = 0;
  return absl::OkStatus();
}

absl::Status IndexWriter::ApplyLocked(const v1::ChangeBatch& batch, ApplyResult* result) {
  if (absl::Status valid = ValidateBatch(batch); !valid.ok()) return valid;
  if (auto rewound = rewound_.find(batch.store_id()); rewound != rewound_.end()) {
    rewound_.erase(rewound);
    auto at = positions_.find(batch.store_id());
    return absl::AbortedError(absl::StrCat(
        "index ", path_, ": a failed commit discarded uncommitted events of store ",
        batch.store_id(), "; resume from seq ", at == positions_.end() ? 0 : at->second));
  }
  auto found = positions_.find(batch.store_id());
  const uint64_t position = found == positions_.end() ? 0 : found->second;
  if (batch.last_seq() <= position) {
    result->already_consumed = batch.events_size();
    return absl::OkStatus();
  }
  for (const v1::ChangeEvent& event : batch.events()) {
    if (event.seq() > position &&
        (event.kind() == v1::CHANGE_KIND_DELETE || event.current().issue().deleted())) {
      if (absl::Status opened = OpenGoneLocked(); !opened.ok()) return opened;
      break;
    }
  }
  try {
    if (absl::Status begun = BeginGroupLocked(); !begun.ok()) return begun;
    // A shard that starts empty is written in this build's text scheme from its first
    // document; one that holds older documents keeps its recorded scheme until a re-tag pass
    // has rebuilt them all (Retagger, RetagBatch).
    const bool fresh = db_.get_doccount() == 0;
    for (const v1::ChangeEvent& event : batch.events()) {
      if (event.seq() <= position) {
        ++result->already_consumed;
        continue;
      }
      const bool has_issue = event.current().has_issue();
      if (event.kind() == v1::CHANGE_KIND_UPSERT && !has_issue) {
        ++result->without_issue;
        continue;
      }
      const std::string term = EventIdTerm(event);
      const bool gone = event.kind() == v1::CHANGE_KIND_DELETE || event.current().issue().deleted();
      if (has_issue && gone) {
        Xapian::PostingIterator it = db_.postlist_begin(term);
        if (it != db_.postlist_end(term)) {
          absl::StatusOr<v1::IssueWithComments> indexed =
              index::ReadDocument(db_.get_document(*it));
          if (indexed.ok() && !TombstoneWins(event.current(), *indexed)) {
            spdlog::debug("store {} seq {}: {} was fetched after this tombstone was seen; kept "
                          "the indexed", batch.store_id(), event.seq(), term);
            ++result->stale;
            continue;
          }
        }
      } else if (has_issue) {
        Xapian::PostingIterator it = db_.postlist_begin(term);
        if (it != db_.postlist_end(term)) {
          // Equal versions replace (a page applied twice rewrites the same document).
          const index::IndexVersion indexed = index::DocumentVersion(db_.get_document(*it));
          const index::IndexVersion incoming = index::IssueVersion(event.current());
          if (incoming < indexed) {
            spdlog::debug("store {} seq {}: {} version {} is older than the indexed {}; kept the "
                          "indexed", batch.store_id(), event.seq(), term, incoming.DebugString(),
                          indexed.DebugString());
            ++result->stale;
            continue;
          }
        }
      }
      if (!gone && GoneSupersedesLocked(term, event.current())) {
        spdlog::debug("store {} seq {}: {} is not newer than its tombstone; kept it gone",
                      batch.store_id(), event.seq(), term);
        ++result->stale;
        continue;
      }
      if (gone) {
        RecordGoneLocked(term, event);
        db_.delete_document(term);
        ++result->deleted;
        continue;
      }
      if (gone_ && gone_->term_exists(term)) gone_->delete_document(term);
      if (options_.tagger != nullptr) {
        v1::IssueWithComments tagged = event.current();
        options_.tagger->Tag(&tagged);
        db_.replace_document(term, index::BuildDocument(tagged));
      } else {
        db_.replace_document(term, index::BuildDocument(event.current()));
      }
      ++result->upserted;
    }
    db_.set_metadata(FeedKey(batch.store_id()), std::to_string(batch.last_seq()));
    if (fresh) db_.set_metadata(index::kTextSchemeKey, index::kTextScheme);
  } catch (const Xapian::Error& e) {
    absl::Status cause = RollbackLocked(XapianError(
        absl::StrCat("indexing batch of store ", batch.store_id(), " up to seq ", batch.last_seq()),
        e));
    rewound_.erase(batch.store_id());  // this batch's caller gets the error itself
    return cause;
  }
  positions_[batch.store_id()] = batch.last_seq();
  group_events_ += result->consumed();
  const bool due = options_.max_pending_events <= 0 ||
                   group_events_ >= options_.max_pending_events ||
                   clock_->Now() - group_started_ >= options_.max_commit_delay;
  return due ? CommitLocked() : absl::OkStatus();
}

absl::Status IndexWriter::Flush() {
  std::lock_guard<std::mutex> lock(mu_);
  return CommitLocked();
}

absl::Status IndexWriter::FlushIfDue() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!in_group_ || clock_->Now() - group_started_ < options_.max_commit_delay) {
    return absl::OkStatus();
  }
  return CommitLocked();
}

absl::Status IndexWriter::CommitLocked() {
  if (!in_group_) return absl::OkStatus();
  try {
    // The gone database first: a crash between the two commits replays the events, which
    // find their tombstones already recorded (RecordGoneLocked replaces, idempotently).
    if (gone_) {
      if (transactional_) {
        gone_->commit_transaction();
      } else {
        gone_->commit();
      }
    }
    if (transactional_) {
      db_.commit_transaction();
    } else {
      db_.commit();
    }
  } catch (const Xapian::Error& e) {
    return RollbackLocked(XapianError(absl::StrCat("committing index ", path_), e));
  }
  in_group_ = false;
  group_events_ = 0;
  committed_ = positions_;
  if (options_.after_commit) options_.after_commit(path_);
  return absl::OkStatus();
}

absl::Status IndexWriter::RollbackLocked(absl::Status cause) {
  if (in_group_ && transactional_) {
    try {
      db_.cancel_transaction();
    } catch (const Xapian::Error& e) {
      spdlog::error("cancelling the pending group of index {} failed: {}", path_,
                    e.get_description());
    }
    // The gone database's part of the group goes too (its transaction may already be
    // committed when the live commit failed: the replay rewrites the same records).
    try {
      if (gone_) gone_->cancel_transaction();
    } catch (const Xapian::InvalidOperationError&) {
      // No transaction open: it committed before the live commit failed, or its own commit
      // failed (Xapian ends the transaction first). Whatever that left buffered is discarded
      // here, so a later begin or close does not commit it.
      try {
        gone_->begin_transaction(/*flushed=*/false);
        gone_->cancel_transaction();
      } catch (const Xapian::Error& e) {
        spdlog::error("discarding the gone database's changes of {} failed: {}", path_,
                      e.get_description());
      }
    } catch (const Xapian::Error& e) {
      spdlog::error("cancelling the pending group of the gone database of {} failed: {}", path_,
                    e.get_description());
    }
  }
  in_group_ = false;
  group_events_ = 0;
  // Positions go back to the committed ones, which cover exactly the committed documents.
  const std::map<std::string, uint64_t, std::less<>> before = positions_;
  absl::Status reloaded = LoadPositionsLocked();
  for (const auto& [store, seq] : before) {
    auto now = positions_.find(store);
    if (now == positions_.end() || now->second < seq) rewound_.insert(store);
  }
  if (!reloaded.ok()) spdlog::error("{}", reloaded.ToString());
  spdlog::error("{}; the pending group was discarded", cause.ToString());
  return cause;
}

uint64_t IndexWriter::Position(absl::string_view store_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = positions_.find(store_id);
  return it == positions_.end() ? 0 : it->second;
}

std::vector<std::pair<std::string, uint64_t>> IndexWriter::Positions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {positions_.begin(), positions_.end()};
}

std::vector<std::pair<std::string, uint64_t>> IndexWriter::CommittedPositions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {committed_.begin(), committed_.end()};
}

int64_t IndexWriter::DocumentCount() const {
  std::lock_guard<std::mutex> lock(mu_);
  try {
    return static_cast<int64_t>(db_.get_doccount());
  } catch (const Xapian::Error& e) {
    spdlog::error("counting documents of index {} failed: {}", path_, e.get_description());
    return 0;
  }
}

absl::StatusOr<v1::IssueWithComments> IndexWriter::Lookup(absl::string_view repo_slug,
                                                          int64_t number) const {
  const std::string term = index::IdTerm(repo_slug, number);
  std::lock_guard<std::mutex> lock(mu_);
  try {
    Xapian::PostingIterator it = db_.postlist_begin(term);
    if (it == db_.postlist_end(term)) {
      return absl::NotFoundError(absl::StrCat("issue ", term.substr(1), " is not indexed"));
    }
    return index::ReadDocument(db_.get_document(*it));
  } catch (const Xapian::Error& e) {
    return XapianError(absl::StrCat("looking up ", term.substr(1), " in index ", path_), e);
  }
}

absl::StatusOr<v1::IssueWithComments> IndexWriter::LookupGone(absl::string_view repo_slug,
                                                              int64_t number) const {
  const std::string term = index::IdTerm(repo_slug, number);
  std::lock_guard<std::mutex> lock(mu_);
  try {
    if (gone_) {
      Xapian::PostingIterator it = gone_->postlist_begin(term);
      if (it != gone_->postlist_end(term)) return index::ReadDocument(gone_->get_document(*it));
    }
    return absl::NotFoundError(absl::StrCat("issue ", term.substr(1), " is not gone"));
  } catch (const Xapian::Error& e) {
    return XapianError(absl::StrCat("looking up ", term.substr(1), " in the gone database of ",
                                    path_), e);
  }
}

int64_t IndexWriter::GoneCount() const {
  std::lock_guard<std::mutex> lock(mu_);
  try {
    return gone_ ? static_cast<int64_t>(gone_->get_doccount()) : 0;
  } catch (const Xapian::Error& e) {
    spdlog::error("counting gone issues of index {} failed: {}", path_, e.get_description());
    return 0;
  }
}

absl::StatusOr<RetagBatchResult> IndexWriter::RetagBatch(Tagger* tagger,
                                                         Xapian::docid after_docid,
                                                         Xapian::docid up_to_docid, int max_docs,
                                                         const RetagMetadata& metadata) {
  RetagBatchResult result;
  result.last_docid = after_docid;
  std::lock_guard<std::mutex> lock(mu_);
  try {
    if (absl::Status begun = BeginGroupLocked(); !begun.ok()) return begun;
    Xapian::PostingIterator it = db_.postlist_begin(std::string());
    const Xapian::PostingIterator end = db_.postlist_end(std::string());
    if (it != end && after_docid > 0) it.skip_to(after_docid + 1);
    for (; it != end && *it <= up_to_docid && result.retagged < max_docs; ++it) {
      const Xapian::docid docid = *it;
      absl::StatusOr<v1::IssueWithComments> stored = index::ReadDocument(db_.get_document(docid));
      if (!stored.ok()) {
        return RollbackLocked(absl::DataLossError(absl::StrCat(
            "index ", path_, ": document ", docid, " holds no issue; cannot re-tag it")));
      }
      tagger->Tag(&*stored);
      db_.replace_document(docid, index::BuildDocument(*stored));
      result.last_docid = docid;
      ++result.retagged;
    }
    result.finished = it == end || *it > up_to_docid;
    // Every document is rebuilt, so a finished pass leaves the index in the current text scheme.
    if (result.finished) db_.set_metadata(index::kTextSchemeKey, index::kTextScheme);
    if (result.finished && gone_) {
      // The gone issues (few) in the same commit, so is:deleted / is:transferred see the same
      // tags and text scheme as the live search.
      std::vector<Xapian::docid> ids;  // listed first: no writes while iterating
      for (Xapian::PostingIterator g = gone_->postlist_begin(std::string());
           g != gone_->postlist_end(std::string()); ++g) {
        ids.push_back(*g);
      }
      for (Xapian::docid id : ids) {
        absl::StatusOr<v1::IssueWithComments> gone = index::ReadDocument(gone_->get_document(id));
        if (!gone.ok()) continue;  // a record without an issue: left as it is
        tagger->Tag(&*gone);
        gone_->replace_document(id, index::BuildGoneDocument(*gone));
      }
    }
    if (metadata) {
      for (const auto& [key, value] : metadata(result)) db_.set_metadata(key, value);
    }
  } catch (const Xapian::Error& e) {
    return RollbackLocked(XapianError(absl::StrCat("re-tagging index ", path_), e));
  }
  if (absl::Status committed = CommitLocked(); !committed.ok()) return committed;
  return result;
}

absl::StatusOr<Xapian::docid> IndexWriter::LastDocid() const {
  std::lock_guard<std::mutex> lock(mu_);
  try {
    return db_.get_lastdocid();
  } catch (const Xapian::Error& e) {
    return XapianError(absl::StrCat("reading the last document id of index ", path_), e);
  }
}

absl::StatusOr<std::string> IndexWriter::GetMetadata(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  try {
    return db_.get_metadata(key);
  } catch (const Xapian::Error& e) {
    return XapianError(absl::StrCat("reading metadata ", key, " of index ", path_), e);
  }
}

absl::Status IndexWriter::CommitMetadata(
    const std::vector<std::pair<std::string, std::string>>& entries) {
  std::lock_guard<std::mutex> lock(mu_);
  try {
    if (absl::Status begun = BeginGroupLocked(); !begun.ok()) return begun;
    for (const auto& [key, value] : entries) db_.set_metadata(key, value);
  } catch (const Xapian::Error& e) {
    return RollbackLocked(XapianError(absl::StrCat("writing metadata of index ", path_), e));
  }
  return CommitLocked();
}

}  // namespace issuescope::indexer

// IssueStore, the read side (crawler/issue_store.h): one issue with its comments, a repository's
// issues, and the change feed read from a position in batches. Writes are in issue_store.cc;
// the key layout is store_keys.h.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/repo_slug.h"
#include "common/rocksdb_status.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "crawler/issue_store.h"
#include "store_keys.h"

namespace issuescope::crawler {

using namespace store_keys;  // NOLINT: the store's own key layout

absl::Status IssueStore::LoadIssue(const std::string& key, v1::Issue* issue, bool* found) const {
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), issues_cf_, key, &value);
  if (s.IsNotFound()) {
    *found = false;
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(FromRocksStatus(s, "reading an issue"));
  if (!issue->ParseFromString(value)) {
    return absl::DataLossError("corrupt stored issue record");
  }
  *found = true;
  return absl::OkStatus();
}

absl::StatusOr<v1::IssueWithComments> IssueStore::LoadCurrent(absl::string_view repo_slug,
                                                               int64_t number,
                                                               bool* found) const {
  v1::IssueWithComments current;
  std::string what = issuescope::IssueKey(repo_slug, number);
  absl::Status status = LoadIssue(IssueRowKey(repo_slug, number), current.mutable_issue(), found);
  if (!status.ok()) return absl::Status(status.code(), absl::StrCat(status.message(), " ", what));
  if (!*found) current.clear_issue();

  std::string prefix = IssueRowKey(repo_slug, number);
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), comments_cf_));
  for (it->Seek(prefix); it->Valid() && StartsWith(it->key(), prefix); it->Next()) {
    v1::Comment* comment = current.add_comments();
    if (it->key().size() != prefix.size() + 8 ||
        !comment->ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
      return absl::DataLossError(absl::StrCat("corrupt stored comment record of ", what));
    }
  }
  RETURN_IF_ERROR(FromRocksStatus(it->status(), absl::StrCat("reading comments of ", what)));
  std::sort(current.mutable_comments()->begin(), current.mutable_comments()->end(),
            [](const v1::Comment& a, const v1::Comment& b) {
              int cmp = CompareTimestamps(a.created_at(), b.created_at());
              return cmp != 0 ? cmp < 0 : a.id() < b.id();
            });
  return current;
}

absl::StatusOr<v1::IssueWithComments> IssueStore::GetIssue(absl::string_view repo_slug,
                                                           int64_t number) const {
  RETURN_IF_ERROR(CheckSlug(repo_slug));
  if (number <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("issue number must be > 0, got ", number));
  }
  bool found = false;
  ASSIGN_OR_RETURN(v1::IssueWithComments current, LoadCurrent(repo_slug, number, &found));
  if (!found) {
    return absl::NotFoundError(
        absl::StrCat("issue ", issuescope::IssueKey(repo_slug, number), " is not in this store"));
  }
  return current;
}

absl::Status IssueStore::ScanRepository(absl::string_view repo_slug,
                                        const std::function<bool(const v1::Issue&)>& fn) const {
  RETURN_IF_ERROR(CheckSlug(repo_slug));
  std::string prefix = IssuePrefix(repo_slug);
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), issues_cf_));
  v1::Issue issue;
  for (it->Seek(prefix); it->Valid() && StartsWith(it->key(), prefix); it->Next()) {
    if (it->key().size() != prefix.size() + 8 ||
        !issue.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
      int64_t number = it->key().size() == prefix.size() + 8
                           ? static_cast<int64_t>(GetBE64(absl::string_view(it->key().data(), it->key().size()).substr(prefix.size())))
                           : -1;
      return absl::DataLossError(absl::StrCat("corrupt stored issue record of ",
                                              issuescope::IssueKey(repo_slug, number)));
    }
    if (!fn(issue)) return absl::OkStatus();
  }
  return FromRocksStatus(it->status(), absl::StrCat("scanning ", repo_slug));
}

absl::StatusOr<v1::ChangeBatch> IssueStore::ReadChanges(uint64_t from_seq, int max_events) const {
  if (max_events <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("max_events must be > 0, got ", max_events));
  }
  v1::ChangeBatch batch;
  batch.set_store_id(store_id_);
  batch.set_last_seq(from_seq);
  if (from_seq >= last_seq()) return batch;

  // Coalesce: one pending event per issue, carrying the highest seq seen for it and the issue's
  // current state (loaded when the issue is first met). Scanning is bounded so that a flood of
  // changes to a few issues cannot make one batch unbounded, and a batch stops taking new issues
  // once its events pass kMaxBatchBytes (gRPC's default message limit is 4 MB; issues with long
  // comment threads are large), always keeping at least one event.
  struct Pending {
    uint64_t seq;
    v1::ChangeEvent event;
  };
  std::vector<Pending> pending;
  std::map<std::pair<std::string, int64_t>, size_t> index;
  const int64_t max_scanned = std::max<int64_t>(10000, int64_t{max_events} * 16);
  int64_t scanned = 0;
  size_t bytes = 0;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), changes_cf_));
  for (it->Seek(BE64(from_seq + 1)); it->Valid() && scanned < max_scanned; it->Next()) {
    rocksdb::Slice key = it->key();
    rocksdb::Slice value = it->value();
    if (key.size() != 8) {
      return absl::DataLossError(
          absl::StrCat("corrupt change-log key \"", absl::CHexEscape(key.ToString()), "\""));
    }
    uint64_t seq = GetBE64(absl::string_view(key.data(), key.size()));
    if (value.size() < 10 || (value[0] != v1::CHANGE_KIND_UPSERT &&
                              value[0] != v1::CHANGE_KIND_DELETE)) {
      return absl::DataLossError(absl::StrCat("corrupt change-log entry at seq ", seq));
    }
    std::string slug(value.data() + 9, value.size() - 9);
    int64_t number = static_cast<int64_t>(GetBE64(absl::string_view(value.data() + 1, value.size() - 1)));
    auto found = index.find({slug, number});
    if (found != index.end()) {
      pending[found->second].seq = seq;
    } else if (pending.size() >= static_cast<size_t>(max_events) ||
               (!pending.empty() && bytes >= kMaxBatchBytes)) {
      break;
    } else {
      Pending p;
      p.seq = seq;
      p.event.set_repo_slug(slug);
      p.event.set_number(number);
      bool loaded = false;
      ASSIGN_OR_RETURN(*p.event.mutable_current(), LoadCurrent(slug, number, &loaded));
      p.event.set_kind(loaded && p.event.current().issue().deleted() ? v1::CHANGE_KIND_DELETE
                                                                     : v1::CHANGE_KIND_UPSERT);
      bytes += p.event.ByteSizeLong();
      index.emplace(std::make_pair(std::move(slug), number), pending.size());
      pending.push_back(std::move(p));
    }
    batch.set_last_seq(seq);
    ++scanned;
  }
  RETURN_IF_ERROR(FromRocksStatus(it->status(), "reading the change log"));

  std::sort(pending.begin(), pending.end(),
            [](const Pending& a, const Pending& b) { return a.seq < b.seq; });
  for (Pending& p : pending) {
    p.event.set_seq(p.seq);
    *batch.add_events() = std::move(p.event);
  }
  return batch;
}

v1::StoreInfo IssueStore::Info() const {
  v1::StoreInfo info;
  info.set_store_id(store_id_);
  info.set_last_seq(last_seq());
  info.set_issues(issue_count_.load());
  info.set_comments(comment_count_.load());
  return info;
}

}  // namespace issuescope::crawler

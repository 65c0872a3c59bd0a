#include "bulk_source.h"

#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "crawler/issue_store.h"
#include "indexer/change_log.h"
#include "google/protobuf/util/json_util.h"

namespace issuescope::indexer {
namespace {

// Change events asked for per ReadChanges call (a batch also stops at 1 MiB).
constexpr int kStoreBatchEvents = 1000;

// StoreSource reads each store's change log (a StoreLogSource) from sequence 0 to the last
// sequence it held when it was opened; every issue of a store appears in it (coalesced per batch).
class StoreSource : public IssueSource {
 public:
  explicit StoreSource(std::vector<std::string> dirs) : dirs_(std::move(dirs)) {}

  absl::StatusOr<size_t> Next(size_t max, std::vector<v1::IssueWithComments>* out) override {
    size_t added = 0;
    while (added < max) {
      if (store_ == nullptr) {
        if (next_dir_ == dirs_.size()) return added;
        if (absl::Status s = OpenNext(); !s.ok()) return s;
      }
      v1::ChangeBatch batch;
      absl::StatusOr<bool> more = log_->Next(&batch);
      if (!more.ok()) return more.status();
      if (!*more) {
        log_.reset();
        store_.reset();
        continue;
      }
      for (v1::ChangeEvent& event : *batch.mutable_events()) {
        // Comments of a not-yet-stored issue: nothing to index until the issue arrives.
        if (!event.current().has_issue()) continue;
        out->push_back(std::move(*event.mutable_current()));
        ++added;
      }
      positions_[store_->store_id()] = batch.last_seq();
    }
    return added;
  }

  std::map<std::string, uint64_t> FeedPositions() const override { return positions_; }

  std::string Describe() const override {
    return absl::StrCat("crawler stores ", absl::StrJoin(dirs_, ", "));
  }

 private:
  absl::Status OpenNext() {
    const std::string& dir = dirs_[next_dir_++];
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
      return absl::InvalidArgumentError(absl::StrCat("store directory ", dir, " does not exist"));
    }
    crawler::StoreOptions options;
    options.create_if_missing = false;
    absl::StatusOr<std::unique_ptr<crawler::IssueStore>> store =
        crawler::IssueStore::Open(dir, options);
    if (!store.ok()) {
      return absl::Status(store.status().code(),
                          absl::StrCat("cannot open crawler store ", dir,
                                       " (a running crawler holds its lock: stop it, or index a "
                                       "copy or a JSONL dump): ",
                                       store.status().message()));
    }
    store_ = std::move(*store);
    crawler::IssueStore* opened = store_.get();
    log_ = StoreLogSource(
        [opened](uint64_t from, int max) { return opened->ReadChanges(from, max); }, 0,
        opened->last_seq(), dir, kStoreBatchEvents);
    positions_[store_->store_id()] = 0;
    return absl::OkStatus();
  }

  std::vector<std::string> dirs_;
  size_t next_dir_ = 0;
  std::unique_ptr<crawler::IssueStore> store_;
  std::unique_ptr<ChangeSource> log_;  // store_'s log, from 0 to its last seq when opened
  std::map<std::string, uint64_t> positions_;
};

// JsonlSource parses one IssueWithComments per line.
class JsonlSource : public IssueSource {
 public:
  explicit JsonlSource(std::vector<std::string> paths) : paths_(std::move(paths)) {}

  absl::StatusOr<size_t> Next(size_t max, std::vector<v1::IssueWithComments>* out) override {
    size_t added = 0;
    std::string line;
    while (added < max) {
      if (!in_.is_open()) {
        if (next_path_ == paths_.size()) return added;
        const std::string& path = paths_[next_path_++];
        in_.open(path);
        if (!in_) return absl::NotFoundError(absl::StrCat("cannot open JSONL file ", path));
        line_no_ = 0;
      }
      if (!std::getline(in_, line)) {
        if (in_.bad()) {
          return absl::DataLossError(absl::StrCat("reading ", paths_[next_path_ - 1], " failed"));
        }
        in_.close();
        continue;
      }
      ++line_no_;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      v1::IssueWithComments issue;
      google::protobuf::util::JsonParseOptions options;
      options.ignore_unknown_fields = true;
      google::protobuf::util::Status s =
          google::protobuf::util::JsonStringToMessage(line, &issue, options);
      if (!s.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(paths_[next_path_ - 1], " line ", line_no_,
                         " is not an IssueWithComments: ", s.ToString()));
      }
      if (!issue.has_issue() || issue.issue().number() <= 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            paths_[next_path_ - 1], " line ", line_no_, " has no issue with a number > 0"));
      }
      out->push_back(std::move(issue));
      ++added;
    }
    return added;
  }

  std::string Describe() const override {
    return absl::StrCat("JSONL ", absl::StrJoin(paths_, ", "));
  }

 private:
  std::vector<std::string> paths_;
  size_t next_path_ = 0;
  std::ifstream in_;
  int64_t line_no_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<IssueSource>> OpenStoreSource(
    const std::vector<std::string>& store_dirs) {
  if (store_dirs.empty()) return absl::InvalidArgumentError("no crawler store given");
  return std::unique_ptr<IssueSource>(new StoreSource(store_dirs));
}

absl::StatusOr<std::unique_ptr<IssueSource>> OpenJsonlSource(const std::vector<std::string>& paths) {
  if (paths.empty()) return absl::InvalidArgumentError("no JSONL file given");
  for (const std::string& path : paths) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      return absl::NotFoundError(absl::StrCat("JSONL file ", path, " does not exist"));
    }
  }
  return std::unique_ptr<IssueSource>(new JsonlSource(paths));
}

}  // namespace issuescope::indexer

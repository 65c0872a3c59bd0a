#include "bulk_indexer.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/index_document.h"
#include "common/xapian_status.h"
#include "common/index_layout.h"
#include "common/index_schema.h"
#include "common/repo_slug.h"
#include "xapian.h"

namespace issuescope::indexer {
namespace {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

double SecondsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

// Run is one batch of issues of one shard, built into one database.
struct Run {
  int64_t id = -1;
  uint32_t shard = 0;
  std::vector<v1::IssueWithComments> issues;
};

// Seen is what the reader remembers of an issue: the version of its newest copy, and where
// that copy went (run id, or -1 for a tombstone, which is not indexed; slot in the run).
struct Seen {
  index::IndexVersion version;
  int64_t run = -1;
  uint32_t slot = 0;
};

std::string RunPath(const std::string& runs_dir, int64_t run) {
  return absl::StrFormat("%s/run-%07d", runs_dir, run);
}

absl::Status XapianFailure(absl::string_view what, const Xapian::Error& e) {
  return FromXapianError(e, what);
}

// RunQueue hands runs from the reader to the workers; bounded so reading never races ahead.
class RunQueue {
 public:
  explicit RunQueue(size_t capacity) : capacity_(capacity) {}

  // Push blocks while the queue is full; false once the queue is aborted.
  bool Push(Run run) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return aborted_ || runs_.size() < capacity_; });
    if (aborted_) return false;
    runs_.push_back(std::move(run));
    cv_.notify_all();
    return true;
  }
  // Pop blocks until a run is there; false when the queue is closed and drained, or aborted.
  bool Pop(Run* run) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return aborted_ || closed_ || !runs_.empty(); });
    if (aborted_ || runs_.empty()) return false;
    *run = std::move(runs_.front());
    runs_.pop_front();
    cv_.notify_all();
    return true;
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }
  // Abort records the first error and wakes everyone.
  void Abort(absl::Status status) {
    std::lock_guard<std::mutex> lock(mu_);
    if (error_.ok()) error_ = std::move(status);
    aborted_ = true;
    cv_.notify_all();
  }
  absl::Status error() {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }

 private:
  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Run> runs_;
  bool closed_ = false;
  bool aborted_ = false;
  absl::Status error_;
};

// BuildRun writes the live issues of `run` into a new database with one commit; returns the
// number of documents.
absl::StatusOr<int64_t> BuildRun(const std::string& path, Run& run, Tagger* tagger) {
  try {
    Xapian::WritableDatabase db(path, Xapian::DB_CREATE | Xapian::DB_NO_SYNC |
                                          Xapian::DB_BACKEND_GLASS);
    int64_t docs = 0;
    for (v1::IssueWithComments& issue : run.issues) {
      if (issue.issue().deleted()) continue;  // superseded in place by a newer tombstone
      if (tagger != nullptr) tagger->Tag(&issue);
      db.add_document(index::BuildDocument(issue));
      ++docs;
    }
    db.commit();
    db.close();
    return docs;
  } catch (const Xapian::Error& e) {
    return XapianFailure(absl::StrCat("building run ", path), e);
  }
}

// MergeShard merges `runs` into the shard database `dest` and records `metadata` in it.
absl::Status MergeShard(const std::string& runs_dir, const std::vector<int64_t>& runs,
                        const std::string& dest, bool fuller,
                        const std::map<std::string, std::string>& metadata) {
  try {
    if (runs.empty()) {
      Xapian::WritableDatabase db(dest, Xapian::DB_CREATE | Xapian::DB_BACKEND_GLASS);
      db.commit();
    } else {
      Xapian::Database combined;
      for (int64_t run : runs) combined.add_database(Xapian::Database(RunPath(runs_dir, run)));
      combined.compact(dest, Xapian::DBCOMPACT_MULTIPASS |
                                 (fuller ? Xapian::Compactor::FULLER : Xapian::Compactor::STANDARD));
    }
    Xapian::WritableDatabase db(dest, Xapian::DB_OPEN);
    for (const auto& [key, value] : metadata) db.set_metadata(key, value);
    db.set_metadata(index::kTextSchemeKey, index::kTextScheme);
    db.commit();
    db.close();
  } catch (const Xapian::Error& e) {
    return XapianFailure(absl::StrCat("merging ", runs.size(), " runs into ", dest), e);
  }
  std::error_code ec;
  for (int64_t run : runs) fs::remove_all(RunPath(runs_dir, run), ec);
  return absl::OkStatus();
}

absl::Status CheckOptions(const BulkIndexOptions& o) {
  if (o.index_dir.empty()) return absl::InvalidArgumentError("bulk index: no index directory");
  if (o.shards < 1 || o.shards > 1000) {
    return absl::InvalidArgumentError(
        absl::StrCat("bulk index: shards must be in 1..1000, got ", o.shards));
  }
  if (o.jobs < 0 || o.jobs > 256) {
    return absl::InvalidArgumentError(
        absl::StrCat("bulk index: jobs must be in 0..256, got ", o.jobs));
  }
  if (o.batch_docs < 1 || o.batch_docs > 1000000) {
    return absl::InvalidArgumentError(
        absl::StrCat("bulk index: batch_docs must be in 1..1000000, got ", o.batch_docs));
  }
  std::error_code ec;
  if (fs::exists(o.index_dir, ec)) {
    if (!fs::is_directory(o.index_dir, ec)) {
      return absl::InvalidArgumentError(
          absl::StrCat("index directory ", o.index_dir, " exists and is not a directory"));
    }
    if (!fs::is_empty(o.index_dir, ec)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "index directory ", o.index_dir,
          " is not empty; a bulk index builds a new index (remove it or choose another)"));
    }
  }
  return absl::OkStatus();
}

// Reader is the calling thread's part: newest copy per issue, grouping into runs.
class Reader {
 public:
  Reader(const BulkIndexOptions& options, RunQueue* queue, BulkIndexStats* stats)
      : options_(options), queue_(queue), stats_(stats), pending_(options.shards) {
    for (Run& run : pending_) run.id = -1;
  }

  // Add takes one copy of an issue; false when the queue was aborted.
  bool Add(v1::IssueWithComments issue) {
    ++stats_->issues_read;
    const std::string slug = RepoSlug(issue.issue().repo());
    const std::string term = index::IdTerm(slug, issue.issue().number());
    const uint64_t key = std::hash<std::string>()(term);
    const index::IndexVersion version = index::IssueVersion(issue);
    const bool deleted = issue.issue().deleted();
    const uint32_t shard = index::ShardOf(slug, options_.shards);
    Run& pending = pending_[shard];
    auto [it, inserted] = seen_.try_emplace(key);
    Seen& seen = it->second;
    if (!inserted && version <= seen.version) {
      ++stats_->superseded;
      return true;
    }
    // This copy is the newest so far: a tombstone goes to the gone database, a live copy
    // takes a tombstone's place.
    if (deleted) {
      gone_[key] = GoneCopy{shard, issue};
    } else if (!gone_.empty()) {
      gone_.erase(key);
    }
    if (!inserted) {
      ++stats_->superseded;
      if (seen.run >= 0 && seen.run == pending.id) {
        // Still buffered: the newer copy (or tombstone, skipped by the worker) takes its slot.
        pending.issues[seen.slot] = std::move(issue);
        seen.version = version;
        if (deleted) seen.run = -2;  // tombstone occupying a buffered slot
        return true;
      }
      if (seen.run >= 0) deletions_[seen.run].push_back(term);
    }
    seen.version = version;
    if (deleted) {
      seen.run = -1;
      return true;
    }
    if (pending.id < 0) {
      pending.id = next_run_++;
      pending.shard = shard;
    }
    seen.run = pending.id;
    seen.slot = static_cast<uint32_t>(pending.issues.size());
    pending.issues.push_back(std::move(issue));
    if (pending.issues.size() >= static_cast<size_t>(options_.batch_docs)) return Dispatch(shard);
    return true;
  }

  // Finish dispatches the partly filled runs.
  bool Finish() {
    for (uint32_t shard = 0; shard < options_.shards; ++shard) {
      if (!pending_[shard].issues.empty() && !Dispatch(shard)) return false;
    }
    for (const auto& [key, seen] : seen_) {
      if (seen.run < 0) ++stats_->tombstones;
    }
    return true;
  }

  // RunsOf lists the run ids of each shard.
  const std::vector<std::vector<int64_t>>& runs_of_shard() const { return runs_of_shard_; }
  // deletions are the ids of copies superseded after their run was dispatched, by run.
  const std::map<int64_t, std::vector<std::string>>& deletions() const { return deletions_; }
  int64_t runs_dispatched() const { return next_run_; }
  // GoneCopy is the newest copy of an issue when that copy is a tombstone.
  struct GoneCopy {
    uint32_t shard = 0;
    v1::IssueWithComments issue;
  };
  // gone holds the issues whose newest copy is a tombstone (keyed like seen_).
  const absl::flat_hash_map<uint64_t, GoneCopy>& gone() const { return gone_; }

 private:
  bool Dispatch(uint32_t shard) {
    Run run = std::move(pending_[shard]);
    pending_[shard] = Run();
    if (runs_of_shard_.size() < options_.shards) runs_of_shard_.resize(options_.shards);
    runs_of_shard_[shard].push_back(run.id);
    ++stats_->runs;
    return queue_->Push(std::move(run));
  }

  const BulkIndexOptions& options_;
  RunQueue* queue_;
  BulkIndexStats* stats_;
  std::vector<Run> pending_;
  std::vector<std::vector<int64_t>> runs_of_shard_;
  absl::flat_hash_map<uint64_t, Seen> seen_;
  std::map<int64_t, std::vector<std::string>> deletions_;
  absl::flat_hash_map<uint64_t, GoneCopy> gone_;
  int64_t next_run_ = 0;
};

// WriteGone writes the gone database (common/index_layout.h) of each shard that has deleted or
// transferred issues: their tombstones, tagged like the live issues.
absl::Status WriteGone(const std::string& index_dir, uint32_t shards,
                       const absl::flat_hash_map<uint64_t, Reader::GoneCopy>& gone,
                       Tagger* tagger) {
  std::vector<std::vector<const v1::IssueWithComments*>> by_shard(shards);
  for (const auto& [key, copy] : gone) by_shard[copy.shard].push_back(&copy.issue);
  for (uint32_t shard = 0; shard < shards; ++shard) {
    if (by_shard[shard].empty()) continue;
    const std::string path =
        index::GonePath(absl::StrCat(index_dir, "/", index::ShardDirName(shard)));
    try {
      Xapian::WritableDatabase db(path, Xapian::DB_CREATE | Xapian::DB_BACKEND_GLASS);
      for (const v1::IssueWithComments* issue : by_shard[shard]) {
        v1::IssueWithComments copy = *issue;
        if (tagger != nullptr) tagger->Tag(&copy);
        db.replace_document(
            index::IdTerm(RepoSlug(copy.issue().repo()), copy.issue().number()),
            index::BuildGoneDocument(copy));
      }
      db.commit();
      db.close();
    } catch (const Xapian::Error& e) {
      return XapianFailure(absl::StrCat("writing the gone database ", path), e);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<BulkIndexStats> BuildIndex(IssueSource& source, const BulkIndexOptions& options) {
  if (absl::Status s = CheckOptions(options); !s.ok()) return s;
  const int jobs = options.jobs > 0
                       ? options.jobs
                       : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const std::string runs_dir = absl::StrCat(options.index_dir, "/.bulk-runs");
  std::error_code ec;
  fs::create_directories(runs_dir, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat("cannot create ", runs_dir, ": ", ec.message()));
  }

  BulkIndexStats stats;
  BulkProgress progress;
  const SteadyClock::time_point start = SteadyClock::now();
  SteadyClock::time_point last_report = start;
  std::atomic<int64_t> built{0};
  std::atomic<int64_t> runs_done{0};
  auto report = [&](bool force) {
    if (!options.progress) return;
    if (!force && SecondsSince(last_report) < options.progress_interval) return;
    last_report = SteadyClock::now();
    progress.issues_read = stats.issues_read;
    progress.documents_built = built.load();
    progress.runs_done = runs_done.load();
    progress.elapsed_seconds = SecondsSince(start);
    options.progress(progress);
  };

  // Phase 1: read, pick the newest copies, build runs in parallel.
  RunQueue queue(static_cast<size_t>(jobs));
  std::vector<std::thread> workers;
  for (int i = 0; i < jobs; ++i) {
    workers.emplace_back([&] {
      Run run;
      while (queue.Pop(&run)) {
        absl::StatusOr<int64_t> docs =
            BuildRun(RunPath(runs_dir, run.id), run, options.tagger);
        if (!docs.ok()) {
          queue.Abort(docs.status());
          return;
        }
        built += *docs;
        ++runs_done;
        run = Run();
      }
    });
  }
  Reader reader(options, &queue, &stats);
  progress.phase = "index";
  absl::Status read_status;
  std::vector<v1::IssueWithComments> batch;
  bool ok = true;
  while (ok) {
    batch.clear();
    absl::StatusOr<size_t> n = source.Next(1000, &batch);
    if (!n.ok()) {
      read_status = n.status();
      break;
    }
    if (*n == 0) break;
    for (v1::IssueWithComments& issue : batch) {
      if (!(ok = reader.Add(std::move(issue)))) break;
    }
    progress.runs_total = reader.runs_dispatched();
    report(false);
  }
  if (read_status.ok() && ok) ok = reader.Finish();
  if (!read_status.ok()) queue.Abort(read_status);
  queue.Close();
  for (std::thread& t : workers) t.join();
  if (absl::Status s = queue.error(); !s.ok()) return s;
  progress.runs_total = reader.runs_dispatched();
  report(true);

  // Copies superseded after their run was built are deleted from that run.
  for (const auto& [run, terms] : reader.deletions()) {
    try {
      Xapian::WritableDatabase db(RunPath(runs_dir, run), Xapian::DB_OPEN | Xapian::DB_NO_SYNC);
      for (const std::string& term : terms) db.delete_document(term);
      db.commit();
      built -= static_cast<int64_t>(terms.size());
    } catch (const Xapian::Error& e) {
      return XapianFailure(absl::StrCat("removing superseded copies from run ", run), e);
    }
  }
  stats.documents = built.load();
  stats.index_seconds = SecondsSince(start);

  // Phase 2: merge each shard's runs, shards in parallel.
  const SteadyClock::time_point merge_start = SteadyClock::now();
  stats.feed_positions = source.FeedPositions();
  std::map<std::string, std::string> metadata;
  for (const auto& [store, seq] : stats.feed_positions) {
    metadata[absl::StrCat(index::kFeedMetadataPrefix, store)] = std::to_string(seq);
  }
  if (options.tagger != nullptr && !options.tagger->Fingerprint().empty()) {
    metadata[index::kTaggerMetadataKey] = options.tagger->Fingerprint();
  }
  std::vector<std::vector<int64_t>> runs_of_shard = reader.runs_of_shard();
  runs_of_shard.resize(options.shards);
  progress.phase = "merge";
  progress.runs_total = options.shards;
  runs_done = 0;
  std::atomic<uint32_t> next_shard{0};
  std::mutex merge_mu;
  std::condition_variable merge_cv;
  absl::Status merge_status;
  int merging = std::min<int>(jobs, static_cast<int>(options.shards));
  std::vector<std::thread> mergers;
  for (int i = 0; i < merging; ++i) {
    mergers.emplace_back([&] {
      for (uint32_t shard = next_shard++; shard < options.shards; shard = next_shard++) {
        absl::Status s = MergeShard(runs_dir, runs_of_shard[shard],
                                    absl::StrCat(options.index_dir, "/", index::ShardDirName(shard)),
                                    options.fuller, metadata);
        std::lock_guard<std::mutex> lock(merge_mu);
        if (!s.ok() && merge_status.ok()) merge_status = s;
        ++runs_done;
        merge_cv.notify_all();
        if (!merge_status.ok()) break;
      }
      std::lock_guard<std::mutex> lock(merge_mu);
      --merging;
      merge_cv.notify_all();
    });
  }
  {
    std::unique_lock<std::mutex> lock(merge_mu);
    while (merging > 0) {
      merge_cv.wait_for(lock, std::chrono::duration<double>(options.progress_interval));
      lock.unlock();
      report(false);
      lock.lock();
    }
  }
  for (std::thread& t : mergers) t.join();
  if (!merge_status.ok()) return merge_status;
  if (absl::Status s = WriteGone(options.index_dir, options.shards, reader.gone(), options.tagger);
      !s.ok()) {
    return s;
  }
  report(true);
  fs::remove_all(runs_dir, ec);
  if (absl::Status s = index::WriteStubFile(options.index_dir, options.shards); !s.ok()) return s;
  stats.merge_seconds = SecondsSince(merge_start);
  return stats;
}

}  // namespace issuescope::indexer

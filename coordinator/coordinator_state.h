// CoordinatorState: the coordinator's RocksDB database. Three column families: "repos" (repo slug
// → RepoRecord), "workers" (worker id → WorkerRecord) and "meta" (schema version, and the last
// epoch of removed repositories under "removed_epoch/<slug>", so a re-added repository never
// reuses an epoch). Every change is applied through one StateBatch, i.e. one atomic WriteBatch.
//
// Ownership: CoordinatorState owns the database and its column-family handles. Thread-safety:
// RocksDB makes concurrent Commit/Load calls safe; CoordinatorCore serialises them anyway.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "coordinator_records.pb.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"

namespace issuescope::coordinator {

// StateBatch collects record writes to be committed atomically by CoordinatorState::Commit.
class StateBatch {
 public:
  // PutRepo stores `record` under its slug.
  void PutRepo(const std::string& slug, const RepoRecord& record);
  // DeleteRepo removes a repository and remembers its last epoch in "meta".
  void DeleteRepo(const std::string& slug, uint64_t last_epoch);
  // PutWorker stores a worker record under its id.
  void PutWorker(const WorkerRecord& record);
  // DeleteWorker removes a worker record (a drained worker leaving the membership).
  void DeleteWorker(const std::string& worker_id);
  // empty reports whether nothing was added.
  bool empty() const { return ops_.empty(); }

 private:
  friend class CoordinatorState;
  enum class Kind { kPutRepo, kDeleteRepo, kPutWorker, kDeleteWorker };
  struct Op {
    Kind kind;
    std::string key;
    std::string value;
    uint64_t epoch = 0;
  };
  std::vector<Op> ops_;
};

// CoordinatorState is the durable store of the coordinator.
class CoordinatorState {
 public:
  // Open opens (creating if missing) the database at `path`. `env` may be null (the default
  // Env) or e.g. rocksdb::NewMemEnv for tests. `sync` makes every commit fsync its WAL.
  static absl::StatusOr<std::unique_ptr<CoordinatorState>> Open(const std::string& path,
                                                                rocksdb::Env* env, bool sync);
  ~CoordinatorState();
  CoordinatorState(const CoordinatorState&) = delete;
  CoordinatorState& operator=(const CoordinatorState&) = delete;

  // LoadRepos reads every repository record, keyed by slug. DATA_LOSS on an unparsable record.
  absl::StatusOr<std::map<std::string, RepoRecord>> LoadRepos();
  // LoadWorkers reads every worker record, keyed by worker id.
  absl::StatusOr<std::map<std::string, WorkerRecord>> LoadWorkers();
  // RemovedEpoch returns the last epoch of a removed repository (0 if it never was removed).
  absl::StatusOr<uint64_t> RemovedEpoch(const std::string& slug);
  // Commit applies `batch` atomically and durably (WAL) before returning.
  absl::Status Commit(const StateBatch& batch);
  // commits counts the non-empty batches written since Open (each is one synced WriteBatch).
  uint64_t commits() const { return commits_.load(); }

 private:
  CoordinatorState() = default;
  std::string path_;
  bool sync_ = true;
  std::atomic<uint64_t> commits_{0};
  std::unique_ptr<rocksdb::DB> db_;
  rocksdb::ColumnFamilyHandle* repos_ = nullptr;
  rocksdb::ColumnFamilyHandle* workers_ = nullptr;
  rocksdb::ColumnFamilyHandle* meta_ = nullptr;
  rocksdb::ColumnFamilyHandle* default_ = nullptr;
};

}  // namespace issuescope::coordinator

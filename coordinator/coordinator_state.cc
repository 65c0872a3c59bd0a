#include "coordinator/coordinator_state.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/rocksdb_status.h"
#include "common/status_macros.h"

namespace issuescope::coordinator {
namespace {

constexpr char kReposFamily[] = "repos";
constexpr char kWorkersFamily[] = "workers";
constexpr char kMetaFamily[] = "meta";
constexpr char kSchemaKey[] = "schema_version";
constexpr char kSchemaVersion[] = "1";
constexpr char kRemovedEpochPrefix[] = "removed_epoch/";

std::string EncodeEpoch(uint64_t epoch) { return std::to_string(epoch); }

}  // namespace

void StateBatch::PutRepo(const std::string& slug, const RepoRecord& record) {
  ops_.push_back({Kind::kPutRepo, slug, record.SerializeAsString()});
}

void StateBatch::DeleteRepo(const std::string& slug, uint64_t last_epoch) {
  ops_.push_back({Kind::kDeleteRepo, slug, "", last_epoch});
}

void StateBatch::PutWorker(const WorkerRecord& record) {
  ops_.push_back({Kind::kPutWorker, record.worker_id(), record.SerializeAsString()});
}

void StateBatch::DeleteWorker(const std::string& worker_id) {
  ops_.push_back({Kind::kDeleteWorker, worker_id, ""});
}

absl::StatusOr<std::unique_ptr<CoordinatorState>> CoordinatorState::Open(const std::string& path,
                                                                         rocksdb::Env* env,
                                                                         bool sync) {
  rocksdb::DBOptions options;
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  if (env != nullptr) options.env = env;
  std::vector<rocksdb::ColumnFamilyDescriptor> families = {
      {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions()},
      {kReposFamily, rocksdb::ColumnFamilyOptions()},
      {kWorkersFamily, rocksdb::ColumnFamilyOptions()},
      {kMetaFamily, rocksdb::ColumnFamilyOptions()},
  };
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, path, families, &handles, &raw);
  RETURN_IF_ERROR(FromRocksStatus(s, absl::StrCat("opening coordinator state ", path)));
  std::unique_ptr<CoordinatorState> state(new CoordinatorState());
  state->path_ = path;
  state->sync_ = sync;
  state->db_.reset(raw);
  state->default_ = handles[0];
  state->repos_ = handles[1];
  state->workers_ = handles[2];
  state->meta_ = handles[3];

  std::string version;
  s = raw->Get(rocksdb::ReadOptions(), state->meta_, kSchemaKey, &version);
  if (s.IsNotFound()) {
    rocksdb::WriteOptions wo;
    wo.sync = sync;
    s = raw->Put(wo, state->meta_, kSchemaKey, kSchemaVersion);
    RETURN_IF_ERROR(FromRocksStatus(s, absl::StrCat("initialising coordinator state ", path)));
  } else {
    RETURN_IF_ERROR(FromRocksStatus(s, absl::StrCat("reading coordinator state ", path)));
    if (version != kSchemaVersion) {
      return absl::FailedPreconditionError(
          absl::StrCat("coordinator state ", path, " has schema version '", version,
                       "'; this build reads version ", kSchemaVersion));
    }
  }
  return state;
}

CoordinatorState::~CoordinatorState() {
  if (db_ == nullptr) return;
  for (auto* handle : {repos_, workers_, meta_, default_}) {
    if (handle != nullptr) db_->DestroyColumnFamilyHandle(handle);
  }
  db_.reset();
}

absl::StatusOr<std::map<std::string, RepoRecord>> CoordinatorState::LoadRepos() {
  std::map<std::string, RepoRecord> out;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), repos_));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    RepoRecord record;
    if (!record.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
      return absl::DataLossError(absl::StrCat(
          "coordinator state ", path_, ": unreadable record of repository ", it->key().ToString()));
    }
    out.emplace(it->key().ToString(), std::move(record));
  }
  RETURN_IF_ERROR(FromRocksStatus(it->status(), absl::StrCat("reading repositories of ", path_)));
  return out;
}

absl::StatusOr<std::map<std::string, WorkerRecord>> CoordinatorState::LoadWorkers() {
  std::map<std::string, WorkerRecord> out;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), workers_));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    WorkerRecord record;
    if (!record.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
      return absl::DataLossError(absl::StrCat(
          "coordinator state ", path_, ": unreadable record of worker ", it->key().ToString()));
    }
    out.emplace(it->key().ToString(), std::move(record));
  }
  RETURN_IF_ERROR(FromRocksStatus(it->status(), absl::StrCat("reading workers of ", path_)));
  return out;
}

absl::StatusOr<uint64_t> CoordinatorState::RemovedEpoch(const std::string& slug) {
  std::string value;
  rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), meta_, absl::StrCat(kRemovedEpochPrefix, slug), &value);
  if (s.IsNotFound()) return 0;
  RETURN_IF_ERROR(FromRocksStatus(s, absl::StrCat("reading removed epoch of ", slug)));
  uint64_t epoch = 0;
  if (!absl::SimpleAtoi(value, &epoch)) {
    return absl::DataLossError(
        absl::StrCat("coordinator state ", path_, ": bad removed epoch of ", slug));
  }
  return epoch;
}

absl::Status CoordinatorState::Commit(const StateBatch& batch) {
  if (batch.empty()) return absl::OkStatus();
  rocksdb::WriteBatch wb;
  for (const StateBatch::Op& op : batch.ops_) {
    rocksdb::Status s;
    switch (op.kind) {
      case StateBatch::Kind::kPutRepo:
        s = wb.Put(repos_, op.key, op.value);
        break;
      case StateBatch::Kind::kDeleteRepo:
        s = wb.Delete(repos_, op.key);
        if (s.ok()) {
          s = wb.Put(meta_, absl::StrCat(kRemovedEpochPrefix, op.key), EncodeEpoch(op.epoch));
        }
        break;
      case StateBatch::Kind::kPutWorker:
        s = wb.Put(workers_, op.key, op.value);
        break;
      case StateBatch::Kind::kDeleteWorker:
        s = wb.Delete(workers_, op.key);
        break;
    }
    RETURN_IF_ERROR(FromRocksStatus(s, "preparing coordinator write"));
  }
  rocksdb::WriteOptions wo;
  wo.sync = sync_;
  RETURN_IF_ERROR(
      FromRocksStatus(db_->Write(wo, &wb), absl::StrCat("writing coordinator state ", path_)));
  commits_.fetch_add(1);
  return absl::OkStatus();
}

}  // namespace issuescope::coordinator

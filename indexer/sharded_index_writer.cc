#include "indexer/sharded_index_writer.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/index_layout.h"
#include "common/repo_slug.h"
#include "spdlog/spdlog.h"

namespace issuescope::indexer {
namespace {

// The repository slug an event is about (what ShardOf hashes).
std::string EventSlug(const v1::ChangeEvent& event) {
  if (event.current().has_issue()) return RepoSlug(event.current().issue().repo());
  return event.repo_slug();
}

bool HasUnshardedDatabase(const std::string& dir) {
  std::error_code ec;
  return std::filesystem::exists(dir + "/iamglass", ec) ||
         std::filesystem::exists(dir + "/iamchert", ec);
}

}  // namespace

absl::Status CheckIndexLayout(const std::string& index_dir, uint32_t shards) {
  if (shards == 0) return absl::InvalidArgumentError("the shard count must be at least 1");
  std::error_code ec;
  const bool has_stub = std::filesystem::exists(index::StubPath(index_dir), ec);
  if (shards == 1) {
    if (has_stub) {
      return absl::InvalidArgumentError(absl::StrCat(
          "index ", index_dir, " is sharded (", index::ShardPaths(index_dir).size(),
          " shards); run with --shards ", index::ShardPaths(index_dir).size()));
    }
    return absl::OkStatus();
  }
  if (HasUnshardedDatabase(index_dir)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "index ", index_dir, " is an unsharded index; run with --shards 1 or use a new "
        "directory for ", shards, " shards"));
  }
  if (has_stub) {
    const size_t existing = index::ShardPaths(index_dir).size();
    if (existing != shards) {
      return absl::InvalidArgumentError(absl::StrCat("index ", index_dir, " has ", existing,
                                                     " shards, not ", shards,
                                                     "; run with --shards ", existing));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::unique_ptr<IndexWriter>>> OpenShardWriters(
    const std::string& index_dir, IndexWriterOptions options) {
  std::vector<std::unique_ptr<IndexWriter>> writers;
  for (const std::string& path : index::ShardPaths(index_dir)) {
    absl::StatusOr<std::unique_ptr<IndexWriter>> writer = IndexWriter::Open(path, options);
    if (!writer.ok()) return writer.status();
    writers.push_back(*std::move(writer));
  }
  return writers;
}

absl::StatusOr<std::unique_ptr<ShardedIndexWriter>> ShardedIndexWriter::Open(
    const std::string& index_dir, ShardedIndexWriterOptions options) {
  if (options.shards < 2) {
    return absl::InvalidArgumentError(
        "a sharded index needs at least 2 shards (one database is an IndexWriter)");
  }
  if (absl::Status layout = CheckIndexLayout(index_dir, options.shards); !layout.ok()) {
    return layout;
  }
  std::error_code ec;
  std::filesystem::create_directories(index_dir, ec);
  if (ec) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create index directory ", index_dir, ": ", ec.message()));
  }
  std::unique_ptr<ShardedIndexWriter> sharded(
      new ShardedIndexWriter(index_dir, std::max<size_t>(options.queue_capacity, 1)));
  for (uint32_t i = 0; i < options.shards; ++i) {
    const std::string path = absl::StrCat(index_dir, "/", index::ShardDirName(i));
    absl::StatusOr<std::unique_ptr<IndexWriter>> writer = IndexWriter::Open(path, options.writer);
    if (!writer.ok()) return writer.status();
    auto shard = std::make_unique<Shard>();
    shard->writer = *std::move(writer);
    sharded->shards_.push_back(std::move(shard));
  }
  // The stub goes last: readers see the shards only once they all exist.
  if (absl::Status stub = index::WriteStubFile(index_dir, options.shards); !stub.ok()) {
    return stub;
  }
  for (auto& shard : sharded->shards_) {
    shard->thread = std::thread(&ShardedIndexWriter::RunShard, sharded.get(), shard.get());
  }
  return sharded;
}

ShardedIndexWriter::ShardedIndexWriter(std::string index_dir, size_t queue_capacity)
    : index_dir_(std::move(index_dir)), queue_capacity_(queue_capacity) {}

ShardedIndexWriter::~ShardedIndexWriter() {
  for (auto& shard : shards_) {
    {
      std::lock_guard<std::mutex> lock(shard->mu);
      shard->stopping = true;
    }
    shard->changed.notify_all();
  }
  for (auto& shard : shards_) {
    if (shard->thread.joinable()) shard->thread.join();
  }
  // Each IndexWriter's destructor commits its pending group.
}

void ShardedIndexWriter::RunShard(Shard* shard) {
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(shard->mu);
      shard->changed.wait(lock, [&] { return shard->stopping || !shard->queue.empty(); });
      if (shard->queue.empty()) return;  // stopping, and nothing left to do
      task = std::move(shard->queue.front());
      shard->queue.pop_front();
    }
    shard->changed.notify_all();  // room in the queue
    task();
  }
}

absl::Status ShardedIndexWriter::RunOnAll(const std::function<absl::Status(uint32_t)>& task) {
  struct Wait {
    std::mutex mu;
    std::condition_variable done;
    size_t remaining = 0;
    absl::Status first_error;
  } wait;
  wait.remaining = shards_.size();
  for (uint32_t i = 0; i < shards_.size(); ++i) {
    Shard* shard = shards_[i].get();
    auto run = [&wait, &task, i] {
      absl::Status status = task(i);
      std::lock_guard<std::mutex> lock(wait.mu);
      if (!status.ok() && wait.first_error.ok()) wait.first_error = status;
      if (--wait.remaining == 0) wait.done.notify_all();
    };
    std::unique_lock<std::mutex> lock(shard->mu);
    shard->changed.wait(lock, [&] {
      return shard->stopping || shard->queue.size() < queue_capacity_;
    });
    if (shard->stopping) {
      lock.unlock();
      std::lock_guard<std::mutex> wait_lock(wait.mu);
      if (wait.first_error.ok()) wait.first_error = absl::CancelledError("index writer closing");
      --wait.remaining;
      continue;
    }
    shard->queue.push_back(std::move(run));
    lock.unlock();
    shard->changed.notify_all();
  }
  std::unique_lock<std::mutex> lock(wait.mu);
  wait.done.wait(lock, [&] { return wait.remaining == 0; });
  return wait.first_error;
}

absl::Status ShardedIndexWriter::Apply(const v1::ChangeBatch& batch, ApplyResult* result) {
  const uint32_t n = shard_count();
  std::vector<v1::ChangeBatch> parts(n);
  for (v1::ChangeBatch& part : parts) {
    part.set_store_id(batch.store_id());
    part.set_last_seq(batch.last_seq());
  }
  for (const v1::ChangeEvent& event : batch.events()) {
    *parts[index::ShardOf(EventSlug(event), n)].add_events() = event;
  }
  std::vector<ApplyResult> results(n);
  absl::Status status =
      RunOnAll([&](uint32_t i) { return shards_[i]->writer->Apply(parts[i], &results[i]); });
  if (result != nullptr) {
    *result = ApplyResult();
    for (const ApplyResult& r : results) result->Add(r);
  }
  return status;
}

absl::Status ShardedIndexWriter::Flush() {
  return RunOnAll([&](uint32_t i) { return shards_[i]->writer->Flush(); });
}

absl::Status ShardedIndexWriter::FlushIfDue() {
  return RunOnAll([&](uint32_t i) { return shards_[i]->writer->FlushIfDue(); });
}

uint64_t ShardedIndexWriter::Position(absl::string_view store_id) const {
  uint64_t position = UINT64_MAX;
  for (const auto& shard : shards_) {
    position = std::min(position, shard->writer->Position(store_id));
  }
  return shards_.empty() ? 0 : position;
}

std::vector<std::pair<std::string, uint64_t>> ShardedIndexWriter::Positions() const {
  std::set<std::string> stores;
  for (const auto& shard : shards_) {
    for (const auto& [store, seq] : shard->writer->Positions()) stores.insert(store);
  }
  std::vector<std::pair<std::string, uint64_t>> positions;
  for (const std::string& store : stores) positions.emplace_back(store, Position(store));
  return positions;
}

std::vector<std::pair<std::string, uint64_t>> ShardedIndexWriter::CommittedPositions() const {
  // The lowest committed position over the shards (a store a shard has not seen counts 0).
  std::map<std::string, uint64_t> lowest;
  std::map<std::string, size_t> seen;
  for (const auto& shard : shards_) {
    for (const auto& [store, seq] : shard->writer->CommittedPositions()) {
      auto [it, added] = lowest.emplace(store, seq);
      if (!added) it->second = std::min(it->second, seq);
      ++seen[store];
    }
  }
  std::vector<std::pair<std::string, uint64_t>> positions;
  for (const auto& [store, seq] : lowest) {
    positions.emplace_back(store, seen[store] == shards_.size() ? seq : 0);
  }
  return positions;
}

int64_t ShardedIndexWriter::DocumentCount() const {
  int64_t count = 0;
  for (const auto& shard : shards_) count += shard->writer->DocumentCount();
  return count;
}

}  // namespace issuescope::indexer

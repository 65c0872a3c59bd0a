#include "replica_follower.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/host_port.h"
#include "common/index_layout.h"
#include "common/status_macros.h"
#include "common/subprocess.h"
#include "spdlog/spdlog.h"

namespace issuescope::search {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// LastLine is the last non-empty line of `text` (xapian-replicate's error).
std::string LastLine(const std::string& text) {
  const size_t end = text.find_last_not_of("\r\n");
  if (end == std::string::npos) return "";
  const size_t newline = text.rfind('\n', end);
  const size_t start = newline == std::string::npos ? 0 : newline + 1;
  return text.substr(start, end + 1 - start);
}

}  // namespace

absl::Status ParseReplicaSource(const std::string& from, ReplicaOptions* options) {
  absl::StatusOr<HostPort> hp = SplitHostPort(from);
  if (!hp.ok() || hp->host.empty() || hp->port <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--replicate-from '", from, "' is not HOST:PORT (the index host's "
        "xapian-replicate-server)"));
  }
  options->host = hp->host;
  options->port = hp->port;
  return absl::OkStatus();
}

ReplicaFollower::ReplicaFollower(ReplicaOptions options) : options_(std::move(options)) {
  // "/r/index/" and "/r/index" are one directory; its parent must be "/r".
  std::string l = std::filesystem::path(options_.local_dir).lexically_normal().string();
  while (l.size() > 1 && l.back() == '/') l.pop_back();
  local_dir_ = l;
  const std::string& m = options_.master_index;
  auto add = [&](const std::string& master, const std::string& local) {
    // Live before gone: the indexer commits gone(k) before live(k), so a gone database copied
    // after the live one is at least as new, and an issue being tombstoned is in one or both,
    // never in neither.
    databases_.push_back({master, local, false});
    databases_.push_back({index::GonePath(master), index::GonePath(local), true});
  };
  if (options_.shards <= 1) {
    add(m, l);
  } else {
    for (uint32_t i = 0; i < options_.shards; ++i) {
      const std::string shard = index::ShardDirName(i);
      add(m + "/" + shard, l + "/" + shard);
    }
  }
  log_path_ = l + ".replicate.log";
  marker_path_ = l + ".replica-complete";
}

std::string ReplicaFollower::MarkerText() const {
  return absl::StrCat("issuescope replica of ", options_.master_index, ", ", options_.shards,
                      " shard(s)\n");
}

ReplicaFollower::~ReplicaFollower() { Stop(); }

absl::Status ReplicaFollower::Start() {
  if (options_.host.empty() || options_.port <= 0) {
    return absl::InvalidArgumentError("--replicate-from needs HOST:PORT");
  }
  if (options_.master_index.empty() || absl::StartsWith(options_.master_index, "/") ||
      absl::StrContains(options_.master_index, "..")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--replicate-index '", options_.master_index,
        "' must be a relative path under the directory xapian-replicate-server serves"));
  }
  if (access(options_.program.c_str(), X_OK) != 0) {
    return absl::NotFoundError(absl::StrCat("cannot run ", options_.program,
                                            " (Debian package xapian-tools)"));
  }
  // xapian-replicate makes each database's directory itself (a stub XAPIANDB and the copies
  // beside it); the index directory holds the shards, or is the one database.
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path local(local_dir_);
  fs::create_directories(
      options_.shards > 1 ? local : local.parent_path().empty() ? "." : local.parent_path(), ec);
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot make ", local_dir_, ": ", ec.message()));
  }
  if (options_.shards > 1 && fs::exists(local / "iamglass", ec)) {
    return absl::FailedPreconditionError(absl::StrCat(
        local_dir_, " holds a database, not a replica: give --index a new or empty directory "
        "to copy the index into"));
  }
  for (const Database& db : databases_) {
    if (!db.gone) RETURN_IF_ERROR(CheckLocal(db));
  }
  if (options_.shards > 1) {
    RETURN_IF_ERROR(index::WriteStubFile(local_dir_, options_.shards));
  }
  // A copy completed by an earlier run is served while it is brought up to date: a replica
  // restarted while the index host is away still answers, from its last copy.
  std::ifstream marker(marker_path_);
  std::stringstream text;
  text << marker.rdbuf();
  if (marker && text.str() == MarkerText()) {
    ready_.store(true);
    spdlog::info("serving the copy of {} in {} made before; bringing it up to date",
                 options_.master_index, local_dir_);
  }
  spdlog::info("replicating {} database(s) of {} from {}:{} into {}, every {}",
               databases_.size() / 2, options_.master_index, options_.host, options_.port,
               local_dir_, absl::FormatDuration(options_.interval));
  thread_ = std::thread([this] { Loop(); });
  return absl::OkStatus();
}

void ReplicaFollower::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_.store(true);
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

absl::Status ReplicaFollower::CheckLocal(const Database& db) const {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(db.local, ec) && !ec) return absl::OkStatus();
  if (fs::exists(db.local + "/XAPIANDB", ec)) return absl::OkStatus();
  // A directory without a replica's stub: left empty by a copy that failed before it began,
  // which xapian-replicate would refuse from now on; or something else, which is not ours.
  fs::directory_iterator it(db.local, ec);
  if (ec) {
    return absl::PermissionDeniedError(absl::StrCat("cannot read ", db.local, ": ", ec.message()));
  }
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    const bool empty_gone = it->path().filename() == index::kGoneDirName &&
                            it->is_directory(ec) && fs::is_empty(it->path(), ec);
    if (!empty_gone) {
      return absl::FailedPreconditionError(absl::StrCat(
          db.local, " holds ", it->path().filename().string(),
          ", not a replica: give --index a new or empty directory to copy the index into"));
    }
  }
  if (ec) {
    return absl::PermissionDeniedError(absl::StrCat("cannot read ", db.local, ": ", ec.message()));
  }
  return absl::OkStatus();
}

absl::Status ReplicaFollower::CopyOnce(const Database& db) {
  namespace fs = std::filesystem;
  std::error_code ec;
  RETURN_IF_ERROR(CheckLocal(db));
  if (fs::exists(db.local, ec) && !fs::exists(db.local + "/XAPIANDB", ec)) {
    // Empty (CheckLocal), at most an empty gone/: removed one by one, never recursively.
    fs::remove(index::GonePath(db.local), ec);
    if (!fs::remove(db.local, ec) || ec) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot remove the empty ", db.local, ": ", ec.message()));
    }
  }
  std::filesystem::remove(log_path_, ec);
  auto child = Subprocess::Start(
      {options_.program, "--one-shot", "--quiet", "--reader-time=0", "--timeout=60",
       absl::StrCat("--host=", options_.host), absl::StrCat("--port=", options_.port),
       "--master=" + db.master, db.local},
      log_path_);
  if (!child.ok()) return child.status();
  int wait_status = 0;
  const absl::Time deadline = absl::Now() + options_.timeout;
  while (!(*child)->Wait(absl::Milliseconds(200), &wait_status)) {
    if (stopping_.load() || absl::Now() >= deadline) {
      const std::string why = stopping_.load() ? "stopping" : "timed out";
      (*child)->Stop(absl::Seconds(2));
      return absl::DeadlineExceededError(absl::StrCat("copying ", db.master, ": ", why));
    }
  }
  if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) return absl::OkStatus();
  const std::string error = LastLine(ReadAll(log_path_));
  // The server could not open the master database: a gone database before its first
  // tombstone. (A live database missing is an error: wrong --replicate-index or --shards.)
  if (absl::StrContains(error, "Can't open database") && absl::StrContains(error, "stat")) {
    return absl::NotFoundError(absl::StrCat(db.master, " does not exist on the index host"));
  }
  return absl::UnavailableError(
      absl::StrCat("copying ", db.master, " from ", options_.host, ":", options_.port, ": ",
                   error.empty() ? "xapian-replicate failed" : error));
}

absl::Status ReplicaFollower::RunRound() {
  absl::Status live = absl::OkStatus(), gone = absl::OkStatus();
  for (const Database& db : databases_) {
    if (stopping_.load()) return absl::CancelledError("stopping");
    std::error_code ec;
    // A gone database goes inside its live database's directory, made by its first copy.
    if (db.gone && !std::filesystem::exists(
                       std::filesystem::path(db.local).parent_path() / "XAPIANDB", ec)) {
      continue;
    }
    absl::Status s = CopyOnce(db);
    if (s.ok() || (db.gone && absl::IsNotFound(s))) continue;
    absl::Status& first = db.gone ? gone : live;
    if (first.ok()) first = s;
  }
  if (!live.ok()) return live;
  // Every live database is copied: the replica can serve, even if a gone database failed
  // (`is:deleted` then answers from its previous copy, or finds nothing yet).
  ++rounds_;
  if (!ready_.load()) {
    std::ofstream(marker_path_, std::ios::trunc) << MarkerText();
    ready_.store(true);
    spdlog::info("replica {} holds a full copy of {} from {}:{}", local_dir_,
                 options_.master_index, options_.host, options_.port);
  }
  return gone;
}

void ReplicaFollower::Loop() {
  std::string last_error;
  while (!stopping_.load()) {
    absl::Status s = RunRound();
    if (!s.ok() && !absl::IsCancelled(s)) {
      // One line per distinct error, not one per round.
      const std::string error(s.message());
      if (error != last_error) spdlog::warn("replication: {}", error);
      last_error = error;
    } else if (s.ok() && !last_error.empty()) {
      spdlog::info("replication: caught up again");
      last_error.clear();
    }
    std::unique_lock<std::mutex> lock(mu_);
    wake_.wait_for(lock, absl::ToChronoMilliseconds(options_.interval),
                   [&] { return stopping_.load(); });
  }
}

}  // namespace issuescope::search

// CoordinatorCore: membership (RegisterWorker, Heartbeat, DrainWorker, removal of drained
// workers) and the assignment of repositories to workers.
#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "assignment.h"
#include "coordinator/coordinator_core.h"
#include "coordinator/request_validation.h"

namespace issuescope::coordinator {

absl::StatusOr<v1::RegisterWorkerResponse> CoordinatorCore::RegisterWorker(
    const v1::RegisterWorkerRequest& req) {
  RETURN_IF_ERROR(coordinator::ValidateWorkerId(req.worker_id()));
  RETURN_IF_ERROR(coordinator::ValidateStoreAddress(req.store_address()));
  if (req.capacity() < 0) {
    return absl::InvalidArgumentError(absl::StrCat("capacity is negative (", req.capacity(), ")"));
  }
  std::lock_guard<std::mutex> lock(mu_);
  absl::Time now = clock_->Now();
  RETURN_IF_ERROR(ExpireLocked(now));
  WorkerRecord record;
  record.set_worker_id(req.worker_id());
  record.set_store_address(req.store_address());
  record.set_store_id(req.store_id());
  record.set_capacity(std::max(1, req.capacity()));
  *record.mutable_registered_at() = ToProto(now);
  // A registering worker starts afresh: leases it held before (e.g. before it restarted) end,
  // so their repositories can be granted again at once.
  StateBatch batch;
  batch.PutWorker(record);
  std::vector<std::pair<std::string, RepoRecord>> ended;
  for (const auto& [slug, rec] : repos_) {
    if (rec.lease_worker() != req.worker_id()) continue;
    RepoRecord copy = rec;
    EndLeaseLocked(&copy);
    batch.PutRepo(slug, copy);
    ended.emplace_back(slug, std::move(copy));
  }
  RETURN_IF_ERROR(state_->Commit(batch));
  for (auto& [slug, rec] : ended) repos_[slug] = std::move(rec);
  WorkerEntry& entry = workers_[req.worker_id()];
  // A wiped store starts its feed again: the seq reported for the old one no longer applies.
  if (entry.record.store_id() != record.store_id()) entry.store_last_seq = 0;
  entry.drained_idle_since = absl::InfiniteFuture();
  entry.record = std::move(record);
  departed_.erase(req.worker_id());
  entry.last_seen = now;
  assignment_dirty_ = true;
  spdlog::info("worker {} registered (store {} at {}, capacity {})", req.worker_id(),
               req.store_id(), req.store_address(), entry.record.capacity());
  v1::RegisterWorkerResponse resp;
  resp.set_heartbeat_interval_ms(absl::ToInt64Milliseconds(options_.heartbeat_interval));
  resp.set_lease_ttl_ms(absl::ToInt64Milliseconds(options_.lease_ttl));
  return resp;
}

absl::StatusOr<v1::HeartbeatResponse> CoordinatorCore::Heartbeat(const v1::HeartbeatRequest& req) {
  RETURN_IF_ERROR(coordinator::ValidateWorkerId(req.worker_id()));
  std::vector<std::string> slugs;
  for (int i = 0; i < req.held_size(); ++i) {
    ASSIGN_OR_RETURN(std::string slug,
                     coordinator::ValidateLeaseRef(req.held(i), absl::StrCat("held[", i, "]")));
    slugs.push_back(std::move(slug));
  }
  for (int i = 0; i < req.budgets_size(); ++i) {
    RETURN_IF_ERROR(ValidateTokenBudget(req.budgets(i), absl::StrCat("budgets[", i, "]")));
  }
  std::lock_guard<std::mutex> lock(mu_);
  absl::Time now = clock_->Now();
  RETURN_IF_ERROR(ExpireLocked(now));
  v1::HeartbeatResponse resp;
  if (!AliveLocked(req.worker_id(), now)) {
    resp.set_known(false);
    // A worker removed after draining is told so: it should exit, not register again.
    resp.set_draining(departed_.count(req.worker_id()) > 0);
    *resp.mutable_revoked() = req.held();
    return resp;
  }
  resp.set_known(true);
  WorkerEntry& self = workers_[req.worker_id()];
  self.last_seen = now;
  self.store_last_seq = std::max(self.store_last_seq, req.store_last_seq());
  resp.set_draining(self.record.draining());
  accounts_.Report(req.worker_id(), req.budgets(), now);
  for (int i = 0; i < req.held_size(); ++i) {
    auto it = repos_.find(slugs[i]);
    if (it != repos_.end() && it->second.lease_worker() == req.worker_id() &&
        it->second.epoch() == req.held(i).epoch()) {
      *it->second.mutable_lease_expires_at() = ToProto(now + options_.lease_ttl);
    } else {
      *resp.add_revoked() = req.held(i);
    }
  }
  const std::set<std::string> me = {req.worker_id()};
  for (auto& view : accounts_.View(now, LeaseCountLocked(), &me)) {
    *resp.add_accounts() = std::move(view);
  }
  return resp;
}


absl::StatusOr<v1::DrainWorkerResponse> CoordinatorCore::DrainWorker(
    const v1::DrainWorkerRequest& req) {
  RETURN_IF_ERROR(coordinator::ValidateWorkerId(req.worker_id()));
  std::lock_guard<std::mutex> lock(mu_);
  absl::Time now = clock_->Now();
  RETURN_IF_ERROR(ExpireLocked(now));
  auto it = workers_.find(req.worker_id());
  if (it == workers_.end()) {
    return absl::NotFoundError(absl::StrCat("worker ", req.worker_id(), " is not registered"));
  }
  std::map<std::string, int> held = LeasesHeldLocked();
  WorkerRecord record = it->second.record;
  record.set_draining(true);
  StateBatch batch;
  batch.PutWorker(record);
  // ReapDrainedLocked looks at workers_, which still has the old record: `extra` names this one.
  Reaped reaped = ReapDrainedLocked(held, now, &batch, req.worker_id());
  RETURN_IF_ERROR(state_->Commit(batch));
  it->second.record = std::move(record);
  v1::DrainWorkerResponse resp;
  resp.set_leases_held(held[req.worker_id()]);
  resp.set_removed(std::find(reaped.workers.begin(), reaped.workers.end(), req.worker_id()) !=
                   reaped.workers.end());
  spdlog::info("worker {} draining ({} leases held)", req.worker_id(), resp.leases_held());
  ApplyReapedLocked(std::move(reaped));
  assignment_dirty_ = true;
  return resp;
}

CoordinatorCore::Reaped CoordinatorCore::ReapDrainedLocked(const std::map<std::string, int>& held,
                                                           absl::Time now, StateBatch* batch,
                                                           const std::string& extra) {
  Reaped reaped;
  std::set<std::string> abandoned;
  for (auto& [id, entry] : workers_) {
    if (!entry.record.draining() && id != extra) continue;
    auto count = held.find(id);
    if (count != held.end() && count->second > 0) {
      entry.drained_idle_since = absl::InfiniteFuture();
      continue;
    }
    if (entry.drained_idle_since == absl::InfiniteFuture()) entry.drained_idle_since = now;
    if (!FeedIndexedLocked(entry, now)) {
      const bool dead = !AliveLocked(entry, now);
      const bool waited = now >= entry.drained_idle_since + options_.drain_feed_timeout;
      if (!dead && !waited) continue;  // keeps serving its store while the indexers read it
      spdlog::warn("drained worker {} {} before the indexers read its store '{}' (seq {}, "
                   "indexed {}): abandoning the store; its repositories are crawled again",
                   id, dead ? "died" : absl::StrCat("waited ",
                                                    absl::FormatDuration(options_.drain_feed_timeout)),
                   entry.record.store_id(), entry.store_last_seq,
                   IndexedSeqLocked(entry.record.store_id(), now));
      if (!entry.record.store_id().empty()) abandoned.insert(entry.record.store_id());
    }
    batch->DeleteWorker(id);
    reaped.workers.push_back(id);
  }
  // A store another remaining member still holds (the same store id) is not abandoned.
  for (const auto& [id, entry] : workers_) {
    if (std::find(reaped.workers.begin(), reaped.workers.end(), id) == reaped.workers.end()) {
      abandoned.erase(entry.record.store_id());
    }
  }
  // As for a lost store: what the indexers had not read exists nowhere else.
  if (!abandoned.empty()) {
    reaped.scheduled = ScheduleStoreRepositoriesLocked(abandoned, now, batch);
  }
  return reaped;
}

bool CoordinatorCore::FeedIndexedLocked(const WorkerEntry& entry, absl::Time now) const {
  for (const auto& [id, indexer] : indexers_) {
    if (indexer.seen + options_.drain_feed_timeout <= now) continue;  // not active
    auto it = indexer.positions.find(entry.record.store_id());
    const uint64_t indexed = it == indexer.positions.end() ? 0 : it->second;
    if (indexed < entry.store_last_seq) return false;
  }
  return true;
}

uint64_t CoordinatorCore::IndexedSeqLocked(const std::string& store_id, absl::Time now) const {
  bool any = false;
  uint64_t lowest = 0;
  for (const auto& [id, indexer] : indexers_) {
    if (indexer.seen + options_.drain_feed_timeout <= now) continue;
    auto it = indexer.positions.find(store_id);
    const uint64_t indexed = it == indexer.positions.end() ? 0 : it->second;
    lowest = any ? std::min(lowest, indexed) : indexed;
    any = true;
  }
  return lowest;
}

void CoordinatorCore::NoteStoreSeqLocked(const std::string& worker_id, uint64_t seq) {
  auto it = workers_.find(worker_id);
  if (it != workers_.end()) it->second.store_last_seq = std::max(it->second.store_last_seq, seq);
}

absl::StatusOr<v1::ReportIndexProgressResponse> CoordinatorCore::ReportIndexProgress(
    const v1::ReportIndexProgressRequest& req) {
  RETURN_IF_ERROR(coordinator::ValidateWorkerId(req.indexer_id(), "indexer_id"));
  constexpr int kMaxPositions = 100000;
  if (req.positions_size() > kMaxPositions) {
    return absl::InvalidArgumentError(absl::StrCat("positions: ", req.positions_size(),
                                                   " entries, at most ", kMaxPositions));
  }
  std::map<std::string, uint64_t> positions;
  for (int i = 0; i < req.positions_size(); ++i) {
    const v1::StorePosition& position = req.positions(i);
    if (position.store_id().empty() || position.store_id().size() > 128) {
      return absl::InvalidArgumentError(absl::StrCat(
          "positions[", i, "].store_id must be 1 to 128 bytes, got ",
          position.store_id().size()));
    }
    uint64_t& seq = positions[position.store_id()];
    seq = std::max(seq, position.seq());
  }
  std::lock_guard<std::mutex> lock(mu_);
  const absl::Time now = clock_->Now();
  // Indexers silent for drain_feed_timeout are forgotten (they no longer count as active).
  for (auto it = indexers_.begin(); it != indexers_.end();) {
    it = it->second.seen + options_.drain_feed_timeout <= now ? indexers_.erase(it) : std::next(it);
  }
  IndexerEntry& entry = indexers_[req.indexer_id()];
  entry.seen = now;
  entry.positions = std::move(positions);
  RETURN_IF_ERROR(ExpireLocked(now));  // removes the drained workers this report frees
  return v1::ReportIndexProgressResponse();
}

void CoordinatorCore::ApplyReapedLocked(Reaped reaped) {
  for (const std::string& id : reaped.workers) {
    workers_.erase(id);
    departed_.insert(id);
    accounts_.ForgetWorker(id);
    spdlog::info("worker {} drained and removed", id);
  }
  if (!reaped.workers.empty()) assignment_dirty_ = true;
  for (auto& [slug, rec] : reaped.scheduled) {
    spdlog::info("{}: its store '{}' was abandoned; scheduling a crawl (FULL on any other store)",
                 slug, rec.cursor_store_id());
    repos_[slug] = std::move(rec);
  }
}

const std::map<std::string, std::string>& CoordinatorCore::AssignmentLocked(absl::Time now) {
  std::vector<AssignableWorker> workers;
  std::vector<std::string> ids;
  std::vector<std::string> homes;  // away workers, within their home grace
  for (const auto& [id, entry] : workers_) {
    if (entry.record.draining()) continue;
    if (AliveLocked(entry, now)) {
      workers.push_back({id, static_cast<double>(std::max(1, entry.record.capacity()))});
      ids.push_back(id);
    } else if (AwayLocked(id, now)) {
      homes.push_back(id);
    }
  }
  if (!assignment_dirty_ && ids == assigned_workers_ && homes == assigned_homes_) return owners_;
  // The owner a repository sticks to is the live worker whose store holds its data (the store
  // that set its cursor): giving it to anyone else costs a full crawl. Without one, the previous
  // assignment, then the last lease holder.
  std::map<std::string, std::string> worker_of_store;
  for (const std::string& id : ids) worker_of_store[workers_[id].record.store_id()] = id;
  // A repository whose store belongs to an away worker waits for it (home grace): it stays
  // out of the placement, so no live worker is granted it and no live worker's share counts it.
  std::map<std::string, std::string> home_of_store;
  for (const std::string& id : homes) {
    const std::string& store = workers_[id].record.store_id();
    if (!store.empty() && worker_of_store.count(store) == 0) home_of_store[store] = id;
  }
  std::map<std::string, std::string> waiting;  // slug -> away worker
  std::vector<AssignableRepo> repos;
  repos.reserve(repos_.size());
  for (const auto& [slug, rec] : repos_) {
    if (!rec.moved_to().empty() || rec.paused()) continue;
    if (rec.has_cursor()) {
      if (auto home = home_of_store.find(rec.cursor_store_id()); home != home_of_store.end()) {
        waiting.emplace(slug, home->second);
        continue;
      }
    }
    std::string owner;
    auto holder = worker_of_store.find(rec.cursor_store_id());
    if (rec.has_cursor() && holder != worker_of_store.end()) {
      owner = holder->second;
    } else if (auto previous = owners_.find(slug); previous != owners_.end()) {
      owner = previous->second;
    } else {
      owner = rec.last_worker();
    }
    repos.push_back({slug, rec.issues_estimated(), owner});
  }
  owners_ = AssignRepositories(workers, repos, options_.load_tolerance);
  owners_.insert(waiting.begin(), waiting.end());
  assigned_workers_ = std::move(ids);
  assigned_homes_ = std::move(homes);
  assignment_dirty_ = false;
  return owners_;
}

}  // namespace issuescope::coordinator

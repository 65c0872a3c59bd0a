// CoordinatorCore: opening, lease bookkeeping and the lease calls (AcquireLeases,
// ReportProgress, ReleaseLease). Membership is in coordinator_membership.cc, the catalog calls
// in coordinator_admin.cc, status in coordinator_status.cc.
#include "coordinator/coordinator_core.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/repo_slug.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "assignment.h"
#include "coordinator/request_validation.h"

namespace issuescope::coordinator {


namespace {

v1::CrawlMode Merge(v1::CrawlMode a, v1::CrawlMode b) {
  if (a == v1::CRAWL_MODE_FULL || b == v1::CRAWL_MODE_FULL) return v1::CRAWL_MODE_FULL;
  if (a == v1::CRAWL_MODE_INCREMENTAL || b == v1::CRAWL_MODE_INCREMENTAL) {
    return v1::CRAWL_MODE_INCREMENTAL;
  }
  return v1::CRAWL_MODE_UNSPECIFIED;
}

}  // namespace

CoordinatorCore::CoordinatorCore(CoordinatorOptions options, Clock* clock,
                                 std::unique_ptr<coordinator::CoordinatorState> state)
    : options_(options),
      clock_(clock),
      state_(std::move(state)),
      accounts_(options.account_reserve) {}

absl::StatusOr<std::unique_ptr<CoordinatorCore>> CoordinatorCore::Open(const std::string& path,
                                                                       CoordinatorOptions options,
                                                                       Clock* clock) {
  if (clock == nullptr) return absl::InvalidArgumentError("coordinator: clock is null");
  const std::pair<const char*, absl::Duration> durations[] = {
      {"heartbeat_interval", options.heartbeat_interval},
      {"lease_ttl", options.lease_ttl},
      {"worker_timeout", options.worker_timeout},
      {"retry_failed_after", options.retry_failed_after},
      {"drain_feed_timeout", options.drain_feed_timeout}};
  if (options.account_reserve < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "coordinator option account_reserve must be >= 0, got ", options.account_reserve));
  }
  if (!(options.load_tolerance >= 0 && options.load_tolerance <= 10)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "coordinator option load_tolerance must be in [0, 10], got ", options.load_tolerance));
  }
  for (const auto& [name, value] : durations) {
    if (value <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "coordinator option ", name, " must be positive, got ", absl::FormatDuration(value)));
    }
  }
  // A worker must be able to heartbeat at least twice within the liveness and lease windows,
  // or idle workers are declared dead between heartbeats and their crawls fenced for no reason.
  if (options.heartbeat_interval * 2 > options.worker_timeout ||
      options.heartbeat_interval * 2 > options.lease_ttl) {
    return absl::InvalidArgumentError(absl::StrCat(
        "coordinator option heartbeat_interval (", absl::FormatDuration(options.heartbeat_interval),
        ") must be at most half of worker_timeout (", absl::FormatDuration(options.worker_timeout),
        ") and of lease_ttl (", absl::FormatDuration(options.lease_ttl), ")"));
  }
  if (!options.home_grace) options.home_grace = 3 * options.worker_timeout;
  if (*options.home_grace < absl::ZeroDuration() ||
      *options.home_grace == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("coordinator option home_grace must be zero (off) or a finite positive "
                     "duration, got ",
                     absl::FormatDuration(*options.home_grace)));
  }
  ASSIGN_OR_RETURN(auto state,
                   coordinator::CoordinatorState::Open(path, options.env, options.sync_writes));
  std::unique_ptr<CoordinatorCore> core(new CoordinatorCore(options, clock, std::move(state)));
  RETURN_IF_ERROR(core->Load());
  return core;
}

absl::Status CoordinatorCore::Load() {
  std::lock_guard<std::mutex> lock(mu_);
  absl::Time now = clock_->Now();
  ASSIGN_OR_RETURN(repos_, state_->LoadRepos());
  ASSIGN_OR_RETURN(auto workers, state_->LoadWorkers());
  std::map<std::string, int> held = LeasesHeldLocked();
  StateBatch batch;
  for (auto& [id, record] : workers) {
    WorkerEntry entry;
    entry.record = std::move(record);
    // Holders of leases at the crash get a fresh liveness window to reconnect (and their home
    // grace starts when it ends); the others must prove liveness again.
    const bool holder = held.count(id) > 0;
    entry.last_seen = holder ? now : FromProto(entry.record.registered_at());
    if (holder) {
      entry.record.clear_home_until();
    } else if (!entry.record.has_home_until() && !entry.record.draining() &&
               !AliveLocked(entry, now)) {
      // Not known to be dead at the crash, so maybe alive until it: a home for home_grace from
      // the reopen, long enough to notice (known=false) and register again.
      *entry.record.mutable_home_until() = ToProto(now + *options_.home_grace);
      batch.PutWorker(entry.record);
    }
    workers_.emplace(id, std::move(entry));
  }
  RETURN_IF_ERROR(state_->Commit(batch));
  int leases = 0;
  for (auto& [slug, rec] : repos_) {
    if (rec.lease_worker().empty()) continue;
    ++leases;
    absl::Time expires = std::max(FromProto(rec.lease_expires_at()), now + options_.lease_ttl);
    *rec.mutable_lease_expires_at() = ToProto(expires);
  }
  spdlog::info("coordinator state loaded: {} repositories, {} workers, {} leases held",
               repos_.size(), workers_.size(), leases);
  return absl::OkStatus();
}

bool CoordinatorCore::AliveLocked(const std::string& worker_id, absl::Time now) const {
  auto it = workers_.find(worker_id);
  return it != workers_.end() && AliveLocked(it->second, now);
}

bool CoordinatorCore::AliveLocked(const WorkerEntry& entry, absl::Time now) const {
  return now - entry.last_seen < options_.worker_timeout;
}

absl::Time CoordinatorCore::HomeUntilLocked(const WorkerEntry& entry) const {
  if (entry.record.has_home_until()) return FromProto(entry.record.home_until());
  return entry.last_seen + options_.worker_timeout + *options_.home_grace;
}

bool CoordinatorCore::AwayLocked(const std::string& worker_id, absl::Time now) const {
  auto it = workers_.find(worker_id);
  return it != workers_.end() && !it->second.record.draining() &&
         !AliveLocked(it->second, now) && now < HomeUntilLocked(it->second);
}

absl::Time CoordinatorCore::NextCrawlAtLocked(const RepoRecord& rec, absl::Time now) const {
  if (!rec.moved_to().empty() || rec.paused()) return absl::InfiniteFuture();
  if (rec.has_failed_at()) return FromProto(rec.failed_at()) + options_.retry_failed_after;
  if (rec.scheduled() != v1::CRAWL_MODE_UNSPECIFIED) return now;
  absl::Time next = absl::InfiniteFuture();
  if (rec.has_last_completed_at() && rec.spec().recrawl_interval_s() > 0) {
    next = FromProto(rec.last_completed_at()) + absl::Seconds(rec.spec().recrawl_interval_s());
  }
  const auto& full_base =
      rec.has_last_full_completed_at() ? rec.last_full_completed_at() : rec.last_completed_at();
  if ((rec.has_last_full_completed_at() || rec.has_last_completed_at()) &&
      rec.spec().full_recrawl_interval_s() > 0) {
    next = std::min(next,
                    FromProto(full_base) + absl::Seconds(rec.spec().full_recrawl_interval_s()));
  }
  return next;
}

v1::CrawlMode CoordinatorCore::DueModeLocked(const RepoRecord& rec, absl::Time now) const {
  if (!rec.moved_to().empty() || !rec.lease_worker().empty() || rec.paused()) {
    return v1::CRAWL_MODE_UNSPECIFIED;
  }
  const v1::CrawlMode scheduled = rec.scheduled();
  if (rec.has_failed_at()) {
    if (now < FromProto(rec.failed_at()) + options_.retry_failed_after) {
      return v1::CRAWL_MODE_UNSPECIFIED;
    }
    return scheduled != v1::CRAWL_MODE_UNSPECIFIED ? scheduled : v1::CRAWL_MODE_INCREMENTAL;
  }
  if (scheduled != v1::CRAWL_MODE_UNSPECIFIED) return scheduled;
  const int64_t full = rec.spec().full_recrawl_interval_s();
  if (full > 0 && (rec.has_last_full_completed_at() || rec.has_last_completed_at())) {
    const auto& base =
        rec.has_last_full_completed_at() ? rec.last_full_completed_at() : rec.last_completed_at();
    if (now >= FromProto(base) + absl::Seconds(full)) return v1::CRAWL_MODE_FULL;
  }
  const int64_t interval = rec.spec().recrawl_interval_s();
  if (interval > 0 && rec.has_last_completed_at() &&
      now >= FromProto(rec.last_completed_at()) + absl::Seconds(interval)) {
    return v1::CRAWL_MODE_INCREMENTAL;
  }
  return v1::CRAWL_MODE_UNSPECIFIED;
}

bool CoordinatorCore::NeedsCrawlLocked(const RepoRecord& rec, absl::Time now) const {
  return DueModeLocked(rec, now) != v1::CRAWL_MODE_UNSPECIFIED;
}

v1::RepoPhase CoordinatorCore::PhaseLocked(const RepoRecord& rec, absl::Time now) const {
  if (!rec.moved_to().empty()) return v1::REPO_PHASE_GONE;
  if (!rec.lease_worker().empty()) return v1::REPO_PHASE_CRAWLING;
  if (rec.paused()) return v1::REPO_PHASE_PAUSED;
  if (NeedsCrawlLocked(rec, now)) return v1::REPO_PHASE_PENDING;
  if (rec.has_failed_at()) return v1::REPO_PHASE_FAILED;
  return v1::REPO_PHASE_IDLE;
}

void CoordinatorCore::EndLeaseLocked(RepoRecord* rec) {
  rec->clear_lease_worker();
  rec->clear_lease_expires_at();
  rec->clear_lease_mode();
  rec->set_scheduled(Merge(rec->scheduled(), rec->scheduled_next()));
  rec->clear_scheduled_next();
}

void CoordinatorCore::Request(RepoRecord* rec, v1::CrawlMode mode) {
  if (rec->lease_worker().empty()) {
    rec->set_scheduled(Merge(rec->scheduled(), mode));
    rec->clear_failed_at();
  } else {
    rec->set_scheduled_next(Merge(rec->scheduled_next(), mode));
  }
}

std::map<std::string, int> CoordinatorCore::LeasesHeldLocked() const {
  std::map<std::string, int> held;
  for (const auto& [slug, rec] : repos_) {
    if (!rec.lease_worker().empty()) ++held[rec.lease_worker()];
  }
  return held;
}

std::map<std::pair<std::string, v1::Tracker>, int> CoordinatorCore::LeaseCountLocked() const {
  std::map<std::pair<std::string, v1::Tracker>, int> held;
  for (const auto& [slug, rec] : repos_) {
    if (!rec.lease_worker().empty()) ++held[{rec.lease_worker(), rec.spec().repo().tracker()}];
  }
  return held;
}

void CoordinatorCore::AddTotals(RepoRecord* rec, const v1::CrawlCounters& now) {
  const v1::CrawlCounters& was = rec->counters();
  v1::CrawlCounters* totals = rec->mutable_totals();
  auto add = [](int64_t before, int64_t after) { return after > before ? after - before : 0; };
  totals->set_issues_fetched(totals->issues_fetched() +
                             add(was.issues_fetched(), now.issues_fetched()));
  totals->set_comments_fetched(totals->comments_fetched() +
                               add(was.comments_fetched(), now.comments_fetched()));
  totals->set_issues_stored(totals->issues_stored() + add(was.issues_stored(), now.issues_stored()));
  totals->set_comments_stored(totals->comments_stored() +
                              add(was.comments_stored(), now.comments_stored()));
  totals->set_requests(totals->requests() + add(was.requests(), now.requests()));
  totals->set_not_modified(totals->not_modified() + add(was.not_modified(), now.not_modified()));
  totals->set_retries(totals->retries() + add(was.retries(), now.retries()));
  totals->set_items_quarantined(totals->items_quarantined() +
                                add(was.items_quarantined(), now.items_quarantined()));
}

absl::Status CoordinatorCore::ExpireLocked(absl::Time now) {
  StateBatch batch;
  std::vector<std::pair<std::string, RepoRecord>> ended;
  for (const auto& [slug, rec] : repos_) {
    if (rec.lease_worker().empty()) continue;
    bool expired = now >= FromProto(rec.lease_expires_at());
    bool holder_dead = !AliveLocked(rec.lease_worker(), now);
    if (!expired && !holder_dead) continue;
    spdlog::info("lease of {} (epoch {}) held by {} ended: {}", slug, rec.epoch(),
                 rec.lease_worker(), expired ? "expired" : "worker silent");
    RepoRecord copy = rec;
    EndLeaseLocked(&copy);
    batch.PutRepo(slug, copy);
    ended.emplace_back(slug, std::move(copy));
  }
  // Workers declared dead now: the end of their home grace becomes durable (a restart must
  // neither extend nor forget it).
  std::vector<std::pair<std::string, absl::Time>> declared_dead;
  for (const auto& [id, entry] : workers_) {
    if (entry.record.draining() || entry.record.has_home_until() || AliveLocked(entry, now)) {
      continue;
    }
    const absl::Time home_until = HomeUntilLocked(entry);
    WorkerRecord record = entry.record;
    *record.mutable_home_until() = ToProto(home_until);
    batch.PutWorker(record);
    declared_dead.emplace_back(id, home_until);
  }
  std::map<std::string, int> held = LeasesHeldLocked();
  for (const auto& [slug, rec] : ended) --held[repos_[slug].lease_worker()];
  Reaped reaped = ReapDrainedLocked(held, now, &batch);
  RETURN_IF_ERROR(state_->Commit(batch));
  for (auto& [slug, rec] : ended) repos_[slug] = std::move(rec);
  for (const auto& [id, home_until] : declared_dead) {
    WorkerEntry& entry = workers_[id];
    *entry.record.mutable_home_until() = ToProto(home_until);
    if (home_until > now) {
      spdlog::info("worker {} silent since {}: dead; the repositories its store '{}' holds wait "
                   "for it until {}", id, absl::FormatTime(entry.last_seen),
                   entry.record.store_id(), absl::FormatTime(home_until));
    }
  }
  lease_expirations_ += static_cast<int64_t>(ended.size());
  ApplyReapedLocked(std::move(reaped));
  if (!ended.empty()) assignment_dirty_ = true;
  return ScheduleLostStoresLocked(now);
}

absl::Status CoordinatorCore::ScheduleLostStoresLocked(absl::Time now) {
  // Stores of workers that died and stayed away past their grace, unless a live or away worker
  // holds the same store.
  std::set<std::string> held, lost;
  for (const auto& [id, entry] : workers_) {
    const std::string& store = entry.record.store_id();
    if (store.empty()) continue;
    if (AliveLocked(entry, now) || AwayLocked(id, now)) {
      held.insert(store);
    } else if (!entry.record.draining()) {
      lost.insert(store);
    }
  }
  for (const std::string& store : held) lost.erase(store);
  if (lost.empty()) return absl::OkStatus();
  StateBatch batch;
  std::vector<std::pair<std::string, RepoRecord>> scheduled =
      ScheduleStoreRepositoriesLocked(lost, now, &batch);
  if (scheduled.empty()) return absl::OkStatus();
  RETURN_IF_ERROR(state_->Commit(batch));
  for (auto& [slug, rec] : scheduled) {
    spdlog::info("{}: store '{}' that holds its data is lost (its worker stayed dead past its "
                 "grace); scheduling a crawl (FULL on any other store)", slug,
                 rec.cursor_store_id());
    repos_[slug] = std::move(rec);
  }
  return absl::OkStatus();
}

std::vector<std::pair<std::string, RepoRecord>> CoordinatorCore::ScheduleStoreRepositoriesLocked(
    const std::set<std::string>& stores, absl::Time now, StateBatch* batch) const {
  std::vector<std::pair<std::string, RepoRecord>> scheduled;
  for (const auto& [slug, rec] : repos_) {
    // Already due (scheduled, or an interval passed), failed, paused, gone or leased: its next
    // grant comes anyway, FULL on another store.
    if (!rec.has_cursor() || stores.count(rec.cursor_store_id()) == 0 || rec.has_failed_at() ||
        DueModeLocked(rec, now) != v1::CRAWL_MODE_UNSPECIFIED || !rec.moved_to().empty() ||
        rec.paused() || !rec.lease_worker().empty()) {
      continue;
    }
    RepoRecord copy = rec;
    // Granted to any other store, the crawl becomes FULL (AcquireLeases); the old worker
    // coming back with its store intact resumes incrementally.
    Request(&copy, v1::CRAWL_MODE_INCREMENTAL);
    batch->PutRepo(slug, copy);
    scheduled.emplace_back(slug, std::move(copy));
  }
  return scheduled;
}

void CoordinatorCore::Tick() {
  std::lock_guard<std::mutex> lock(mu_);
  absl::Status status = ExpireLocked(clock_->Now());
  if (!status.ok()) spdlog::warn("coordinator tick: {}", status.ToString());
}

absl::Status CoordinatorCore::CheckLeaseLocked(const std::string& worker_id,
                                               const std::string& slug, uint64_t epoch,
                                               RepoRecord** rec) {
  auto it = repos_.find(slug);
  if (it == repos_.end()) {
    return absl::FailedPreconditionError(absl::StrCat("stale lease epoch ", epoch, " for ", slug,
                                                      ": the repository is not in the catalog"));
  }
  const RepoRecord& r = it->second;
  if (r.epoch() == epoch && r.lease_worker() == worker_id) {
    *rec = &it->second;
    return absl::OkStatus();
  }
  std::string why;
  if (r.lease_worker().empty()) {
    why = r.epoch() == epoch ? "; the lease expired or was released" : "";
  } else if (r.lease_worker() != worker_id) {
    why = absl::StrCat("; leased to ", r.lease_worker());
  }
  return absl::FailedPreconditionError(
      absl::StrCat("stale lease epoch ", epoch, " for ", slug, " (current ", r.epoch(), ")", why));
}

absl::StatusOr<v1::AcquireLeasesResponse> CoordinatorCore::AcquireLeases(
    const v1::AcquireLeasesRequest& req) {
  RETURN_IF_ERROR(coordinator::ValidateWorkerId(req.worker_id()));
  if (req.max_leases() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_leases is negative (", req.max_leases(), ")"));
  }
  std::lock_guard<std::mutex> lock(mu_);
  absl::Time now = clock_->Now();
  RETURN_IF_ERROR(ExpireLocked(now));
  auto self = workers_.find(req.worker_id());
  if (self == workers_.end()) {
    return absl::NotFoundError(
        absl::StrCat("worker ", req.worker_id(), " is not registered; call RegisterWorker first"));
  }
  if (!AliveLocked(req.worker_id(), now)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "worker ", req.worker_id(), " was declared dead (silent for more than ",
        absl::FormatDuration(options_.worker_timeout), "); call RegisterWorker again"));
  }
  self->second.last_seen = now;
  v1::AcquireLeasesResponse resp;
  if (self->second.record.draining()) return resp;  // leaving: no new leases
  int limit = req.max_leases();
  if (limit == 0) {
    limit = std::max(0, self->second.record.capacity() - LeasesHeldLocked()[req.worker_id()]);
  }
  const std::map<std::string, std::string>& owners = AssignmentLocked(now);
  auto leases = LeaseCountLocked();

  StateBatch batch;
  std::vector<std::pair<std::string, RepoRecord>> granted;
  for (const auto& [slug, rec] : repos_) {
    if (static_cast<int>(granted.size()) >= limit) break;
    const v1::CrawlMode due = DueModeLocked(rec, now);
    if (due == v1::CRAWL_MODE_UNSPECIFIED) continue;
    auto owner = owners.find(slug);
    if (owner == owners.end() || owner->second != req.worker_id()) continue;
    const v1::Tracker tracker = rec.spec().repo().tracker();
    if (!accounts_.MayGrant(req.worker_id(), tracker, now, leases)) continue;
    ++leases[{req.worker_id(), tracker}];
    RepoRecord copy = rec;
    v1::CrawlMode mode = due;
    // The cursor describes another store's contents: this worker's store lacks what came
    // before it, so an incremental crawl from it would leave issues missing from this store.
    if (mode == v1::CRAWL_MODE_INCREMENTAL && rec.has_cursor() &&
        rec.cursor_store_id() != self->second.record.store_id()) {
      spdlog::info("{}: cursor was set by store '{}', granting a FULL crawl to store '{}'", slug,
                   rec.cursor_store_id(), self->second.record.store_id());
      mode = v1::CRAWL_MODE_FULL;
    }
    copy.set_epoch(rec.epoch() + 1);
    copy.set_lease_worker(req.worker_id());
    *copy.mutable_lease_expires_at() = ToProto(now + options_.lease_ttl);
    copy.set_lease_mode(mode);
    copy.set_scheduled(mode);  // stays scheduled until the crawl completes
    copy.clear_failed_at();
    copy.clear_counters();
    copy.set_last_worker(req.worker_id());
    batch.PutRepo(slug, copy);
    granted.emplace_back(slug, std::move(copy));
  }
  // Durable before any grant is returned: an epoch is never handed out twice.
  RETURN_IF_ERROR(state_->Commit(batch));

  epochs_granted_ += static_cast<int64_t>(granted.size());
  for (auto& [slug, rec] : granted) {
    rates_[slug] = {RateSample{now, 0, 0}};
    v1::Lease* lease = resp.add_leases();
    lease->set_repo_slug(slug);
    *lease->mutable_repo() = rec.spec().repo();
    lease->set_epoch(rec.epoch());
    *lease->mutable_expires_at() = rec.lease_expires_at();
    lease->set_mode(rec.lease_mode());
    *lease->mutable_cursor() = rec.cursor();
    lease->set_include_pull_requests(rec.spec().include_pull_requests());
    spdlog::info("granted {} to {} (epoch {}, {})", slug, req.worker_id(), rec.epoch(),
                 v1::CrawlMode_Name(rec.lease_mode()));
    repos_[slug] = std::move(rec);
  }
  return resp;
}

absl::StatusOr<v1::ReportProgressResponse> CoordinatorCore::ReportProgress(
    const v1::ReportProgressRequest& req) {
  RETURN_IF_ERROR(coordinator::ValidateWorkerId(req.worker_id()));
  ASSIGN_OR_RETURN(std::string slug, coordinator::ValidateLeaseRef(req.lease(), "lease"));
  std::lock_guard<std::mutex> lock(mu_);
  absl::Time now = clock_->Now();
  RETURN_IF_ERROR(ExpireLocked(now));
  RepoRecord* current = nullptr;
  RETURN_IF_ERROR(CheckLeaseLocked(req.worker_id(), slug, req.lease().epoch(), &current));
  if (req.has_cursor()) RETURN_IF_ERROR(coordinator::ValidateCursor(req.cursor(), now, "cursor"));

  RepoRecord rec = *current;
  StateBatch batch;
  std::string moved_slug;
  RepoRecord moved_rec;
  if (!req.moved_to().empty() && req.error().empty()) {
    std::string target = req.moved_to();
    if (target.find(':') == std::string::npos) {
      target = absl::StrCat(TrackerName(rec.spec().repo().tracker()), ":", target);
    }
    auto ref = ParseRepoSpec(target);
    if (!ref.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("moved_to: ", ref.status().message()));
    }
    ref->set_api_url(rec.spec().repo().api_url());
    moved_slug = RepoSlug(*ref);
    if (moved_slug != slug && repos_.count(moved_slug) == 0) {
      v1::RepositorySpec spec = rec.spec();
      *spec.mutable_repo() = *ref;
      ASSIGN_OR_RETURN(moved_rec, NewRecordLocked(moved_slug, spec, now));
      batch.PutRepo(moved_slug, moved_rec);
    } else {
      moved_slug.clear();
    }
  }

  if (req.has_counters()) {
    AddTotals(&rec, req.counters());
    *rec.mutable_counters() = req.counters();
  }
  if (req.has_cursor()) {
    *rec.mutable_cursor() = req.cursor();
    // The lease is current, so its holder is a registered worker (CheckLeaseLocked).
    rec.set_cursor_store_id(workers_[req.worker_id()].record.store_id());
    // A FULL crawl that stops before its end (page limit per lease) has stored everything up
    // to the cursor: the rest continues incrementally from it. Re-granting FULL would start
    // over and never finish a repository larger than one lease's pages.
    if (!req.done() && rec.lease_mode() == v1::CRAWL_MODE_FULL &&
        rec.scheduled() == v1::CRAWL_MODE_FULL) {
      rec.set_scheduled(v1::CRAWL_MODE_INCREMENTAL);
      rec.set_full_in_progress(true);
    }
  }
  if (req.issues_estimated() > 0 && req.issues_estimated() != rec.issues_estimated()) {
    rec.set_issues_estimated(req.issues_estimated());
    assignment_dirty_ = true;  // sizes weigh in the assignment
  }
  if (req.rate_remaining() != 0 || req.has_rate_reset()) {
    rec.set_rate_remaining(req.rate_remaining());
    *rec.mutable_rate_reset() = req.rate_reset();
  }
  if (!req.error().empty()) {
    rec.set_last_error(req.error());
    *rec.mutable_failed_at() = ToProto(now);
    EndLeaseLocked(&rec);  // the scheduled crawl stays, retried after the back-off
    spdlog::warn("crawl of {} (epoch {}) failed: {}", slug, rec.epoch(), req.error());
  } else if (!req.moved_to().empty()) {
    rec.set_moved_to(req.moved_to());
    rec.clear_scheduled();
    rec.clear_scheduled_next();
    EndLeaseLocked(&rec);
    spdlog::info("{} moved to {}", slug, req.moved_to());
  } else if (req.done()) {
    if (rec.lease_mode() == v1::CRAWL_MODE_FULL || rec.full_in_progress()) {
      *rec.mutable_last_full_completed_at() = ToProto(now);
    }
    rec.clear_full_in_progress();
    rec.clear_scheduled();
    EndLeaseLocked(&rec);
    rec.clear_last_error();
    rec.clear_failed_at();
    *rec.mutable_last_completed_at() = ToProto(now);
    rec.set_crawls_completed(rec.crawls_completed() + 1);
    spdlog::info("crawl of {} (epoch {}) completed", slug, rec.epoch());
  } else {
    *rec.mutable_lease_expires_at() = ToProto(now + options_.lease_ttl);
  }
  batch.PutRepo(slug, rec);
  const bool ended = rec.lease_worker().empty();
  NoteStoreSeqLocked(req.worker_id(), req.store_last_seq());
  Reaped reaped;
  if (ended) {
    std::map<std::string, int> held = LeasesHeldLocked();
    --held[req.worker_id()];
    reaped = ReapDrainedLocked(held, now, &batch);
  }
  RETURN_IF_ERROR(state_->Commit(batch));
  repos_[slug] = std::move(rec);
  if (!moved_slug.empty()) {
    repos_[moved_slug] = std::move(moved_rec);
    assignment_dirty_ = true;
  }
  if (!req.moved_to().empty()) assignment_dirty_ = true;
  workers_[req.worker_id()].last_seen = now;
  if (!ended && req.has_counters()) {
    std::vector<RateSample>& samples = rates_[slug];
    samples.push_back({now, req.counters().requests(), req.counters().issues_fetched()});
    // Keep the last minute, plus the newest sample before it as the window's start.
    size_t first = 0;
    while (first + 1 < samples.size() && samples[first + 1].at <= now - absl::Minutes(1)) ++first;
    samples.erase(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(first));
  } else if (ended) {
    rates_.erase(slug);
  }
  ApplyReapedLocked(std::move(reaped));
  return v1::ReportProgressResponse();
}

absl::StatusOr<v1::ReleaseLeaseResponse> CoordinatorCore::ReleaseLease(
    const v1::ReleaseLeaseRequest& req) {
  RETURN_IF_ERROR(coordinator::ValidateWorkerId(req.worker_id()));
  ASSIGN_OR_RETURN(std::string slug, coordinator::ValidateLeaseRef(req.lease(), "lease"));
  std::lock_guard<std::mutex> lock(mu_);
  const absl::Time now = clock_->Now();
  RETURN_IF_ERROR(ExpireLocked(now));
  NoteStoreSeqLocked(req.worker_id(), req.store_last_seq());
  auto it = repos_.find(slug);
  if (it == repos_.end() || it->second.lease_worker() != req.worker_id() ||
      it->second.epoch() != req.lease().epoch()) {
    return v1::ReleaseLeaseResponse();  // already ended: nothing to do
  }
  RepoRecord rec = it->second;
  EndLeaseLocked(&rec);
  StateBatch batch;
  batch.PutRepo(slug, rec);
  std::map<std::string, int> held = LeasesHeldLocked();
  --held[req.worker_id()];
  Reaped reaped = ReapDrainedLocked(held, now, &batch);
  RETURN_IF_ERROR(state_->Commit(batch));
  it->second = std::move(rec);
  rates_.erase(slug);
  ApplyReapedLocked(std::move(reaped));
  return v1::ReleaseLeaseResponse();
}

}  // namespace issuescope::coordinator

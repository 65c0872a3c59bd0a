// CoordinatorCore: GetStatus (repositories with owner, rates and ETA; workers with their load;
// account budgets) and the monotonic counters.
#include <algorithm>
#include <cmath>
#include <utility>

#include "common/status_macros.h"
#include "common/time_util.h"
#include "coordinator/coordinator_core.h"

namespace issuescope::coordinator {

void CoordinatorCore::FillRepoStatusLocked(const std::string& slug, const RepoRecord& rec,
                                           absl::Time now, v1::RepositoryStatus* status) {
  status->set_repo_slug(slug);
  *status->mutable_repo() = rec.spec().repo();
  status->set_phase(PhaseLocked(rec, now));
  status->set_worker_id(rec.lease_worker());
  status->set_epoch(rec.epoch());
  *status->mutable_cursor() = rec.cursor();
  *status->mutable_counters() = rec.counters();
  *status->mutable_totals() = rec.totals();
  status->set_issues_estimated(rec.issues_estimated());
  status->set_last_error(rec.last_error());
  if (rec.has_last_completed_at()) *status->mutable_last_completed_at() = rec.last_completed_at();
  status->set_crawls_completed(rec.crawls_completed());
  status->set_paused(rec.paused());
  auto owner = owners_.find(slug);
  if (owner != owners_.end() && rec.moved_to().empty() && !rec.paused()) {
    status->set_owner(owner->second);
  }
  status->set_eta_s(-1);
  auto samples = rates_.find(slug);
  if (!rec.lease_worker().empty() && samples != rates_.end() && samples->second.size() >= 2) {
    const RateSample& first = samples->second.front();
    const RateSample& last = samples->second.back();
    const double span = absl::ToDoubleSeconds(last.at - first.at);
    if (span > 0) {
      status->set_request_rate(static_cast<double>(last.requests - first.requests) / span);
      status->set_issue_rate(static_cast<double>(last.issues - first.issues) / span);
    }
    const int64_t left = rec.issues_estimated() - rec.counters().issues_fetched();
    if (status->issue_rate() > 0 && left > 0) {
      status->set_eta_s(static_cast<int64_t>(std::ceil(static_cast<double>(left) /
                                                       status->issue_rate())));
    }
  }
  const absl::Time next = NextCrawlAtLocked(rec, now);
  if (next != absl::InfiniteFuture() && rec.lease_worker().empty()) {
    *status->mutable_next_crawl_at() = ToProto(next);
    v1::CrawlMode mode = DueModeLocked(rec, std::max(now, next));
    if (rec.paused() || mode == v1::CRAWL_MODE_UNSPECIFIED) mode = rec.scheduled();
    status->set_next_mode(mode);
  }
}

absl::StatusOr<v1::GetStatusResponse> CoordinatorCore::GetStatus(const v1::GetStatusRequest&) {
  std::lock_guard<std::mutex> lock(mu_);
  absl::Time now = clock_->Now();
  RETURN_IF_ERROR(ExpireLocked(now));
  AssignmentLocked(now);
  v1::GetStatusResponse resp;
  bool quiescent = true;
  std::map<std::string, std::pair<int, int64_t>> owned;  // worker -> (repositories, load)
  for (const auto& [slug, rec] : repos_) {
    v1::RepositoryStatus* status = resp.add_repositories();
    FillRepoStatusLocked(slug, rec, now, status);
    if (status->phase() == v1::REPO_PHASE_PENDING || status->phase() == v1::REPO_PHASE_CRAWLING) {
      quiescent = false;
    }
    if (!status->owner().empty()) {
      auto& [count, load] = owned[status->owner()];
      ++count;
      load += std::max<int64_t>(1, rec.issues_estimated());
    }
  }
  std::map<std::string, int> held = LeasesHeldLocked();
  std::set<std::string> live;
  for (const auto& [id, entry] : workers_) {
    v1::WorkerStatus* worker = resp.add_workers();
    worker->set_worker_id(id);
    worker->set_store_address(entry.record.store_address());
    worker->set_store_id(entry.record.store_id());
    worker->set_alive(AliveLocked(id, now));
    if (worker->alive()) live.insert(id);
    *worker->mutable_last_heartbeat() = ToProto(entry.last_seen);
    worker->set_capacity(entry.record.capacity());
    worker->set_leases(held[id]);
    worker->set_draining(entry.record.draining());
    worker->set_repositories_owned(owned[id].first);
    worker->set_load(owned[id].second);
    for (const std::string& account : accounts_.AccountsOf(id)) worker->add_accounts(account);
    worker->set_store_last_seq(entry.store_last_seq);
    worker->set_indexed_seq(IndexedSeqLocked(entry.record.store_id(), now));
  }
  for (const auto& [id, indexer] : indexers_) {
    if (indexer.seen + options_.drain_feed_timeout > now) resp.add_active_indexers(id);
  }
  for (auto& view : accounts_.View(now, LeaseCountLocked(), &live)) {
    *resp.add_accounts() = std::move(view);
  }
  for (auto& token : accounts_.Tokens(&live)) *resp.add_tokens() = std::move(token);
  resp.set_quiescent(quiescent);
  return resp;
}

CoordinatorCounters CoordinatorCore::Counters() {
  std::lock_guard<std::mutex> lock(mu_);
  CoordinatorCounters counters;
  counters.lease_expirations = lease_expirations_;
  counters.epochs_granted = epochs_granted_;
  counters.state_commits = state_->commits();
  return counters;
}

}  // namespace issuescope::coordinator

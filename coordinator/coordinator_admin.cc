// CoordinatorCore: the admin calls (catalog changes, crawl triggers, status). The worker-facing
// calls are in coordinator_core.cc.
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "coordinator/coordinator_core.h"
#include "coordinator/request_validation.h"

namespace issuescope::coordinator {


absl::StatusOr<RepoRecord> CoordinatorCore::NewRecordLocked(const std::string& slug,
                                                            const v1::RepositorySpec& spec,
                                                            absl::Time now) {
  ASSIGN_OR_RETURN(uint64_t removed_epoch, state_->RemovedEpoch(slug));
  RepoRecord rec;
  *rec.mutable_spec() = spec;
  rec.set_epoch(removed_epoch);
  rec.set_scheduled(v1::CRAWL_MODE_FULL);
  *rec.mutable_added_at() = ToProto(now);
  return rec;
}

absl::StatusOr<v1::AddRepositoriesResponse> CoordinatorCore::AddRepositories(
    const v1::AddRepositoriesRequest& req) {
  // Validate everything first: a request is applied entirely or not at all.
  std::vector<std::string> slugs;
  slugs.reserve(req.repositories_size());
  for (int i = 0; i < req.repositories_size(); ++i) {
    ASSIGN_OR_RETURN(
        std::string slug,
        coordinator::NormalizeSpec(req.repositories(i), absl::StrCat("repositories[", i, "]")));
    slugs.push_back(std::move(slug));
  }
  std::lock_guard<std::mutex> lock(mu_);
  absl::Time now = clock_->Now();
  RETURN_IF_ERROR(ExpireLocked(now));
  StateBatch batch;
  std::map<std::string, RepoRecord> staged;
  v1::AddRepositoriesResponse resp;
  for (int i = 0; i < req.repositories_size(); ++i) {
    const std::string& slug = slugs[i];
    auto in_staged = staged.find(slug);
    auto in_catalog = repos_.find(slug);
    if (in_staged != staged.end() || in_catalog != repos_.end()) {
      RepoRecord rec = in_staged != staged.end() ? in_staged->second : in_catalog->second;
      *rec.mutable_spec() = req.repositories(i);
      rec.clear_moved_to();
      Request(&rec, in_catalog == repos_.end() ? v1::CRAWL_MODE_FULL : v1::CRAWL_MODE_INCREMENTAL);
      staged[slug] = std::move(rec);
      if (in_catalog != repos_.end() && in_staged == staged.end()) resp.add_existing(slug);
      continue;
    }
    ASSIGN_OR_RETURN(RepoRecord rec, NewRecordLocked(slug, req.repositories(i), now));
    staged[slug] = std::move(rec);
    resp.add_added(slug);
  }
  for (const auto& [slug, rec] : staged) batch.PutRepo(slug, rec);
  RETURN_IF_ERROR(state_->Commit(batch));
  for (auto& [slug, rec] : staged) repos_[slug] = std::move(rec);
  spdlog::info("catalog: {} repositories added, {} re-scheduled", resp.added_size(),
               resp.existing_size());
  return resp;
}

absl::StatusOr<v1::RemoveRepositoriesResponse> CoordinatorCore::RemoveRepositories(
    const v1::RemoveRepositoriesRequest& req) {
  ASSIGN_OR_RETURN(std::set<std::string> slugs, coordinator::NormalizeSlugs(req.repo_slugs()));
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(ExpireLocked(clock_->Now()));
  StateBatch batch;
  v1::RemoveRepositoriesResponse resp;
  for (const std::string& slug : slugs) {
    auto it = repos_.find(slug);
    if (it == repos_.end()) continue;
    batch.DeleteRepo(slug, it->second.epoch());
    resp.add_removed(slug);
  }
  RETURN_IF_ERROR(state_->Commit(batch));
  for (const std::string& slug : resp.removed()) repos_.erase(slug);
  spdlog::info("catalog: {} repositories removed", resp.removed_size());
  return resp;
}

absl::StatusOr<v1::TriggerCrawlResponse> CoordinatorCore::TriggerCrawl(
    const v1::TriggerCrawlRequest& req) {
  v1::CrawlMode mode = req.mode();
  if (mode == v1::CRAWL_MODE_UNSPECIFIED) mode = v1::CRAWL_MODE_INCREMENTAL;
  if (mode != v1::CRAWL_MODE_INCREMENTAL && mode != v1::CRAWL_MODE_FULL) {
    return absl::InvalidArgumentError(
        absl::StrCat("mode ", static_cast<int>(req.mode()), " is not a known crawl mode"));
  }
  ASSIGN_OR_RETURN(std::set<std::string> slugs, coordinator::NormalizeSlugs(req.repo_slugs()));
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(ExpireLocked(clock_->Now()));
  if (slugs.empty()) {
    for (const auto& [slug, rec] : repos_) {
      if (rec.moved_to().empty()) slugs.insert(slug);
    }
  }
  for (const std::string& slug : slugs) {
    if (repos_.count(slug) == 0) {
      return absl::NotFoundError(absl::StrCat("repository ", slug, " is not in the catalog"));
    }
  }
  StateBatch batch;
  std::vector<std::pair<std::string, RepoRecord>> staged;
  v1::TriggerCrawlResponse resp;
  for (const std::string& slug : slugs) {
    RepoRecord rec = repos_[slug];
    rec.clear_moved_to();
    Request(&rec, mode);
    batch.PutRepo(slug, rec);
    staged.emplace_back(slug, std::move(rec));
    resp.add_scheduled(slug);
  }
  RETURN_IF_ERROR(state_->Commit(batch));
  for (auto& [slug, rec] : staged) repos_[slug] = std::move(rec);
  spdlog::info("triggered {} crawl of {} repositories", v1::CrawlMode_Name(mode),
               resp.scheduled_size());
  return resp;
}

absl::StatusOr<v1::GetStatusResponse> CoordinatorCore::GetStatus(const v1::GetStatusRequest&) {
  std::lock_guard<std::mutex> lock(mu_);
  absl::Time now = clock_->Now();
  RETURN_IF_ERROR(ExpireLocked(now));
  v1::GetStatusResponse resp;
  bool quiescent = true;
  for (const auto& [slug, rec] : repos_) {
    v1::RepositoryStatus* status = resp.add_repositories();
    status->set_repo_slug(slug);
    *status->mutable_repo() = rec.spec().repo();
    status->set_phase(PhaseLocked(rec, now));
    status->set_worker_id(rec.lease_worker());
    status->set_epoch(rec.epoch());
    *status->mutable_cursor() = rec.cursor();
    *status->mutable_counters() = rec.counters();
    status->set_issues_estimated(rec.issues_estimated());
    status->set_last_error(rec.last_error());
    if (rec.has_last_completed_at()) {
      *status->mutable_last_completed_at() = rec.last_completed_at();
    }
    status->set_crawls_completed(rec.crawls_completed());
    if (status->phase() == v1::REPO_PHASE_PENDING || status->phase() == v1::REPO_PHASE_CRAWLING) {
      quiescent = false;
    }
  }
  std::map<std::string, int> held = LeasesHeldLocked();
  for (const auto& [id, entry] : workers_) {
    v1::WorkerStatus* worker = resp.add_workers();
    worker->set_worker_id(id);
    worker->set_store_address(entry.record.store_address());
    worker->set_store_id(entry.record.store_id());
    worker->set_alive(AliveLocked(id, now));
    *worker->mutable_last_heartbeat() = ToProto(entry.last_seen);
    worker->set_capacity(entry.record.capacity());
    worker->set_leases(held[id]);
  }
  resp.set_quiescent(quiescent);
  return resp;
}

}  // namespace issuescope::coordinator

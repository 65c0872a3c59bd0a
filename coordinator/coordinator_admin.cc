// CoordinatorCore: the admin calls that change the catalog (add, remove, trigger, pause,
// resume). Status is in coordinator_status.cc, membership in coordinator_membership.cc.
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
  assignment_dirty_ = true;
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
  for (const std::string& slug : resp.removed()) {
    repos_.erase(slug);
    rates_.erase(slug);
  }
  assignment_dirty_ = true;
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
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(ExpireLocked(clock_->Now()));
  ASSIGN_OR_RETURN(std::set<std::string> slugs, SelectReposLocked(req.repo_slugs(), false));
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

absl::StatusOr<std::set<std::string>> CoordinatorCore::SelectReposLocked(
    const google::protobuf::RepeatedPtrField<std::string>& requested, bool paused_only) {
  ASSIGN_OR_RETURN(std::set<std::string> slugs, coordinator::NormalizeSlugs(requested));
  if (slugs.empty()) {
    for (const auto& [slug, rec] : repos_) {
      if (rec.moved_to().empty() && (!paused_only || rec.paused())) slugs.insert(slug);
    }
  }
  for (const std::string& slug : slugs) {
    if (repos_.count(slug) == 0) {
      return absl::NotFoundError(absl::StrCat("repository ", slug, " is not in the catalog"));
    }
  }
  return slugs;
}

absl::StatusOr<v1::PauseRepositoriesResponse> CoordinatorCore::PauseRepositories(
    const v1::PauseRepositoriesRequest& req) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(ExpireLocked(clock_->Now()));
  ASSIGN_OR_RETURN(std::set<std::string> slugs, SelectReposLocked(req.repo_slugs(), false));
  StateBatch batch;
  std::vector<std::pair<std::string, RepoRecord>> staged;
  v1::PauseRepositoriesResponse resp;
  for (const std::string& slug : slugs) {
    RepoRecord rec = repos_[slug];
    rec.set_paused(true);
    // The running crawl stops: its holder finds the lease revoked at its next heartbeat or
    // report. The crawl it was doing stays scheduled for after the resume.
    if (!rec.lease_worker().empty()) EndLeaseLocked(&rec);
    batch.PutRepo(slug, rec);
    staged.emplace_back(slug, std::move(rec));
    resp.add_paused(slug);
  }
  RETURN_IF_ERROR(state_->Commit(batch));
  for (auto& [slug, rec] : staged) {
    repos_[slug] = std::move(rec);
    rates_.erase(slug);
  }
  assignment_dirty_ = true;
  spdlog::info("paused {} repositories", resp.paused_size());
  return resp;
}

absl::StatusOr<v1::ResumeRepositoriesResponse> CoordinatorCore::ResumeRepositories(
    const v1::ResumeRepositoriesRequest& req) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(ExpireLocked(clock_->Now()));
  ASSIGN_OR_RETURN(std::set<std::string> slugs, SelectReposLocked(req.repo_slugs(), true));
  StateBatch batch;
  std::vector<std::pair<std::string, RepoRecord>> staged;
  v1::ResumeRepositoriesResponse resp;
  for (const std::string& slug : slugs) {
    RepoRecord rec = repos_[slug];
    if (!rec.paused()) continue;
    rec.set_paused(false);
    batch.PutRepo(slug, rec);
    staged.emplace_back(slug, std::move(rec));
    resp.add_resumed(slug);
  }
  RETURN_IF_ERROR(state_->Commit(batch));
  for (auto& [slug, rec] : staged) repos_[slug] = std::move(rec);
  assignment_dirty_ = true;
  spdlog::info("resumed {} repositories", resp.resumed_size());
  return resp;
}

}  // namespace issuescope::coordinator

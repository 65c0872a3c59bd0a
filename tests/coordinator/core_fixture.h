// Test fixture for CoordinatorCore: an in-memory RocksDB Env, a FakeClock, and helpers that
// build requests tersely. Used by the coordinator tests only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "coordinator/coordinator_core.h"
#include "gtest/gtest.h"
#include "rocksdb/env.h"

namespace issuescope::coordinator::testing {

class CoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.reset(rocksdb::NewMemEnv(rocksdb::Env::Default()));
    options_.env = env_.get();
    Reopen();
  }

  // Reopen closes the core (if open) and opens it again on the same in-memory files.
  void Reopen() {
    core_.reset();
    auto core = CoordinatorCore::Open("/coord", options_, &clock_);
    ASSERT_TRUE(core.ok()) << core.status();
    core_ = std::move(*core);
  }

  void Register(const std::string& worker, int capacity = 4) {
    v1::RegisterWorkerRequest req;
    req.set_worker_id(worker);
    req.set_store_address("127.0.0.1:7000");
    req.set_store_id("store-" + worker);
    req.set_capacity(capacity);
    auto resp = core_->RegisterWorker(req);
    ASSERT_TRUE(resp.ok()) << resp.status();
  }

  static v1::RepositorySpec Spec(const std::string& owner, const std::string& name,
                                 int64_t recrawl_s = 0) {
    v1::RepositorySpec spec;
    spec.mutable_repo()->set_tracker(v1::TRACKER_GITHUB);
    spec.mutable_repo()->set_owner(owner);
    spec.mutable_repo()->set_name(name);
    spec.set_recrawl_interval_s(recrawl_s);
    spec.set_include_pull_requests(true);
    return spec;
  }

  v1::AddRepositoriesResponse Add(const std::vector<v1::RepositorySpec>& specs) {
    v1::AddRepositoriesRequest req;
    for (const auto& spec : specs) *req.add_repositories() = spec;
    auto resp = core_->AddRepositories(req);
    EXPECT_TRUE(resp.ok()) << resp.status();
    return resp.ok() ? *resp : v1::AddRepositoriesResponse();
  }

  std::vector<v1::Lease> Acquire(const std::string& worker, int max = 100) {
    v1::AcquireLeasesRequest req;
    req.set_worker_id(worker);
    req.set_max_leases(max);
    auto resp = core_->AcquireLeases(req);
    EXPECT_TRUE(resp.ok()) << resp.status();
    if (!resp.ok()) return {};
    return {resp->leases().begin(), resp->leases().end()};
  }

  absl::StatusOr<v1::HeartbeatResponse> Heartbeat(const std::string& worker,
                                                  const std::vector<v1::Lease>& held) {
    v1::HeartbeatRequest req;
    req.set_worker_id(worker);
    for (const auto& lease : held) {
      v1::LeaseRef* ref = req.add_held();
      ref->set_repo(lease.repo_slug());
      ref->set_epoch(lease.epoch());
    }
    return core_->Heartbeat(req);
  }

  static v1::ReportProgressRequest Report(const std::string& worker, const v1::Lease& lease) {
    v1::ReportProgressRequest req;
    req.set_worker_id(worker);
    req.mutable_lease()->set_repo(lease.repo_slug());
    req.mutable_lease()->set_epoch(lease.epoch());
    return req;
  }

  v1::GetStatusResponse Status() {
    auto resp = core_->GetStatus(v1::GetStatusRequest());
    EXPECT_TRUE(resp.ok()) << resp.status();
    return resp.ok() ? *resp : v1::GetStatusResponse();
  }

  v1::RepositoryStatus RepoStatus(const std::string& slug) {
    v1::GetStatusResponse status = Status();
    for (const auto& repo : status.repositories()) {
      if (repo.repo_slug() == slug) return repo;
    }
    ADD_FAILURE() << "no status for " << slug;
    return v1::RepositoryStatus();
  }

  std::unique_ptr<rocksdb::Env> env_;
  FakeClock clock_;
  CoordinatorOptions options_;
  std::unique_ptr<CoordinatorCore> core_;
};

}  // namespace issuescope::coordinator::testing

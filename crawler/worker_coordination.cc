// CrawlerWorker, the coordinator side (crawler/worker.h): registration, the control loop that
// acquires leases up to the capacity, heartbeats (renewing leases, dropping revoked ones, the
// shared budgets of accounts), progress reports and releases, and reaping finished crawls.
// Lifecycle, leaving and the crawl of one lease are in worker.cc.
#include "crawler/worker.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "common/host_port.h"
#include "common/logging.h"
#include "common/repo_slug.h"
#include "common/time_util.h"
#include "grpcpp/client_context.h"

namespace issuescope::crawler {
namespace {

std::string CrawlKey(const v1::Lease& lease) {
  return absl::StrCat(lease.repo_slug(), "#", lease.epoch());
}

v1::LeaseRef RefOf(const v1::Lease& lease) {
  v1::LeaseRef ref;
  ref.set_repo(lease.repo_slug());
  ref.set_epoch(lease.epoch());
  return ref;
}

}  // namespace

bool CrawlerWorker::Register() {
  absl::Duration backoff = absl::Milliseconds(100);
  for (int attempt = 1;; ++attempt) {
    v1::RegisterWorkerRequest req;
    req.set_worker_id(options_.worker_id);
    req.set_store_address(options_.store_address);
    req.set_store_id(store_->store_id());
    req.set_capacity(options_.capacity);
    v1::RegisterWorkerResponse resp;
    grpc::ClientContext ctx;
    SetDeadline(&ctx);
    const grpc::Status s = stub_->RegisterWorker(&ctx, req, &resp);
    if (s.ok()) {
      heartbeat_interval_ms_.store(resp.heartbeat_interval_ms());
      registered_.store(true);
      spdlog::info("worker {} registered with the coordinator (store {} at {})",
                   options_.worker_id, store_->store_id(), options_.store_address);
      return true;
    }
    if (s.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
        s.error_code() == grpc::StatusCode::PERMISSION_DENIED ||
        s.error_code() == grpc::StatusCode::INVALID_ARGUMENT) {
      // Retrying cannot change the answer: the credentials or the request are wrong.
      absl::Status refused = FromGrpcStatus(s);
      refused = absl::Status(refused.code(), absl::StrCat("the coordinator refused to register "
                                                          "worker ", options_.worker_id, ": ",
                                                          refused.message()));
      spdlog::error("{}", std::string(refused.message()));
      std::lock_guard<std::mutex> lock(mu_);
      fatal_ = std::move(refused);
      return false;
    }
    if (attempt == 1 || attempt % 10 == 0) {
      spdlog::warn("RegisterWorker failed (attempt {}): {}", attempt, s.error_message());
    }
    if (!WaitFor(backoff)) return false;
    backoff = std::min(backoff * 2, options_.max_register_backoff);
  }
}

void CrawlerWorker::RunLoop() {
  if (!Register()) return;
  // One heartbeat before the first lease: it reports this worker's tokens (their budgets still
  // unknown) and brings back its share of every account other workers already spend, so its
  // first requests stay within the share instead of spending as if the budget were whole.
  if (!HeartbeatOnce()) return;
  heartbeat_thread_ = std::thread(&CrawlerWorker::HeartbeatLoop, this);
  do {
    ReapFinished();
    if (!draining_.load()) {
      AcquireAndStart();
      continue;
    }
    bool idle = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      idle = crawls_.empty();
    }
    if (!idle || leaving_.load() || drained_.load()) continue;
    const absl::Time now = absl::Now();
    if (idle_since_ == absl::InfiniteFuture()) {
      idle_since_ = now;
      spdlog::info("worker {} was drained by the coordinator (issuescope drain) and holds no "
                   "leases; serving store {} (seq {}) until the indexers have read it",
                   options_.worker_id, store_->store_id(), store_->last_seq());
    }
    const bool waited = now - idle_since_ >= options_.drain_feed_wait;
    if (removed_.load() || waited) {
      if (waited && !removed_.load()) {
        spdlog::warn("worker {}: the coordinator did not release it within {}; exiting anyway",
                     options_.worker_id, absl::FormatDuration(options_.drain_feed_wait));
      } else {
        spdlog::info("worker {}: drained and released by the coordinator: exiting",
                     options_.worker_id);
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        drained_.store(true);
      }
      wake_.notify_all();
    }
  } while (WaitFor(options_.poll_interval));
}

void CrawlerWorker::HeartbeatLoop() {
  for (;;) {
    const int64_t ms = heartbeat_interval_ms_.load();
    if (!WaitFor(ms > 0 ? absl::Milliseconds(ms) : options_.default_heartbeat_interval)) return;
    if (!HeartbeatOnce()) return;
  }
}

bool CrawlerWorker::HeartbeatOnce() {
  v1::HeartbeatRequest req;
  req.set_worker_id(options_.worker_id);
  req.set_store_last_seq(store_->last_seq());
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, crawl] : crawls_) {
      if (!crawl->finished.load()) *req.add_held() = RefOf(crawl->lease);
    }
  }
  std::map<std::pair<v1::Tracker, std::string>, int64_t> lent;
  for (const auto& [kind, pool] : options_.crawler.pools) {
    if (!pool) continue;
    for (v1::TokenBudget& b : pool->Budgets()) {
      lent.emplace(std::make_pair(kind, b.account()), pool->LentOn(b.account()));
      *req.add_budgets() = std::move(b);
    }
  }
  if (const std::shared_ptr<TokenPool>& graphql = options_.crawler.graphql_pool) {
    // GitHub's GraphQL budget of the same tokens, in points (shown in status beside REST's).
    for (v1::TokenBudget& b : graphql->Budgets()) {
      b.set_resource("graphql");
      *req.add_budgets() = std::move(b);
    }
  }
  v1::HeartbeatResponse resp;
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  const grpc::Status s = stub_->Heartbeat(&ctx, req, &resp);
  if (!s.ok()) {
    spdlog::warn("Heartbeat failed: {}", s.error_message());
    return true;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const v1::LeaseRef& ref : resp.revoked()) {
      auto it = crawls_.find(absl::StrCat(ref.repo(), "#", ref.epoch()));
      if (it == crawls_.end()) continue;
      spdlog::info("lease {} epoch {} revoked; stopping its crawl", ref.repo(), ref.epoch());
      it->second->revoked.store(true);
      it->second->crawler->Cancel();
    }
  }
  ApplyAccounts(resp, lent);
  if (resp.draining() && !draining_.exchange(true)) {
    spdlog::info("the coordinator is draining worker {}: taking no new leases, exiting once "
                 "the current ones end", options_.worker_id);
    wake_.notify_all();
  }
  if (!resp.known()) {
    if (draining_.load()) {  // removed after draining: never register again
      MarkRemoved();
      return true;
    }
    spdlog::warn("coordinator does not know worker {}; registering again", options_.worker_id);
    if (!Register()) return false;
  }
  return true;
}

void CrawlerWorker::AcquireAndStart() {
  int free_slots = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || draining_.load()) return;
    free_slots = options_.capacity - static_cast<int>(crawls_.size());
  }
  if (free_slots <= 0) return;
  v1::AcquireLeasesRequest req;
  req.set_worker_id(options_.worker_id);
  req.set_max_leases(free_slots);
  v1::AcquireLeasesResponse resp;
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  const grpc::Status s = stub_->AcquireLeases(&ctx, req, &resp);
  if (!s.ok()) {
    spdlog::warn("AcquireLeases failed: {}", s.error_message());
    return;
  }
  for (v1::Lease lease : resp.leases()) {
    if (lease.repo_slug().empty()) lease.set_repo_slug(RepoSlug(lease.repo()));
    std::unique_lock<std::mutex> lock(mu_);
    if (stopping_ || draining_.load() || crawls_.count(CrawlKey(lease)) > 0) {
      lock.unlock();
      Release(lease);
      continue;
    }
    auto crawl = std::make_unique<ActiveCrawl>();
    crawl->lease = lease;
    crawl->crawler = std::make_unique<RepoCrawler>(transport_, store_, clock_, options_.crawler);
    ActiveCrawl* raw = crawl.get();
    crawls_.emplace(CrawlKey(lease), std::move(crawl));
    spdlog::info("crawling {} (epoch {}, {})", lease.repo_slug(), lease.epoch(),
                 v1::CrawlMode_Name(lease.mode()));
    raw->thread = std::thread(&CrawlerWorker::RunCrawl, this, raw);
  }
}

absl::Status CrawlerWorker::Report(const v1::Lease& lease, const CrawlProgress& p,
                                   const std::string& error) {
  v1::ReportProgressRequest req;
  req.set_worker_id(options_.worker_id);
  *req.mutable_lease() = RefOf(lease);
  *req.mutable_counters() = p.counters;
  if (p.cursor) *req.mutable_cursor() = *p.cursor;
  req.set_issues_estimated(p.issues_estimated);
  req.set_rate_remaining(p.rate_remaining);
  if (p.rate_reset != absl::InfinitePast()) *req.mutable_rate_reset() = ToProto(p.rate_reset);
  req.set_done(p.done && error.empty());
  req.set_error(error);
  // The coordinator re-catalogs a moved repository when told; tell it once, when the crawl
  // under the old name is complete.
  if (p.done) req.set_moved_to(p.moved_to);
  req.set_store_last_seq(store_->last_seq());
  v1::ReportProgressResponse resp;
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  return FromGrpcStatus(stub_->ReportProgress(&ctx, req, &resp));
}

void CrawlerWorker::Release(const v1::Lease& lease) {
  v1::ReleaseLeaseRequest req;
  req.set_worker_id(options_.worker_id);
  *req.mutable_lease() = RefOf(lease);
  req.set_store_last_seq(store_->last_seq());
  v1::ReleaseLeaseResponse resp;
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  const grpc::Status s = stub_->ReleaseLease(&ctx, req, &resp);
  if (!s.ok()) spdlog::warn("ReleaseLease {} failed: {}", lease.repo_slug(), s.error_message());
}

void CrawlerWorker::ApplyAccounts(
    const v1::HeartbeatResponse& resp,
    const std::map<std::pair<v1::Tracker, std::string>, int64_t>& lent) {
  for (const v1::AccountBudget& account : resp.accounts()) {
    // Every worker reporting the account gets an equal share of what is left.
    const int sharers = std::max(1, account.workers_size());
    const absl::Time reset =
        account.has_reset() ? FromProto(account.reset()) : absl::InfinitePast();
    for (const auto& [kind, pool] : options_.crawler.pools) {
      if (!pool) continue;
      if (account.tracker() != v1::TRACKER_UNSPECIFIED && account.tracker() != kind) continue;
      int64_t allowance = -1;
      if (account.remaining() >= 0) {
        allowance = account.remaining() / sharers;
        // Requests lent since the heartbeat's figures were taken come off the share.
        auto before = lent.find({kind, account.account()});
        if (before != lent.end()) {
          allowance -= pool->LentOn(account.account()) - before->second;
        }
        allowance = std::max<int64_t>(0, allowance);
      }
      pool->SetSharedAllowance(account.account(), allowance, reset, sharers);
    }
  }
}

void CrawlerWorker::ReapFinished() {
  std::vector<std::unique_ptr<ActiveCrawl>> done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = crawls_.begin(); it != crawls_.end();) {
      if (it->second->finished.load()) {
        done.push_back(std::move(it->second));
        it = crawls_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& crawl : done) {
    if (crawl->thread.joinable()) crawl->thread.join();
  }
}

absl::StatusOr<std::string> StoreAddressToAdvertise(absl::string_view listen, int port,
                                                    absl::string_view advertise) {
  if (!advertise.empty()) {
    absl::StatusOr<HostPort> split = SplitHostPort(advertise);
    if (!split.ok() || IsWildcardHost(split->host) || split->port < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--advertise-address '", advertise,
          "' must be HOST:PORT (or [IPV6]:PORT) with a host others can dial and a port 1..65535"));
    }
    return std::string(advertise);
  }
  if (absl::StartsWith(listen, "unix:")) return std::string(listen);
  absl::StatusOr<HostPort> split = SplitHostPort(listen);
  if (!split.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--listen: ", split.status().message()));
  }
  if (IsWildcardHost(split->host)) return absl::StrCat(":", port);
  return JoinHostPort(split->host, port);
}

}  // namespace issuescope::crawler

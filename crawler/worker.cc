#include "crawler/worker.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "token_binding.h"
#include "grpcpp/client_context.h"

namespace issuescope::crawler {
namespace {

// LocalHostName is this host's name ("" when unknown): anonymous requests are limited per
// client address, so it names their shared budget (AnonymousAccount).
std::string LocalHostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return std::string();
  return std::string(name);
}

bool ValidWorkerId(const std::string& id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    if (!(absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
          c == '-')) {
      return false;
    }
  }
  return true;
}

}  // namespace

CrawlerWorker::CrawlerWorker(WorkerOptions options,
                             std::shared_ptr<grpc::ChannelInterface> coordinator,
                             HttpTransport* transport, IssueStore* store, Clock* clock)
    : options_(std::move(options)),
      stub_(v1::Coordinator::NewStub(std::move(coordinator))),
      transport_(transport),
      store_(store),
      clock_(clock) {
  // A tracker without its own token uses the common one.
  for (v1::Tracker kind : {v1::TRACKER_GITHUB, v1::TRACKER_GITLAB, v1::TRACKER_GITEE}) {
    // Every crawl of a tracker takes its tokens from one pool: requests on a token are serial
    // across crawls, and the pool's budgets go into the heartbeats.
    std::shared_ptr<TokenPool>& pool = options_.crawler.pools[kind];
    if (!pool) {
      auto token = options_.crawler.tokens.find(kind);
      const std::string& secret =
          token != options_.crawler.tokens.end() ? token->second : options_.crawler.token;
      TokenPoolOptions pool_options;
      pool_options.secondary_backoff = options_.crawler.max_backoff;
      pool_options.max_secondary_backoff = std::max(options_.crawler.max_backoff, absl::Minutes(15));
      pool = std::make_shared<TokenPool>(
          kind,
          std::vector<PoolToken>{{secret.empty() ? AnonymousAccount(LocalHostName()) : "default",
                                  secret}},
          clock_, pool_options);
    }
  }
}

CrawlerWorker::~CrawlerWorker() { Stop(); }

absl::Status CrawlerWorker::Start() {
  if (!ValidWorkerId(options_.worker_id)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "worker id '", options_.worker_id.substr(0, 80), "' must match [A-Za-z0-9._-]{1,64}"));
  }
  if (options_.capacity < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("capacity must be at least 1, got ", options_.capacity));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (started_) return absl::FailedPreconditionError("worker already started");
  started_ = true;
  loop_thread_ = std::thread(&CrawlerWorker::RunLoop, this);
  return absl::OkStatus();
}

void CrawlerWorker::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!started_ || stopping_) {
      stopping_ = true;
      return;
    }
    stopping_ = true;
    for (auto& [key, crawl] : crawls_) crawl->crawler->Cancel();
  }
  wake_.notify_all();
  if (loop_thread_.joinable()) loop_thread_.join();
  if (heartbeat_thread_.joinable()) heartbeat_thread_.join();
  std::map<std::string, std::unique_ptr<ActiveCrawl>> crawls;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [key, crawl] : crawls_) crawl->crawler->Cancel();
    crawls.swap(crawls_);
  }
  for (auto& [key, crawl] : crawls) {
    if (crawl->thread.joinable()) crawl->thread.join();
  }
  spdlog::info("worker {} stopped", options_.worker_id);
}

int CrawlerWorker::Leave() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!started_ || stopping_) return 0;
  }
  leaving_.store(true);
  draining_.store(true);
  bool left = false;  // the coordinator accepted the LeaveWorker call
  if (registered_.load()) {
    v1::DrainWorkerRequest req;
    req.set_worker_id(options_.worker_id);
    v1::DrainWorkerResponse resp;
    grpc::ClientContext ctx;
    SetDeadline(&ctx);
    const grpc::Status s = stub_->LeaveWorker(&ctx, req, &resp);
    if (s.ok() && resp.removed()) MarkRemoved();
    left = s.ok();
    if (s.ok()) {
      spdlog::info("worker {} left the coordinator ({}); finishing its crawls for up to {}",
                   options_.worker_id,
                   resp.removed() ? "removed at once"
                                  : absl::StrCat(resp.leases_held(), " leases held"),
                   absl::FormatDuration(options_.drain_timeout));
    } else {
      spdlog::warn("LeaveWorker failed: {}; leaving anyway (the coordinator declares the worker "
                   "dead after its timeout)", s.error_message());
    }
  }
  int cancelled = 0;
  {
    std::unique_lock<std::mutex> lock(mu_);
    const bool finished =
        clock_->AwaitWithDeadline(lock, wake_, clock_->Now() + options_.drain_timeout,
                                  [this] { return AllCrawlsFinishedLocked(); });
    if (!finished) {
      for (auto& [key, crawl] : crawls_) {
        if (crawl->finished.load()) continue;
        crawl->crawler->Cancel();
        ++cancelled;
      }
      spdlog::warn("drain timeout ({}) passed: cancelling {} crawls; their leases are released "
                   "and their repositories continue from the last reported cursor",
                   absl::FormatDuration(options_.drain_timeout), cancelled);
      // Their releases report the store's final seq; wait for the threads to send them.
      clock_->AwaitWithDeadline(lock, wake_, clock_->Now() + options_.rpc_timeout,
                                [this] { return AllCrawlsFinishedLocked(); });
    }
    // Serve the store until the coordinator removes this worker: it waits for the indexers to
    // read the store's feed (heartbeats carry its seq and bring the answer). A coordinator that
    // could not be told does not answer either: it declares the worker dead after its timeout
    // and treats the store as lost, so there is nothing to wait for.
    if (left && !removed_.load()) {
      spdlog::info("worker {}: crawls ended; serving store {} (seq {}) until the indexers have "
                   "read it (at most {})", options_.worker_id, store_->store_id(),
                   store_->last_seq(), absl::FormatDuration(options_.drain_feed_wait));
      if (!clock_->AwaitWithDeadline(lock, wake_, clock_->Now() + options_.drain_feed_wait,
                                     [this] { return removed_.load() || stopping_; })) {
        spdlog::warn("worker {}: the coordinator did not release it within {}; leaving anyway "
                     "(it will crawl this store's repositories again elsewhere)",
                     options_.worker_id, absl::FormatDuration(options_.drain_feed_wait));
      }
    }
  }
  Stop();
  return cancelled;
}

void CrawlerWorker::MarkRemoved() {
  std::lock_guard<std::mutex> lock(mu_);
  removed_.store(true);
  wake_.notify_all();
}

bool CrawlerWorker::AllCrawlsFinishedLocked() const {
  for (const auto& [key, crawl] : crawls_) {
    if (!crawl->finished.load()) return false;
  }
  return true;
}

absl::Status CrawlerWorker::fatal_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fatal_;
}

int CrawlerWorker::active_crawls() const {
  std::lock_guard<std::mutex> lock(mu_);
  int n = 0;
  for (const auto& [key, crawl] : crawls_) n += crawl->finished.load() ? 0 : 1;
  return n;
}

bool CrawlerWorker::AwaitDrained(absl::Duration real_timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return wake_.wait_for(lock, absl::ToChronoMilliseconds(real_timeout),
                        [this] { return drained_.load(); });
}

bool CrawlerWorker::WaitFor(absl::Duration d) {
  std::unique_lock<std::mutex> lock(mu_);
  wake_.wait_for(lock, absl::ToChronoMilliseconds(d), [this] { return stopping_; });
  return !stopping_;
}

void CrawlerWorker::SetDeadline(grpc::ClientContext* ctx) const {
  ctx->set_deadline(std::chrono::system_clock::now() +
                    absl::ToChronoMilliseconds(options_.rpc_timeout));
}

void CrawlerWorker::RunCrawl(ActiveCrawl* crawl) {
  const v1::Lease& lease = crawl->lease;
  CrawlObserver* observer = options_.observer;
  if (observer != nullptr) observer->Started(lease);
  CrawlProgress last;
  bool fenced = false;
  auto on_progress = [&](const CrawlProgress& p) -> absl::Status {
    last = p;
    if (observer != nullptr) observer->Progress(lease, p);
    if (crawl->revoked.load()) {
      return absl::CancelledError(absl::StrCat("lease of ", lease.repo_slug(), " revoked"));
    }
    absl::Status s = Report(lease, p, "");
    // The final report must arrive: retry it briefly while the coordinator is unreachable.
    for (int i = 0; p.done && s.code() == absl::StatusCode::kUnavailable && i < 5; ++i) {
      if (!WaitFor(absl::Milliseconds(200 << i))) break;
      s = Report(lease, p, "");
    }
    if (s.code() == absl::StatusCode::kFailedPrecondition) {
      fenced = true;
      return s;
    }
    if (!s.ok()) spdlog::warn("ReportProgress for {} failed: {}", lease.repo_slug(), s.ToString());
    return absl::OkStatus();
  };
  v1::CrawlCounters counters;
  // A lease's API comes from whoever added the repository: the worker's tokens go only to the
  // APIs it was configured for (crawler/token_binding.h).
  absl::Status bound = CheckRepositoryTokenBinding(options_.crawler, lease.repo());
  absl::StatusOr<CrawlProgress> result =
      bound.ok() ? crawl->crawler->Crawl(lease, on_progress, &counters)
                 : absl::StatusOr<CrawlProgress>(bound);
  CrawlOutcome outcome = CrawlOutcome::kDone;
  std::string error;
  if (result.ok() && result->paused) {
    outcome = CrawlOutcome::kPaused;
    // The page budget ran out: releasing the lease without done=true leaves the crawl scheduled,
    // so the coordinator hands it out again and it continues from the reported cursor.
    spdlog::info("crawl of {} paused after {} requests ({} issues, {} comments stored); the next "
                 "lease continues", lease.repo_slug(), result->counters.requests(),
                 result->counters.issues_stored(), result->counters.comments_stored());
  } else if (result.ok()) {
    completed_.fetch_add(1);
    spdlog::info("crawl of {} done: {} requests, {} issues and {} comments stored",
                 lease.repo_slug(), result->counters.requests(), result->counters.issues_stored(),
                 result->counters.comments_stored());
  } else if (fenced || result.status().code() == absl::StatusCode::kFailedPrecondition) {
    outcome = CrawlOutcome::kFenced;
    error = std::string(result.status().message());
    spdlog::warn("crawl of {} fenced: {}", lease.repo_slug(), result.status().ToString());
  } else if (crawl->revoked.load() || result.status().code() == absl::StatusCode::kCancelled) {
    outcome = CrawlOutcome::kStopped;
    error = std::string(result.status().message());
    spdlog::info("crawl of {} stopped: {}", lease.repo_slug(), result.status().ToString());
  } else {
    outcome = CrawlOutcome::kFailed;
    error = std::string(result.status().message());
    spdlog::warn("crawl of {} failed after {} requests: {}", lease.repo_slug(),
                 counters.requests(), result.status().ToString());
    last.counters = counters;  // every request made, also those after the last report
    const absl::Status s = Report(lease, last, result.status().ToString());
    if (!s.ok()) spdlog::warn("reporting the failure of {}: {}", lease.repo_slug(), s.ToString());
  }
  if (!crawl->revoked.load()) Release(lease);
  if (observer != nullptr) {
    observer->Ended(lease, outcome, result.ok() ? result->counters : counters, error);
  }
  {
    // Under mu_, so a waiter that has just checked AllCrawlsFinishedLocked cannot miss it.
    std::lock_guard<std::mutex> lock(mu_);
    crawl->finished.store(true);
  }
  wake_.notify_all();
}

}  // namespace issuescope::crawler

// CrawlerWorker is the crawler process's control loop: it registers with the coordinator,
// heartbeats (renewing its leases and dropping revoked ones), acquires leases up to its
// capacity, crawls each lease with a RepoCrawler on its own thread, reports progress after every
// page (cumulative counters, the new cursor, the rate budget; done=true at the end, the error
// text on failure) and releases the lease at the end. A crawl paused by its page budget
// (CrawlerOptions.max_pages_per_lease) reports its cursor without done, so the coordinator
// grants the repository again and the next lease continues. A FAILED_PRECONDITION from ReportProgress
// (stale epoch) aborts that crawl at once.
//
// Leaving and draining: Leave (the process's SIGTERM/SIGINT) calls the coordinator's
// LeaveWorker, takes no new leases, lets running crawls finish for up to `drain_timeout`, then
// cancels the rest and releases their leases (their per-page progress is already reported), and
// stops. A heartbeat answering draining=true (an operator ran `issuescope drain`) also stops the
// taking of leases; once the worker holds none, drained() turns true and the process exits. A
// draining worker never registers again, even when the coordinator no longer knows it.
// Either way, once its crawls have ended the worker keeps heartbeating and serving its store
// until the coordinator has removed it (a heartbeat answering known=false), which it does once
// the indexers have read the store's feed up to the seq the worker reported (every Heartbeat,
// ReportProgress and ReleaseLease carries store_last_seq; coordinator_core.h, "Drained feeds"),
// or for at most `drain_feed_wait`.
//
// Shared budgets: each heartbeat answer lists the accounts this worker's tokens belong to with
// their shared remaining budget and the workers reporting them; the worker caps its TokenPools
// at remaining / workers per account until the account's reset (TokenPool::SetSharedAllowance).
//
// Ownership: borrows the transport, store and clock (they must outlive the worker); shares the
// coordinator channel. Thread-safety: Start and Stop are called from one thread; everything else
// runs on the worker's own threads. The pacing of polls, heartbeats and registration retries
// is real time (the coordinator's lease timeouts are); the crawls and the waits of Leave (the
// drain timeout, the releases after it, the wait for the indexers) are on the injected Clock
// (Clock::AwaitWithDeadline), so a test moves them with a FakeClock.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <utility>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "crawler/http_transport.h"
#include "crawler/issue_store.h"
#include "crawler/repo_crawler.h"
#include "grpcpp/channel.h"
#include "issuescope/v1/coordinator.grpc.pb.h"

namespace issuescope::crawler {

// CrawlOutcome says how a worker's crawl of one lease ended.
enum class CrawlOutcome {
  kDone,     // done=true reported (also a repository found moved or gone)
  kPaused,   // the page budget ran out; the coordinator grants the repository again
  kFailed,   // the crawl failed; the error was reported and the coordinator retries later
  kFenced,   // the lease's epoch was stale: another lease owns the repository now
  kStopped,  // cancelled: revoked by the coordinator, or the worker stopped or left
};

// CrawlObserver receives the events of a worker's crawls (the CLI's progress board is one). Its
// methods are called on the crawl's own thread, so they must be thread-safe and quick, and must
// not call back into the worker.
class CrawlObserver {
 public:
  virtual ~CrawlObserver() = default;
  // Started: the worker took `lease` and starts crawling it.
  virtual void Started(const v1::Lease& lease) { (void)lease; }
  // Progress: after every page, before the worker reports it to the coordinator.
  virtual void Progress(const v1::Lease& lease, const CrawlProgress& progress) {
    (void)lease;
    (void)progress;
  }
  // Ended: the crawl ended; `counters` count every request it made, `error` is the failure's or
  // cancellation's message (empty for kDone and kPaused).
  virtual void Ended(const v1::Lease& lease, CrawlOutcome outcome,
                     const v1::CrawlCounters& counters, absl::string_view error) {
    (void)lease;
    (void)outcome;
    (void)counters;
    (void)error;
  }
};

// WorkerOptions configure a CrawlerWorker. Every field documents its Default.
struct WorkerOptions {
  // Stable worker id, [A-Za-z0-9._-]{1,64}. Default: "worker-0".
  std::string worker_id = "worker-0";
  // host:port of the coordinator (informational; the channel is passed in). Default: empty.
  std::string coordinator_address;
  // host:port where this worker serves its IssueStore, as advertised to the coordinator
  // (StoreAddressToAdvertise); ":PORT" lets the coordinator fill in the host the worker calls
  // from. Default: empty.
  std::string store_address;
  // Leases crawled at once. Default: 2.
  int capacity = 2;
  // Options of every RepoCrawler (tokens and API URLs per tracker, page size, retries, page
  // budget). The worker gives each tracker without a TokenPool in `crawler.pools` a one-token
  // pool (its token from `tokens`, else `token`); heartbeats report every pool's budgets.
  // Default: CrawlerOptions{}.
  CrawlerOptions crawler;
  // How often to ask for leases when there is free capacity. Default: 500 ms.
  absl::Duration poll_interval = absl::Milliseconds(500);
  // Heartbeat interval when the coordinator names none. Default: 2 s.
  absl::Duration default_heartbeat_interval = absl::Seconds(2);
  // Deadline of each coordinator RPC. Default: 10 s.
  absl::Duration rpc_timeout = absl::Seconds(10);
  // Longest pause between RegisterWorker attempts while the coordinator is unreachable.
  // Default: 5 s.
  absl::Duration max_register_backoff = absl::Seconds(5);
  // How long Leave lets running crawls finish before cancelling them. Default: 30 s.
  absl::Duration drain_timeout = absl::Seconds(30);
  // How long a leaving or drained worker, its crawls ended, keeps serving its store while the
  // coordinator waits for the indexers to read the store's feed. Default: 10 min (the
  // coordinator's own bound, --drain-feed-timeout-ms, defaults to the same).
  absl::Duration drain_feed_wait = absl::Minutes(10);
  // Receives every crawl's events; not owned, must outlive the worker. Default: none.
  CrawlObserver* observer = nullptr;
};

// StoreAddressToAdvertise returns the store address a worker registers with (what the indexer
// dials): `advertise` (--advertise-address) when given, which must be HOST:PORT with a real
// host and port; else the host of `listen` with the bound `port` ("10.0.0.5:50052",
// "[fd00::5]:50052"); for a wildcard listen host ("0.0.0.0", "[::]", "") just ":PORT", which the
// coordinator completes with the host the worker connects from. A "unix:" listen address is
// advertised as it is. INVALID_ARGUMENT naming --advertise-address or --listen otherwise.
absl::StatusOr<std::string> StoreAddressToAdvertise(absl::string_view listen, int port,
                                                    absl::string_view advertise);

// CrawlerWorker: see the file comment.
class CrawlerWorker {
 public:
  CrawlerWorker(WorkerOptions options, std::shared_ptr<grpc::ChannelInterface> coordinator,
                HttpTransport* transport, IssueStore* store, Clock* clock);
  // ~CrawlerWorker stops the worker if it is running.
  ~CrawlerWorker();
  CrawlerWorker(const CrawlerWorker&) = delete;
  CrawlerWorker& operator=(const CrawlerWorker&) = delete;

  // Start launches the control loop (which registers, retrying until the coordinator answers)
  // and returns at once. INVALID_ARGUMENT for a bad worker id or capacity.
  absl::Status Start();
  // Stop stops at once: stops taking leases, cancels running crawls, releases their leases,
  // joins every thread. Idempotent.
  void Stop();
  // Leave leaves gracefully: LeaveWorker, no new leases, running crawls finish within
  // drain_timeout (then they are cancelled and released), the store is served until the
  // coordinator removes the worker (at most drain_feed_wait), then Stop. Returns the number of
  // crawls that had to be cancelled.
  int Leave();

  // draining reports whether the worker takes no new leases (Leave, or the coordinator said
  // draining).
  bool draining() const { return draining_.load(); }
  // drained reports that the coordinator drained this worker, it holds no lease any more and
  // the coordinator has removed it (or drain_feed_wait passed): the process should exit (Stop,
  // then exit 0).
  bool drained() const { return drained_.load(); }
  // AwaitDrained blocks until drained() or `real_timeout` (real time) passed; returns drained().
  bool AwaitDrained(absl::Duration real_timeout);

  // fatal_error is OK while the worker runs or retries; it holds the coordinator's refusal when
  // RegisterWorker was refused for good (UNAUTHENTICATED, PERMISSION_DENIED: wrong cluster
  // token, a client certificate that names another worker; INVALID_ARGUMENT: a request the
  // coordinator rejects). The control loop has then ended; the process should Stop and exit
  // non-zero with this message.
  absl::Status fatal_error() const;

  // registered reports whether RegisterWorker has succeeded at least once.
  bool registered() const { return registered_.load(); }
  // completed_crawls counts crawls that finished with done=true reported (not paused ones).
  int64_t completed_crawls() const { return completed_.load(); }
  // active_crawls counts crawls running now.
  int active_crawls() const;

 private:
  // ActiveCrawl is one lease being crawled.
  struct ActiveCrawl {
    v1::Lease lease;
    std::unique_ptr<RepoCrawler> crawler;
    std::thread thread;
    std::atomic<bool> revoked{false};
    std::atomic<bool> finished{false};
  };

  void RunLoop();
  void HeartbeatLoop();
  // HeartbeatOnce sends one heartbeat and applies its answer (revocations, account shares,
  // draining, re-registering when unknown); false when the worker stops meanwhile.
  bool HeartbeatOnce();
  // MarkRemoved records that the coordinator removed this draining worker and wakes waiters.
  void MarkRemoved();
  // Register calls RegisterWorker until it succeeds or the worker stops; false when stopping.
  bool Register();
  void AcquireAndStart();
  void RunCrawl(ActiveCrawl* crawl);
  absl::Status Report(const v1::Lease& lease, const CrawlProgress& progress,
                      const std::string& error);
  void Release(const v1::Lease& lease);
  void ReapFinished();
  // ApplyAccounts caps the token pools by the shared budgets of a heartbeat answer; `lent` is
  // LentOn per (tracker, account) when the heartbeat was built.
  void ApplyAccounts(const v1::HeartbeatResponse& resp,
                     const std::map<std::pair<v1::Tracker, std::string>, int64_t>& lent);
  // AllCrawlsFinished: every crawl in crawls_ has ended. Requires mu_.
  bool AllCrawlsFinishedLocked() const;
  // WaitFor waits up to `d` or until Stop; returns false when stopping.
  bool WaitFor(absl::Duration d);
  void SetDeadline(grpc::ClientContext* ctx) const;

  WorkerOptions options_;
  std::unique_ptr<v1::Coordinator::Stub> stub_;
  HttpTransport* transport_;
  IssueStore* store_;
  Clock* clock_;

  std::atomic<bool> registered_{false};
  std::atomic<int64_t> completed_{0};
  std::atomic<int64_t> heartbeat_interval_ms_{0};
  std::atomic<bool> draining_{false};
  std::atomic<bool> drained_{false};
  std::atomic<bool> leaving_{false};  // Leave was called (else draining came from the coordinator)
  // The coordinator removed this draining worker (a heartbeat answered known=false, or
  // LeaveWorker answered removed). Set under mu_, so waits on wake_ see it.
  std::atomic<bool> removed_{false};
  absl::Time idle_since_ = absl::InfiniteFuture();  // drained and holding no crawl (RunLoop only)

  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mu_
  absl::Status fatal_;     // guarded by mu_
  bool started_ = false;   // guarded by mu_
  std::map<std::string, std::unique_ptr<ActiveCrawl>> crawls_;  // guarded by mu_; by slug

  std::thread loop_thread_;
  std::thread heartbeat_thread_;
};

}  // namespace issuescope::crawler

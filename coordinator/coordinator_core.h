// CoordinatorCore: the coordinator's logic, free of gRPC (it speaks the issuescope.v1 proto
// messages only). It holds the catalog of repositories, worker membership, leases with fencing
// epochs, crawl cursors and progress, all durable in its own RocksDB (see coordinator_state.h).
// The gRPC service (coordinator_service.h) and the CLI's one-machine mode (worker id "local")
// both drive it directly.
//
// Semantics, in short:
//  - A repository needs crawling when a crawl is scheduled (added, triggered), when its
//    recrawl interval has passed since the last completed crawl (its full recrawl interval since
//    the last completed FULL crawl: then the crawl is FULL), or when its last crawl failed and
//    `retry_failed_after` has passed. A paused repository never needs crawling.
//  - Every repository (not GONE, not paused) is assigned to one live, non-draining worker by
//    weighted rendezvous with bounded, size-aware loads (assignment.h): weight = capacity, size
//    = issues_estimated. The assignment starts from the previous one (after a restart: from the
//    last lease holder), so it is sticky. AcquireLeases hands a worker only repositories
//    assigned to it, and only while the shared budgets of its accounts allow (account_budgets.h).
//  - Draining (LeaveWorker / DrainWorker): the worker gets no new leases and owns nothing; its
//    leases run on until it finishes or releases them (or they expire); once it holds none its
//    record is deleted. Re-registering ends draining. A removed drained worker that still
//    heartbeats gets known=false with draining=true (memory only), so it exits instead of
//    registering again. Moving a leaving worker's repositories schedules no crawl: idle ones
//    keep their cursors and stay idle; one whose lease it released is granted to the new owner
//    in its scheduled mode (FULL when the new owner's store lacks the cursor's data).
//  - Each grant increments the repository's epoch, durably, before it is returned. Epochs are
//    never reused, even across removal and re-adding of a repository.
//  - A cursor belongs to the store it was reported for: ReportProgress records the reporting
//    worker's store_id with it. An INCREMENTAL grant to a worker whose store_id differs (the
//    repository failed over, or its worker re-registered with a wiped store) becomes FULL, so
//    every store that crawls a repository holds all of it.
//  - A lease ends when it expires (not renewed by Heartbeat/ReportProgress for `lease_ttl`),
//    when its holder is declared dead (silent for `worker_timeout`), on ReleaseLease, on a
//    final ReportProgress (done / error / moved_to), or when the repository is removed.
//    Expiry is evaluated lazily at the start of every call; Tick() does the same on demand.
//  - A worker is alive while its last RegisterWorker/Heartbeat/AcquireLeases/ReportProgress is
//    younger than `worker_timeout`. A worker silent for longer is dead: its leases end and its
//    Heartbeat answers known=false until it registers again.
//  - Home grace: a dead (not draining) worker stays, for `home_grace` after it was declared
//    dead, the home of the repositories whose cursor its store set. They are granted to no
//    other worker meanwhile (a move costs a full crawl: the new store lacks their data and
//    ETags), so a worker that comes back and registers again with the same store id resumes
//    them incrementally. After the grace they move as today; a crawl is thus delayed by at most
//    `home_grace`. DrainWorker on a dead worker ends its grace at once. The end of the grace is
//    durable (WorkerRecord.home_until); after a restart a worker not known to be dead gets a
//    grace from the reopen.
//  - Lost stores: when a worker stays dead past its grace (not drained) and no live or away
//    worker holds its store, every idle repository whose cursor that store set is scheduled
//    for a crawl at once, not at its next re-crawl: what the store had not yet fed to the
//    indexer exists nowhere else. Granted to another store the crawl is FULL (as every grant to
//    a store that did not set the cursor); the old worker returning with its store resumes
//    incrementally. Repositories already due, failed, paused or leased keep their schedule.
//  - Drained feeds: workers report their store's newest feed seq (Heartbeat, ReportProgress,
//    ReleaseLease: store_last_seq) and indexers report how far they have durably indexed each
//    store (ReportIndexProgress). A draining worker that holds no lease is removed — its
//    repositories only move, no crawl — once every active indexer (one that reported within
//    `drain_feed_timeout`: an indexer restarting or paused still counts) has indexed its store
//    up to the worker's last reported seq; meanwhile it stays a member (Heartbeat: known,
//    draining) and keeps serving its store. With no active indexer it is removed at once
//    (nobody follows the feeds). When the indexers have not caught
//    up within `drain_feed_timeout` of its last lease ending, or the worker dies first (its store
//    is gone with its process), it is removed and its store is abandoned: every idle repository
//    whose cursor that store set is scheduled as for a lost store (FULL on another store), since
//    what the indexers had not read exists nowhere else. Index progress is memory only (indexers
//    report it every poll).
//  - Phases in GetStatus: GONE (the tracker moved it: ReportProgress.moved_to), CRAWLING
//    (leased), PAUSED, FAILED (last crawl failed, retry not yet due), PENDING (needs crawling), IDLE.
//    `quiescent` is true when no repository is PENDING or CRAWLING: FAILED, IDLE and GONE are
//    quiescent (a failure waiting for its retry is not work in progress; once the retry is due
//    the repository is PENDING again).
//  - Restart: catalog, epochs, cursors and progress are reloaded. Leases held at the crash stay
//    valid: each gets at least `lease_ttl` from the reopen (nobody could be granted the
//    repository meanwhile), and their holders count as alive for `worker_timeout` from the
//    reopen, so workers keep crawling and reconnect; the other workers must register again and
//    are homes of their repositories for `home_grace` from the reopen (unless their grace had
//    already been set before the crash). Lease renewals and heartbeats are kept in memory only
//    (these windows make persisting them unnecessary).
//
// Thread-safety: every public method is thread-safe (one mutex; RocksDB writes happen under it,
// so the order of durable writes is the order of calls).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "coordinator/account_budgets.h"
#include "coordinator/coordinator_state.h"
#include "issuescope/v1/coordinator.pb.h"
#include "rocksdb/env.h"

namespace issuescope::coordinator {

// CoordinatorOptions configures a CoordinatorCore.
struct CoordinatorOptions {
  // How often workers must heartbeat (told to them by RegisterWorker). Default: 2 s.
  absl::Duration heartbeat_interval = absl::Seconds(2);
  // A lease not renewed for this long expires. Default: 15 s.
  absl::Duration lease_ttl = absl::Seconds(15);
  // A worker silent for this long is dead and loses its leases. Default: 10 s.
  absl::Duration worker_timeout = absl::Seconds(10);
  // How long a worker declared dead stays the home of the repositories its store holds (whose
  // cursor it set): they are granted to no other worker meanwhile, so the worker, registering
  // again with the same store id, resumes them incrementally; then they move to the others.
  // Bounds the delay this adds to their crawls. Zero turns the grace off (they move at once);
  // must be non-negative and finite. Default (unset): 3 × worker_timeout.
  std::optional<absl::Duration> home_grace;
  // A failed crawl is retried after this long. Default: 30 s.
  absl::Duration retry_failed_after = absl::Seconds(30);
  // Requests of an account's shared rate budget kept per running crawl: a lease is granted
  // only while the account has remaining >= account_reserve * (its running leases + 1).
  // 0 disables holding back. Default: 100.
  int64_t account_reserve = 100;
  // How far above its weighted share of the total load a worker's assigned load may go.
  // Default: 0.05.
  double load_tolerance = 0.05;
  // RocksDB Env of the state database; tests pass rocksdb::NewMemEnv. Default: null (the
  // default Env, real files). Not owned; must outlive the core.
  rocksdb::Env* env = nullptr;
  // Whether every durable write also fsyncs the WAL (survives power loss, not only a process
  // crash). Default: true.
  bool sync_writes = true;
  // How long a drained worker that holds no lease waits for the indexers to read its store's
  // feed before its store is abandoned and its repositories crawled again elsewhere (see
  // "Drained feeds"). Must be positive. Default: 10 min.
  absl::Duration drain_feed_timeout = absl::Minutes(10);
};

// CoordinatorCounters are monotonic counters since the core was opened (for metrics).
struct CoordinatorCounters {
  // Leases that ended because they were not renewed in time or their holder died.
  int64_t lease_expirations = 0;
  // Leases granted (each with a new epoch).
  int64_t epochs_granted = 0;
  // Durable writes (each one synced RocksDB WriteBatch).
  uint64_t state_commits = 0;
};

// CoordinatorCore is the coordinator's state machine; see the file comment.
class CoordinatorCore {
 public:
  // Open opens (or creates) the state at `path` and reloads it. `clock` is not owned and must
  // outlive the core. INVALID_ARGUMENT for nonsensical options (non-positive durations, a
  // negative or infinite home_grace).
  static absl::StatusOr<std::unique_ptr<CoordinatorCore>> Open(const std::string& path,
                                                               CoordinatorOptions options,
                                                               Clock* clock);
  CoordinatorCore(const CoordinatorCore&) = delete;
  CoordinatorCore& operator=(const CoordinatorCore&) = delete;

  // RegisterWorker upserts a worker (id, store address and id, capacity) and marks it alive.
  absl::StatusOr<v1::RegisterWorkerResponse> RegisterWorker(const v1::RegisterWorkerRequest& req);
  // Heartbeat marks the worker alive and renews the held leases that are still current; the
  // others come back as `revoked`. An unknown or dead worker gets known=false and every held
  // lease revoked.
  absl::StatusOr<v1::HeartbeatResponse> Heartbeat(const v1::HeartbeatRequest& req);
  // AcquireLeases grants up to `max_leases` repositories (0: the worker's free capacity) that
  // need crawling and whose rendezvous owner among live workers is this worker. NOT_FOUND for an
  // unknown worker, FAILED_PRECONDITION for a dead one (re-register).
  absl::StatusOr<v1::AcquireLeasesResponse> AcquireLeases(const v1::AcquireLeasesRequest& req);
  // ReportProgress records progress under a current lease (and renews it). FAILED_PRECONDITION
  // "stale lease epoch N for REPO (current M)" when the lease is not current or not held by
  // this worker. `done` completes the crawl (IDLE), `error` fails it (FAILED, retried later),
  // `moved_to` marks the repository GONE and adds the new name to the catalog.
  absl::StatusOr<v1::ReportProgressResponse> ReportProgress(const v1::ReportProgressRequest& req);
  // ReleaseLease ends a current lease early; the repository's scheduled crawl (if not done)
  // becomes pending again. Releasing a lease that already ended is a no-op.
  absl::StatusOr<v1::ReleaseLeaseResponse> ReleaseLease(const v1::ReleaseLeaseRequest& req);
  // AddRepositories adds new repositories with a FULL crawl scheduled; existing ones keep their
  // cursor, take the new spec (api_url, interval, pull requests) and get an INCREMENTAL crawl
  // scheduled. One atomic write for the whole request.
  absl::StatusOr<v1::AddRepositoriesResponse> AddRepositories(
      const v1::AddRepositoriesRequest& req);
  // RemoveRepositories removes repositories (unknown slugs are skipped); their leases are
  // revoked. `removed` lists the slugs that were present.
  absl::StatusOr<v1::RemoveRepositoriesResponse> RemoveRepositories(
      const v1::RemoveRepositoriesRequest& req);
  // TriggerCrawl schedules a crawl (mode UNSPECIFIED means INCREMENTAL; FULL wins over a pending
  // INCREMENTAL) of the named repositories, or of all but GONE ones when none is named. A
  // repository being crawled gets it after its current lease. NOT_FOUND for an unknown slug.
  absl::StatusOr<v1::TriggerCrawlResponse> TriggerCrawl(const v1::TriggerCrawlRequest& req);
  // GetStatus reports every repository (sorted by slug) with its owner, rates and ETA, every
  // worker with its load, every account's shared budget, and quiescence.
  absl::StatusOr<v1::GetStatusResponse> GetStatus(const v1::GetStatusRequest& req);
  // DrainWorker starts draining a worker (see the file comment); NOT_FOUND for an unknown one.
  // Idempotent.
  absl::StatusOr<v1::DrainWorkerResponse> DrainWorker(const v1::DrainWorkerRequest& req);
  // PauseRepositories pauses the named repositories (all when none is named) and revokes their
  // leases. NOT_FOUND for an unknown slug; nothing changes then.
  absl::StatusOr<v1::PauseRepositoriesResponse> PauseRepositories(
      const v1::PauseRepositoriesRequest& req);
  // ResumeRepositories resumes the named repositories (all paused ones when none is named).
  // NOT_FOUND for an unknown slug. `resumed` lists those that were paused.
  absl::StatusOr<v1::ResumeRepositoriesResponse> ResumeRepositories(
      const v1::ResumeRepositoriesRequest& req);
  // ReportIndexProgress records how far an indexer has durably indexed each store's feed (it
  // replaces that indexer's previous report) and removes the drained workers it was the last
  // to wait for. INVALID_ARGUMENT for a malformed indexer id, an empty or over-long store id,
  // or more than 100,000 positions.
  absl::StatusOr<v1::ReportIndexProgressResponse> ReportIndexProgress(
      const v1::ReportIndexProgressRequest& req);
  // Counters returns the monotonic counters.
  CoordinatorCounters Counters();

  // Tick ends expired leases and the leases of dead workers now. Every other call does the same
  // first; the service calls Tick periodically so state (and status) stays fresh when idle.
  void Tick();

  // options returns the effective options (home_grace always set).
  const CoordinatorOptions& options() const { return options_; }

 private:
  struct WorkerEntry {
    coordinator::WorkerRecord record;
    absl::Time last_seen;  // last liveness signal (memory only)
    // Highest store_last_seq the worker reported for its current store (memory only).
    uint64_t store_last_seq = 0;
    // Draining and holding no lease since (InfiniteFuture: not yet; memory only).
    absl::Time drained_idle_since = absl::InfiniteFuture();
  };
  // An indexer's latest ReportIndexProgress (memory only).
  struct IndexerEntry {
    absl::Time seen;
    std::map<std::string, uint64_t> positions;  // store id -> indexed seq
  };
  // What ReapDrainedLocked decided: workers to forget, and repositories of abandoned stores
  // scheduled for a crawl; both are in the batch, and applied by ApplyReapedLocked once it is
  // committed.
  struct Reaped {
    std::vector<std::string> workers;
    std::vector<std::pair<std::string, coordinator::RepoRecord>> scheduled;
  };
  // RateSample is one progress report of the current lease: (time, requests, issues fetched).
  struct RateSample {
    absl::Time at;
    int64_t requests;
    int64_t issues;
  };

  CoordinatorCore(CoordinatorOptions options, Clock* clock,
                  std::unique_ptr<coordinator::CoordinatorState> state);
  absl::Status Load();

  // The helpers below require mu_ to be held.
  absl::Status ExpireLocked(absl::Time now);
  // ScheduleLostStoresLocked schedules a crawl of every idle repository whose cursor store was
  // lost (see "Lost stores" above).
  absl::Status ScheduleLostStoresLocked(absl::Time now);
  // ScheduleStoreRepositoriesLocked requests a crawl (into `batch`) of every idle repository
  // whose cursor one of `stores` set, for lost and abandoned stores alike, and returns the new
  // records to apply once the batch is committed.
  std::vector<std::pair<std::string, coordinator::RepoRecord>> ScheduleStoreRepositoriesLocked(
      const std::set<std::string>& stores, absl::Time now, StateBatch* batch) const;
  bool AliveLocked(const std::string& worker_id, absl::Time now) const;
  bool AliveLocked(const WorkerEntry& entry, absl::Time now) const;
  // HomeUntil: the end of the worker's home grace (its durable value once declared dead, else
  // what it will be if the worker stays silent from now).
  absl::Time HomeUntilLocked(const WorkerEntry& entry) const;
  // Away: dead, not draining, and still within its home grace.
  bool AwayLocked(const std::string& worker_id, absl::Time now) const;
  // DueMode: the mode of the crawl due now (UNSPECIFIED: none, or leased, GONE or paused).
  v1::CrawlMode DueModeLocked(const coordinator::RepoRecord& rec, absl::Time now) const;
  // NeedsCrawl: DueMode is not UNSPECIFIED.
  bool NeedsCrawlLocked(const coordinator::RepoRecord& rec, absl::Time now) const;
  // NextCrawlAt: when the next crawl is due (InfiniteFuture: never unless triggered).
  absl::Time NextCrawlAtLocked(const coordinator::RepoRecord& rec, absl::Time now) const;
  // Assignment returns slug -> owner among live, non-draining workers, or the away worker that
  // is the home of the repository (see the file comment), recomputing it when the catalog,
  // sizes or membership changed.
  const std::map<std::string, std::string>& AssignmentLocked(absl::Time now);
  // ReapDrained deletes into `batch` the draining workers that hold no lease according to
  // `held` (worker -> leases) and whose feed the indexers have read, or that waited too long
  // or died (their stores abandoned: see "Drained feeds"); the caller applies the result with
  // ApplyReapedLocked once the batch is committed. `extra` names one more draining worker
  // whose record is still being written (DrainWorker).
  Reaped ReapDrainedLocked(const std::map<std::string, int>& held, absl::Time now,
                           StateBatch* batch, const std::string& extra = "");
  // FeedIndexed says whether every active indexer has indexed the worker's store up to the
  // seq it last reported (true without an active indexer).
  bool FeedIndexedLocked(const WorkerEntry& entry, absl::Time now) const;
  // IndexedSeq is the lowest position of `store_id` among active indexers (0 without any).
  uint64_t IndexedSeqLocked(const std::string& store_id, absl::Time now) const;
  // NoteStoreSeq records a store seq reported by a worker.
  void NoteStoreSeqLocked(const std::string& worker_id, uint64_t seq);
  // SelectRepos normalizes the slugs of an admin request; none named means every repository
  // that is not GONE (and paused, with `paused_only`). NOT_FOUND for a slug not in the catalog.
  absl::StatusOr<std::set<std::string>> SelectReposLocked(
      const google::protobuf::RepeatedPtrField<std::string>& requested, bool paused_only);
  // ApplyReaped forgets the workers whose records a committed batch deleted and installs the
  // repositories it scheduled.
  void ApplyReapedLocked(Reaped reaped);
  // LeaseCount counts leases by (worker, tracker) for the account book.
  std::map<std::pair<std::string, v1::Tracker>, int> LeaseCountLocked() const;
  // AddTotals folds the increase of `counters` over the lease's previous report into totals.
  static void AddTotals(coordinator::RepoRecord* rec, const v1::CrawlCounters& counters);
  // FillRepoStatus fills one repository's status line.
  void FillRepoStatusLocked(const std::string& slug, const coordinator::RepoRecord& rec,
                            absl::Time now, v1::RepositoryStatus* status);
  v1::RepoPhase PhaseLocked(const coordinator::RepoRecord& rec, absl::Time now) const;
  // EndLease clears a lease, folding a crawl requested meanwhile into `scheduled`.
  void EndLeaseLocked(coordinator::RepoRecord* rec);
  // Request asks for a crawl in `mode` (FULL wins over INCREMENTAL): now if unleased (clearing a
  // failure back-off), else after the current lease.
  static void Request(coordinator::RepoRecord* rec, v1::CrawlMode mode);
  // CheckLease finds the current lease `epoch` of `slug` held by `worker_id`, or explains
  // (FAILED_PRECONDITION) why it is not current.
  absl::Status CheckLeaseLocked(const std::string& worker_id, const std::string& slug,
                                uint64_t epoch, coordinator::RepoRecord** rec);
  // NewRecord makes the record of a repository entering the catalog, FULL crawl scheduled and
  // its epoch continuing from a previous removal.
  absl::StatusOr<coordinator::RepoRecord> NewRecordLocked(const std::string& slug,
                                                          const v1::RepositorySpec& spec,
                                                          absl::Time now);
  // LeasesHeld counts the leases of every worker.
  std::map<std::string, int> LeasesHeldLocked() const;

  const CoordinatorOptions options_;
  Clock* const clock_;
  std::mutex mu_;
  std::unique_ptr<coordinator::CoordinatorState> state_;
  std::map<std::string, coordinator::RepoRecord> repos_;  // by slug
  std::map<std::string, WorkerEntry> workers_;            // by worker id
  std::set<std::string> departed_;  // drained and removed workers, until they register again
  std::map<std::string, IndexerEntry> indexers_;  // by indexer id
  AccountBook accounts_;
  // Assignment cache: valid while !assignment_dirty_ and the eligible workers are unchanged.
  std::map<std::string, std::string> owners_;  // slug -> worker
  std::vector<std::string> assigned_workers_;
  std::vector<std::string> assigned_homes_;  // away workers the cache was computed with
  bool assignment_dirty_ = true;
  std::map<std::string, std::vector<RateSample>> rates_;  // slug -> samples of current lease
  int64_t lease_expirations_ = 0;
  int64_t epochs_granted_ = 0;
};

}  // namespace issuescope::coordinator

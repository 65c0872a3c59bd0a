// Cluster: the issuescope processes of one machine, started as separate programs on loopback —
// the tracker simulator (optional), the coordinator, N crawler workers, the indexer and the
// search service — with their data, port files and logs under one work directory. Used by
// `issuescope up` and by the end-to-end and chaos tests, which also kill, stop and restart
// processes through it.
//
// Layout of the work directory: logs/<process>.log, ports/<process>.port, data/coordinator,
// data/<worker-id>, data/index, data/replica-N/index.
//
// Thread-compatible: one thread drives a Cluster. Destruction stops every process.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/subprocess.h"
#include "issuescope/v1/coordinator.grpc.pb.h"
#include "issuescope/v1/search.grpc.pb.h"
#include "issuescope/v1/store.grpc.pb.h"

namespace issuescope::cli {

// ProcessHost is where one process of the cluster runs: in network namespace `netns` (empty: the
// caller's), listening on `address` (an IP of that namespace) and reached there by the others.
struct ProcessHost {
  std::string netns;
  std::string address = "127.0.0.1";
};

struct ClusterOptions {
  // Directory holding the issuescope-* binaries. Default: the directory of this executable.
  std::string bin_dir;
  // Work directory (created). Required.
  std::string work_dir;
  // Number of crawler workers. Default: 2.
  int workers = 2;
  // Start issuescope-simulator with `simulator_args`. Default: true.
  bool start_simulator = true;
  std::vector<std::string> simulator_args;
  // Lease and liveness timing handed to the coordinator.
  int64_t lease_ttl_ms = 6000;
  int64_t heartbeat_ms = 500;
  int64_t worker_timeout_ms = 3000;
  // Environment variable with the tracker token, passed to workers by name. Default: none.
  std::string token_env;
  // Crawl slots per worker. Default: 2.
  int worker_capacity = 2;
  // How long a worker stopped with SIGTERM lets its crawls finish (--drain-timeout-s); below
  // Subprocess::Stop's grace, so a stop is graceful. Default: 5.
  int worker_drain_timeout_s = 5;
  // Log level of the processes.
  std::string log_level = "info";
  // How long to wait for a process to become ready.
  absl::Duration start_timeout = absl::Seconds(30);
  // Search replicas besides the search service (issue 18): the index host also runs
  // xapian-replicate-server (process "replicate") over the index, the indexer keeps changesets,
  // and each replica "search-replica-N" copies the index into a directory of its own
  // (data/replica-N/index) with issuescope-search --replicate-from. Default: 0.
  int search_replicas = 0;
  // Shards of the index (issuescope-indexer --shards). Default: 1.
  int index_shards = 1;
  // placement(name) says where process `name` runs ("simulator", "coordinator", "worker-N",
  // "indexer", "replicate", "search", "search-replica-N"): a process with a netns is started
  // through `ip netns exec`. Unset
  // (default): every process on this machine's loopback. The caller's namespace must reach
  // every address (tests/multihost puts the hosts on a bridge it can reach).
  std::function<ProcessHost(const std::string& name)> placement;
};

// IndexProgress compares the index's consumed feed positions with the workers' stores.
struct IndexProgress {
  int64_t documents = 0;
  uint64_t stored_seq = 0;   // sum over live workers of their last sequence numbers
  uint64_t indexed_seq = 0;  // sum of the index's positions for those stores
  bool caught_up = false;
};

class Cluster {
 public:
  static absl::StatusOr<std::unique_ptr<Cluster>> Start(const ClusterOptions& options);
  ~Cluster();

  const std::string& simulator_url() const { return simulator_url_; }
  const std::string& coordinator_address() const { return coordinator_address_; }
  const std::string& search_address() const { return search_address_; }
  const std::string& work_dir() const { return options_.work_dir; }
  const std::string& bin_dir() const { return options_.bin_dir; }
  int num_workers() const { return static_cast<int>(workers_.size()); }
  std::string worker_id(int i) const { return "worker-" + std::to_string(i); }

  // The processes, for signals (nullptr when not running).
  Subprocess* simulator() { return simulator_.get(); }
  Subprocess* coordinator() { return coordinator_.get(); }
  Subprocess* worker(int i) { return workers_[i].get(); }
  Subprocess* indexer() { return indexer_.get(); }
  Subprocess* search() { return search_.get(); }
  Subprocess* replicate_server() { return replicate_.get(); }
  Subprocess* search_replica(int i) { return replicas_[i].get(); }
  // The replicas' addresses, HOST:PORT each.
  const std::vector<std::string>& replica_addresses() const { return replica_addresses_; }
  // WaitUntilReplicasReady waits until every running replica answers GetIndexStatus: its copy
  // of the index is complete and open.
  absl::Status WaitUntilReplicasReady(absl::Duration timeout);

  // Restart* start a process again on the same address (after it exited or was killed).
  absl::Status RestartCoordinator();
  absl::Status RestartWorker(int i);
  absl::Status RestartIndexer();
  absl::Status RestartSearchReplica(int i);
  // AddWorker starts one more crawler worker.
  absl::Status AddWorker();

  // AddSimulatorRepositories adds every repository the simulator serves to the catalog.
  absl::StatusOr<std::vector<std::string>> AddSimulatorRepositories();
  // TriggerCrawl schedules a re-crawl of all repositories.
  absl::Status TriggerCrawl(v1::CrawlMode mode);
  absl::StatusOr<v1::GetStatusResponse> Status();
  // WaitUntilCrawled waits until every repository completed at least `min_crawls` crawls and
  // the coordinator is quiescent. `on_status` (optional) sees every polled status.
  absl::Status WaitUntilCrawled(int64_t min_crawls, absl::Duration timeout,
                                const std::function<void(const v1::GetStatusResponse&)>& on_status = {});
  // IndexProgressNow compares index positions with every answering worker store (alive or not:
  // a restarted coordinator lists workers as silent until they register again).
  absl::StatusOr<IndexProgress> IndexProgressNow();
  // WaitUntilIndexed waits until the index has consumed every answering worker store's feed.
  absl::Status WaitUntilIndexed(absl::Duration timeout);

  v1::Coordinator::Stub& coordinator_stub() { return *coordinator_stub_; }
  v1::Search::Stub& search_stub() { return *search_stub_; }

  // Stop stops every process (search, indexer, workers, coordinator, simulator); returns a
  // line per process with how it ended.
  std::vector<std::string> Stop();

 private:
  explicit Cluster(ClusterOptions options) : options_(std::move(options)) {}
  std::string Bin(const std::string& name) const;
  // HostOf is options_.placement(name), or loopback without a placement.
  ProcessHost HostOf(const std::string& name) const;
  absl::StatusOr<std::unique_ptr<Subprocess>> Launch(const std::string& name,
                                                     std::vector<std::string> argv, int* port);
  absl::Status StartCoordinator(int port);
  absl::Status StartWorker(int i, int port);
  absl::Status StartIndexer();
  absl::Status StartReplicateServer();
  absl::Status StartSearchReplica(int i, int port);

  ClusterOptions options_;
  std::unique_ptr<Subprocess> simulator_, coordinator_, indexer_, search_, replicate_;
  std::vector<std::unique_ptr<Subprocess>> replicas_;
  std::vector<int> replica_ports_;
  std::vector<std::string> replica_addresses_;
  std::string replicate_address_;  // HOST:PORT of xapian-replicate-server
  std::vector<std::unique_ptr<Subprocess>> workers_;
  std::vector<int> worker_ports_;
  int coordinator_port_ = 0;
  std::string simulator_url_, coordinator_address_, search_address_;
  std::string admin_token_;  // the coordinator's admin token (never logged)
  std::unique_ptr<v1::Coordinator::Stub> coordinator_stub_;
  std::unique_ptr<v1::Search::Stub> search_stub_;
};

}  // namespace issuescope::cli

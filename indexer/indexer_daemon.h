// IndexerDaemon: runs one FeedFollower per crawler worker store, all writing into one
// ChangeSink (an IndexWriter, or a ShardedIndexWriter). The stores come either from a static
// list of addresses, or from the
// coordinator: every poll_interval the daemon calls Coordinator.GetStatus and makes its followers
// match the listed workers' (store_address, store_id) pairs — new pairs get a follower, pairs no
// longer listed (a worker removed, moved to another address, or re-registered with a wiped
// store) have theirs stopped. Workers not alive are still followed: their stores may come back
// with events not yet indexed. After each discovery round the daemon reports the writer's
// committed positions to the coordinator (ReportIndexProgress, as `indexer_id`), which removes a
// drained worker only once its store's feed is indexed. The background thread also commits the writer's pending group
// when due (IndexWriter::FlushIfDue). Every store is dialled with the options' store TLS
// (plaintext, or TLS trusting --store-tls-ca).
//
// Ownership: the writer and clock are not owned and must outlive the daemon. Thread-safety:
// every method may be called from any thread.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/grpc_channel.h"
#include "feed_follower.h"
#include "indexer/index_writer.h"
#include "issuescope/v1/coordinator.grpc.pb.h"

namespace issuescope::indexer {

// IndexerDaemonOptions says where the stores are and how often to look.
struct IndexerDaemonOptions {
  // host:port of the coordinator to discover workers from. Exactly one of coordinator_address
  // and store_addresses must be given. Default: "".
  std::string coordinator_address;
  // TLS of the coordinator channel: its CA (or self-signed certificate; "" talks plaintext)
  // and the client certificate presented to a coordinator that requires one (its
  // --tls-client-ca). Default: plaintext; flags --tls-ca, --tls-cert, --tls-key.
  ClientTlsFiles coordinator_tls;
  // Cluster token sent to the coordinator (coordinator/security.h); "": none. Never logged.
  std::string coordinator_token;
  // Id this indexer reports its progress under ([A-Za-z0-9._-]{1,64}; with client
  // certificates, a name the certificate holds). Default: "indexer"; flag --id.
  std::string indexer_id = "indexer";
  // host:port of each store to follow (static mode). Default: empty.
  std::vector<std::string> store_addresses;
  // TLS of every store channel (common/grpc_channel.h): with a CA, every store is dialled over
  // TLS trusting it (and presented the client certificate, when one is given, for stores that
  // require one). Default: no CA (plaintext); flags --store-tls-ca, --store-tls-cert,
  // --store-tls-key.
  ClientTlsFiles store_tls = {"", "", "", "--store-tls-ca", "--store-tls-cert", "--store-tls-key"};
  // How often to poll the coordinator (and check the writer's commit delay). Default: 1 s.
  absl::Duration poll_interval = absl::Seconds(1);
  // Deadline of each GetStatus call. Default: 5 s.
  absl::Duration rpc_timeout = absl::Seconds(5);
  // Options of every follower.
  FeedFollowerOptions follower;
};

class IndexerDaemon {
 public:
  // IndexerDaemon prepares a daemon; nothing runs before Start.
  IndexerDaemon(ChangeSink* writer, Clock* clock, IndexerDaemonOptions options);
  // ~IndexerDaemon stops everything.
  ~IndexerDaemon();
  IndexerDaemon(const IndexerDaemon&) = delete;
  IndexerDaemon& operator=(const IndexerDaemon&) = delete;

  // Start checks the options (INVALID_ARGUMENT naming what is wrong, e.g. an unreadable
  // --store-tls-ca file), starts the static followers, and the background thread (discovery
  // and commit checks). Call once.
  absl::Status Start();
  // Stop stops the background thread and every follower, and joins them. Idempotent. It does
  // not flush the writer.
  void Stop();
  // PollOnce runs one discovery round against the coordinator, then reports the committed
  // positions (ReportIndexProgress). Start's thread calls it every poll_interval; tests may
  // call it directly without Start.
  absl::Status PollOnce();
  // Followers returns the stats of every running follower, sorted by address then store id.
  std::vector<FeedFollowerStats> Followers() const;

 private:
  // A follower is keyed by its (store address, store id) pair.
  using Key = std::pair<std::string, std::string>;

  void Run();
  // ReportProgress sends the writer's committed positions to the coordinator.
  absl::Status ReportProgress();
  // StoreCredentialsLocked returns the credentials of the store channels, made on first use.
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> StoreCredentialsLocked();
  // StartFollowerLocked creates and starts the follower of a store.
  void StartFollowerLocked(const Key& key);

  ChangeSink* const writer_;
  Clock* const clock_;
  const IndexerDaemonOptions options_;
  std::unique_ptr<v1::Coordinator::Stub> coordinator_;
  std::shared_ptr<grpc::ChannelCredentials> store_credentials_;  // guarded by mu_

  std::atomic<bool> stopping_{false};
  std::thread thread_;

  mutable std::mutex mu_;
  std::map<Key, std::unique_ptr<FeedFollower>> followers_;
  std::string last_poll_error_;
};

}  // namespace issuescope::indexer

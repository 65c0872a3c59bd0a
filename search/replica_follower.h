// ReplicaFollower keeps a search host's index a read replica of an index host's, with Xapian
// replication: the index host runs `xapian-replicate-server` over the directory holding its
// index (Debian's xapian-tools), its indexer keeps changesets (issuescope-indexer
// --keep-changesets), and the follower runs `xapian-replicate --one-shot` for every database of
// the index, round after round, so each round transfers what changed since the last one (a full
// copy only the first time, or when the replica fell further behind than the changesets kept).
//
// The databases of an index (common/index_layout.h): an unsharded index is one database, a
// sharded one `shard-NNN` each; each may have its gone database (`…/gone`), which appears with
// the first tombstone. A round copies, per database, the live database and then the gone one:
// the indexer commits gone(k) before live(k), so the gone copy is at least as new as the live
// one and an issue being tombstoned is in one or both, never in neither. Xapian applies a database's commit whole: a reader sees the revision before or after it,
// never half of it (a reader whose revision was replaced gets DatabaseModifiedError and the
// Searcher reads again). Shards are copied one after the other, as a local reader may see one
// shard's commit before another's; an issue lives in one shard.
//
// Ready turns true once every live database was copied once (and stays true; a marker file
// beside the copy makes a restarted follower ready at once, serving its last copy while the
// index host may be away): until then the local index is not the index host's (xapian-replicate
// makes an empty database before the data arrives), the search service answers UNAVAILABLE and
// health says NOT_SERVING, so clients use another replica. A gone database that fails to copy
// is logged and retried next round; it does not hold readiness back.
//
// Thread-safe. Start once; Stop (or the destructor) ends the rounds and waits for the thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace issuescope::search {

struct ReplicaOptions {
  // The index host's xapian-replicate-server.
  std::string host;
  int port = 0;
  // The index's path under the directory that server serves (its DATABASE names are relative
  // to it), e.g. "index" when it serves /data and the indexer writes /data/index.
  std::string master_index = "index";
  // The local copy: the search service's --index.
  std::string local_dir;
  // The index's shards, as the indexer's --shards (1: one database).
  uint32_t shards = 1;
  // Pause between rounds.
  absl::Duration interval = absl::Seconds(1);
  // Longest one xapian-replicate run may take (a full copy of a large shard takes a while; a
  // stalled connection ends sooner, at xapian-replicate's 60 s socket timeout). A full copy
  // cut off starts again from nothing.
  absl::Duration timeout = absl::Minutes(30);
  // The xapian-replicate program.
  std::string program = "/usr/bin/xapian-replicate";
};

// ParseReplicaSource splits "HOST:PORT" (--replicate-from) into `options`; INVALID_ARGUMENT
// naming the flag otherwise.
absl::Status ParseReplicaSource(const std::string& from, ReplicaOptions* options);

class ReplicaFollower {
 public:
  explicit ReplicaFollower(ReplicaOptions options);
  ~ReplicaFollower();
  ReplicaFollower(const ReplicaFollower&) = delete;
  ReplicaFollower& operator=(const ReplicaFollower&) = delete;

  // Start checks the options (the program runs, the local directory can be made), writes the
  // local stub of a sharded index, and starts the rounds on a thread of its own.
  absl::Status Start();
  // Stop ends the rounds (a run in progress is killed) and joins the thread.
  void Stop();

  // RunRound copies every database once, on the calling thread (Start's thread calls it in a
  // loop). OK when every live database was copied; otherwise the first error, naming the
  // database (the other databases were still tried).
  absl::Status RunRound();

  // Ready: every live database has been copied at least once.
  bool Ready() const { return ready_.load(); }
  // Rounds counts rounds that copied every live database.
  int64_t Rounds() const { return rounds_.load(); }

 private:
  // Database is one database of the index: its name on the master, its local directory.
  struct Database {
    std::string master;
    std::string local;
    bool gone = false;  // a gone database: absent on the master until its first tombstone
  };
  // CopyOnce runs xapian-replicate --one-shot for `db`. NOT_FOUND when the master has no such
  // database (only expected of gone databases).
  absl::Status CopyOnce(const Database& db);
  // CheckLocal: FAILED_PRECONDITION when `db`'s local directory holds something that is not a
  // replica (a local index, say), which the follower must not overwrite.
  absl::Status CheckLocal(const Database& db) const;
  // MarkerText is what the marker file of a completed copy says (which index, how many shards).
  std::string MarkerText() const;
  void Loop();

  const ReplicaOptions options_;
  std::string local_dir_;  // options_.local_dir, normalised
  std::vector<Database> databases_;
  std::string log_path_;
  // Written when every live database was first copied (<local_dir>.replica-complete): a
  // restarted follower serves that copy at once.
  std::string marker_path_;
  std::atomic<bool> ready_{false};
  std::atomic<int64_t> rounds_{0};
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::condition_variable wake_;
  std::thread thread_;
};

}  // namespace issuescope::search

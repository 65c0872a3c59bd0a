// How an index directory is laid out on disk, shared by the indexer (writers), the bulk indexer
// and the search service (readers).
//
// An index directory is either
//  - one Xapian database (the directory itself; an unsharded index), or
//  - a sharded index: Xapian databases `shard-000`, `shard-001`, … and a Xapian stub file
//    `issuescope.stub` listing them (one `auto shard-NNN` line each; `remote` lines name shards
//    served by xapian-tcpsrv). Every shard has exactly one writer; a repository's issues always
//    live in shard ShardOf(repo_slug, shard_count), so replace_document by unique term stays
//    idempotent. Readers open the stub and see all shards as one database.
// Free functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "xapian.h"

namespace issuescope::index {

// Name of the stub file of a sharded index, inside the index directory.
inline constexpr char kStubFileName[] = "issuescope.stub";

// Name of the gone database inside each database directory of an index (the unsharded index's
// directory, or each shard-NNN): the issues the tracker reported deleted or transferred away,
// as documents of their last indexed state with a kGonePrefix term. The live database never
// holds them (its document count, term statistics and facets are the live issues'); search
// answers `is:deleted` and `is:transferred` from the gone databases alone. Written by the
// database's one writer (indexer::IndexWriter, the bulk indexer), committed before the live
// database so that a replayed change feed finds it already there.
inline constexpr char kGoneDirName[] = "gone";

// GonePath is `<database_dir>/gone`.
std::string GonePath(absl::string_view database_dir);

// ShardOf maps a repository slug ("github:owner/name") to a shard in [0, shard_count): FNV-1a
// of the slug, so the mapping is stable across processes, machines and releases.
uint32_t ShardOf(absl::string_view repo_slug, uint32_t shard_count);

// ShardDirName is "shard-NNN" (at least three digits).
std::string ShardDirName(uint32_t shard);

// StubPath is `<index_dir>/issuescope.stub`.
std::string StubPath(absl::string_view index_dir);

// WriteStubFile atomically (write to a temporary file, then rename) writes the stub of a
// sharded index with `shard_count` local shards.
absl::Status WriteStubFile(absl::string_view index_dir, uint32_t shard_count);

// ShardPaths lists the local database directories of an index: every `auto` line of the stub
// (resolved against the index directory), or the directory itself when it has no stub.
std::vector<std::string> ShardPaths(const std::string& index_dir);

// HasRemoteShards says whether the index's stub names a shard served over Xapian's remote
// protocol (a `remote` line: issuescope-shard-server on an index host).
bool HasRemoteShards(const std::string& index_dir);

// kAlternatePrefix starts a stub line naming another shard server that serves the same shards
// as the `remote` line before it (a copy on another host): a comment to Xapian, which ignores
// it, and a failover target to issuescope-search (search/index_reader.h).
inline constexpr char kAlternatePrefix[] = "#issuescope-alternate ";

// ShardServer is one `HOST:PORT` of a stub.
struct ShardServer {
  std::string host;
  unsigned port = 0;
  std::string Name() const { return host + ":" + std::to_string(port); }
};

// RemoteStubEntry is one `remote HOST:PORT` line of a stub and its alternates, in order.
struct RemoteStubEntry {
  std::vector<ShardServer> servers;  // the `remote` line's server first
};

// ReadRemoteStub parses the stub of `index_dir` when every database line is `remote HOST:PORT`
// (each optionally followed by `#issuescope-alternate HOST:PORT` lines; other comments and blank
// lines are skipped). NOT_FOUND without a stub; UNIMPLEMENTED for a stub with other lines
// (local shards, `remote` options); INVALID_ARGUMENT for an alternate before any `remote` line or
// an address that is not HOST:PORT.
absl::StatusOr<std::vector<RemoteStubEntry>> ReadRemoteStub(const std::string& index_dir);

// ReadFeedPositions returns, per crawler store id, the change-feed position every shard has
// consumed: the minimum over the shards of their "feed:<store_id>" metadata (a shard without
// the key counts as 0). Throws what Xapian throws.
std::map<std::string, uint64_t> ReadFeedPositions(const std::string& index_dir);

// TaggingStatus is what an index says about its tags, summed over its shards.
struct TaggingStatus {
  // The tagger fingerprint the tags were made with ("" when unknown, "mixed" when shards
  // differ).
  std::string tagger;
  // The fingerprint a re-tag is applying (or applied last), and its progress.
  std::string retag_fingerprint;
  int64_t retag_done = 0;
  int64_t retag_total = 0;
  // True while some shard still has documents to re-tag.
  bool retag_running = false;
};

// ReadTaggingStatus reads the tagger and re-tag metadata (index_schema.h) of every local shard
// of `index_dir`. Throws what Xapian throws.
TaggingStatus ReadTaggingStatus(const std::string& index_dir);

}  // namespace issuescope::index

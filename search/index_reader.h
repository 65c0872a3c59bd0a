// Opening an index for searching (the indexer writes it: common/index_layout.h).
#pragma once

#include <string>
#include <vector>

#include "common/index_layout.h"
#include "xapian.h"

namespace issuescope::search {

// OpenIndexForReading opens an index directory for searching: the stub when the directory has
// one, else the directory as one database. A stub of shard servers only (index::ReadRemoteStub)
// is opened server by server: each `remote` line's server, or when it cannot be reached, the
// first of its `#issuescope-alternate` servers that can (a copy of the same shards on another
// host; OpenRemoteShard). Throws what Xapian throws (DatabaseOpeningError while the index does
// not exist yet; NetworkError when no server of a shard answers); callers convert at their edge.
// `missed` (may be null) gets the `remote` lines' own servers that could not be reached, whose
// shards were opened on an alternate (ShardServerAnswers says when to open afresh).
// Timeouts of a connection to a shard server, in ms: to connect (short, so that a host that is
// away fails over soon), and for each exchange after (Xapian's own default). A host that goes
// silent mid-query (no reset: power, a cut link) holds the query for the exchange timeout before
// the alternate is tried; a search service that must fail over sooner lowers it
// (issuescope-search --shard-timeout), at the risk of failing over a search that is only slow.
inline constexpr unsigned kShardConnectTimeoutMs = 2000;
inline constexpr unsigned kShardTimeoutMs = 10000;
struct ShardTimeouts {
  unsigned connect_ms = kShardConnectTimeoutMs;
  unsigned exchange_ms = kShardTimeoutMs;
};

Xapian::Database OpenIndexForReading(const std::string& index_dir,
                                     std::vector<index::ShardServer>* missed = nullptr,
                                     ShardTimeouts timeouts = ShardTimeouts());

// OpenRemoteShard connects to the first of `entry`'s servers that answers and returns its
// database; `served_by` (may be null) gets that server's name. Throws the NetworkError of the
// last server tried, naming every server, when none answers.
Xapian::Database OpenRemoteShard(const index::RemoteStubEntry& entry, unsigned connect_timeout_ms,
                                 unsigned timeout_ms, std::string* served_by = nullptr);

// ShardServerAnswers says whether `server` accepts a connection and answers Xapian's remote
// protocol within `connect_timeout_ms` (and the exchange within `exchange_ms`).
bool ShardServerAnswers(const index::ShardServer& server, unsigned connect_timeout_ms,
                        unsigned exchange_ms);

// OpenGoneForReading opens the gone databases (common/index_layout.h, kGoneDirName) of every
// local database of an index as one database; an empty in-memory one when no issue has gone
// yet. Throws what Xapian throws.
Xapian::Database OpenGoneForReading(const std::string& index_dir);

// NamesGoneIssues is true when `query` has the qualifier `is:deleted` or `is:transferred`
// (anywhere, negated or not): such a query searches the gone issues instead of the live ones.
// False for a query that does not lex (the live search reports its error).
bool NamesGoneIssues(const std::string& query);

}  // namespace issuescope::search

// MatchSplit runs the matching of one query on several cores. A sharded index (a stub over
// several shard databases) is opened once per part; each part's handle sees the whole index,
// but its queries are restricted to its share of the shards by a ShardFilter (a PostingSource
// that is empty in the other shards), so the parts' matches are disjoint and together are the
// query's matches. Because every handle is the whole index, the statistics every weight is
// computed from (document count, term frequencies) are the whole index's: a match gets the
// same weight in its part as in one unsplit pass, so parts' ranked lists merge exactly, and
// their counts and facet counts add up.
//
// Shards are shared out by document count (largest first to the lightest part), so the parts
// do about equal work. A single-shard index, or one part, is no split: Restrict leaves queries
// alone and Run calls the body once on the calling thread.
//
// The handles must be distinct Xapian::Database objects (one is not safe for concurrent use)
// opened on the same index. If a commit lands between their reopens, a part may see a newer
// revision of its shards than another; each shard is read from one handle only, so a hit is
// never lost or repeated, at worst weights differ by the statistics of that commit.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "xapian.h"

namespace issuescope::search {

// ShardFilter is a PostingSource matching every document id of the (sub-)databases whose UUID
// is in its set, and none of the others. Its term frequency is the database's document count,
// so Xapian's bounds on an AND with it stay exact (ids without a document never match the
// query it filters).
class ShardFilter : public Xapian::PostingSource {
 public:
  explicit ShardFilter(std::vector<std::string> uuids);

  // PostingSource.
  void init(const Xapian::Database& db) override;
  Xapian::doccount get_termfreq_min() const override { return termfreq_; }
  Xapian::doccount get_termfreq_est() const override { return termfreq_; }
  Xapian::doccount get_termfreq_max() const override { return termfreq_; }
  void next(double min_wt) override;
  void skip_to(Xapian::docid did, double min_wt) override;
  bool at_end() const override { return current_ > last_; }
  Xapian::docid get_docid() const override { return current_; }
  ShardFilter* clone() const override { return new ShardFilter(uuids_); }
  std::string get_description() const override;

 private:
  const std::vector<std::string> uuids_;
  Xapian::doccount termfreq_ = 0;
  Xapian::docid last_ = 0;     // last id to yield (0: none)
  Xapian::docid current_ = 0;  // 0 before the first next/skip_to
};

// ShardShare is one shard of an index: its UUID, document count and revision.
struct ShardShare {
  std::string uuid;
  Xapian::doccount documents = 0;
  Xapian::rev revision = 0;  // 0 where the backend has none (in memory)
  // Highest document id the shard ever used: above `documents` once documents were deleted.
  Xapian::docid last_docid = 0;
};

// ShardVisit is called with each shard of a database, in order.
using ShardVisit = std::function<void(const Xapian::Database& shard)>;

// VisitShards calls `visit` with each shard of `db` (one call for an unsharded database), from
// a posting source Xapian sets up in each; false when a shard cannot run one (a remote shard).
// Throws what Xapian throws otherwise.
bool VisitShards(const Xapian::Database& db, const ShardVisit& visit);

// ListShards returns the shards of `db` in order (one entry for an unsharded database). Throws
// what Xapian throws.
std::vector<ShardShare> ListShards(const Xapian::Database& db);

// RevisionKey names the exact contents of `db`: every shard's UUID and revision, so a value
// derived from the index can be cached under it. Empty when a shard has no UUID (in memory):
// nothing to cache under. Throws what Xapian throws.
std::string RevisionKey(const Xapian::Database& db);

class MatchSplit {
 public:
  // MatchSplit over one handle: no split.
  explicit MatchSplit(const Xapian::Database& db);
  // MatchSplit over `handles` (at least one, all opened on the same index): at most
  // min(handles, shards) parts, shards balanced by document count. Throws what Xapian throws.
  explicit MatchSplit(const std::vector<const Xapian::Database*>& handles);
  // The same with the shards of handles[0] already listed (ListShards).
  MatchSplit(const std::vector<const Xapian::Database*>& handles, std::vector<ShardShare> shards);

  // parts is the number of parts (1: no split).
  size_t parts() const { return dbs_.size(); }
  // db is the handle of part `i`; db(0) is the first handle, which sees the whole index
  // unrestricted (for work that is not split).
  const Xapian::Database& db(size_t i) const { return *dbs_[i]; }
  // Restrict returns `query` limited to part `i`'s shards (unchanged when not split).
  Xapian::Query Restrict(size_t i, const Xapian::Query& query) const;
  // Run calls body(i) for every part, in parallel (part 0 on the calling thread), and returns
  // when all are done; rethrows the first exception a part threw.
  void Run(const std::function<void(size_t)>& body) const;

 private:
  std::vector<const Xapian::Database*> dbs_;
  std::vector<std::vector<std::string>> uuids_;  // per part; empty when not split
};

}  // namespace issuescope::search

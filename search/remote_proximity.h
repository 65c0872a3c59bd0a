// Proximity re-ranking over remote shards (search/proximity.h; issue 18). Re-ranking the first
// kProximityWindow matches reads each match's position list of each query word: over Xapian's
// remote protocol that is one round trip per word and match (50 matches × 3 words: 150 round
// trips, most of a multi-word query's time). Instead the shard servers compute the bonus
// themselves, where the positions are, in one extra match:
//
//  - ProximitySource is a posting source matching the given documents of each shard, named by
//    the shard's UUID and the shard's own document ids, each weighing PairProximity over that
//    shard. Xapian clones a posting source per sub-database (on a shard server: per shard) and
//    the clone finds its documents by its database's UUID; every shard server registers it
//    (search/remote_registry.h).
//  - RemoteShardLayout maps a document id of the stub database (remote shards: sub-database
//    s of H holds ids s + 1, s + 1 + H, …; a shard server's database interleaves its shards the
//    same way) to (shard UUID, shard document id). It comes from connecting to each shard
//    server once (its database's UUID lists its shards'), and holds while the stub database's
//    UUID is the concatenation it was made from.
//  - RemoteProximity runs the match over the stub database: one round of messages to every
//    server instead of one round trip per word and match. The weights come back exactly as
//    PairProximity computes them over the same shards.
//  - RemoteDocuments reads a page's documents the same way (Xapian 1.4's remote backend reads
//    one document per round trip; MSet::fetch does not pipeline there): KeyedDocsSource
//    matches them, each weighing its position in the page, and the DocumentCollector spy
//    sends back each one's data and asked-for values keyed by that weight.
//
// Thread-safe: ProximitySource objects are used by one thread (Xapian clones them); a layout
// is immutable.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "xapian.h"

namespace issuescope::search {

class SerialReader;

// ListedDocsSource matches listed documents of each shard, named by the shard's UUID and the
// shard's own ids, each with a number of the caller's. Xapian clones a posting source per
// sub-database (on a shard server: per shard), and init finds the clone's list by its
// database's UUID. The base of ProximitySource and KeyedDocsSource.
class ListedDocsSource : public Xapian::PostingSource {
 public:
  // Per shard UUID: (shard document id, number) pairs.
  using Listed = std::map<std::string, std::vector<std::pair<Xapian::docid, uint32_t>>>;

  void init(const Xapian::Database& db) override;
  Xapian::doccount get_termfreq_min() const override { return mine_.size(); }
  Xapian::doccount get_termfreq_est() const override { return mine_.size(); }
  Xapian::doccount get_termfreq_max() const override { return mine_.size(); }
  void next(double min_wt) override;
  void skip_to(Xapian::docid did, double min_wt) override;
  bool at_end() const override { return started_ && pos_ >= mine_.size(); }
  Xapian::docid get_docid() const override { return mine_[pos_].first; }

 protected:
  // `docs` is sorted by id and each shard's repeated ids dropped (the first number kept).
  explicit ListedDocsSource(Listed docs);

  const Listed& listed() const { return docs_; }
  const Xapian::Database& database() const { return db_; }
  // number is the current document's number.
  uint32_t number() const { return mine_[pos_].second; }
  // Describe is "<what>(N documents in M shards".
  std::string Describe(const char* what) const;
  // SerialiseListed writes the list: per shard its UUID, its count, then id steps and numbers.
  std::string SerialiseListed() const;
  // ParseListed reads what SerialiseListed wrote; numbers must be 1..2^31 when `numbered`, else
  // 0. Malformed or oversized input throws Xapian::SerialisationError.
  static Listed ParseListed(SerialReader& r, bool numbered);

 private:
  Listed docs_;
  Xapian::Database db_;
  std::vector<std::pair<Xapian::docid, uint32_t>> mine_;  // this database's (set by init)
  size_t pos_ = 0;
  bool started_ = false;
};

// ProximitySource weighs each listed document PairProximity(its shard, id, terms).
class ProximitySource : public ListedDocsSource {
 public:
  // `docs`: per shard UUID, that shard's document ids (any order; duplicates ignored).
  ProximitySource(const std::map<std::string, std::vector<Xapian::docid>>& docs,
                  std::vector<std::string> terms);

  void init(const Xapian::Database& db) override;
  double get_weight() const override;
  ProximitySource* clone() const override;
  std::string get_description() const override;
  // For Xapian's remote protocol (search/remote_registry.h).
  std::string name() const override { return "issuescope.ProximitySource"; }
  std::string serialise() const override;
  ProximitySource* unserialise_with_registry(const std::string& serialised,
                                             const Xapian::Registry& registry) const override;

 private:
  struct FromListed {};
  ProximitySource(FromListed, Listed docs, std::vector<std::string> terms);
  std::vector<std::string> terms_;
};

// KeyedDocsSource weighs each listed document its key: a number > 0 the caller gave it (its
// position in the caller's list, from 1). A DocumentCollector riding along then knows each
// document it sees by its weight, whichever server and shard it came from.
class KeyedDocsSource : public ListedDocsSource {
 public:
  // `docs`: per shard UUID, (shard document id, key) pairs; keys 1..2^31.
  explicit KeyedDocsSource(Listed docs);

  void init(const Xapian::Database& db) override;
  double get_weight() const override { return number(); }
  KeyedDocsSource* clone() const override;
  std::string get_description() const override;
  std::string name() const override { return "issuescope.KeyedDocsSource"; }
  std::string serialise() const override;
  KeyedDocsSource* unserialise_with_registry(const std::string& serialised,
                                             const Xapian::Registry& registry) const override;

 private:
  uint32_t max_key_ = 1;
};

// DocumentCollector is a match spy that keeps the data and the values of `slots` of every
// document it sees, by the document's weight (KeyedDocsSource's key); one without data (an id
// that names no document) is not kept. A shard server runs a copy
// and sends what it kept back (serialise_results; merge_results adds it here).
class DocumentCollector : public Xapian::MatchSpy {
 public:
  explicit DocumentCollector(std::vector<Xapian::valueno> slots);

  void operator()(const Xapian::Document& doc, double wt) override;
  // documents are the documents seen, by key: data and the values of the slots, nothing else.
  const std::map<uint32_t, Xapian::Document>& documents() const { return documents_; }

  DocumentCollector* clone() const override;
  std::string name() const override { return "issuescope.DocumentCollector"; }
  std::string serialise() const override;
  DocumentCollector* unserialise(const std::string& serialised,
                                 const Xapian::Registry& context) const override;
  std::string serialise_results() const override;
  void merge_results(const std::string& serialised) override;

 private:
  const std::vector<Xapian::valueno> slots_;
  std::map<uint32_t, Xapian::Document> documents_;
};

// RemoteShardLayout is how a stub database of remote shards numbers its documents.
struct RemoteShardLayout {
  // Per shard server, in stub order: its shards' UUIDs, in its database's order.
  std::vector<std::vector<std::string>> servers;
  // The stub database's UUID this layout holds for (every shard's, ':'-joined).
  std::string uuid;

  // Locate maps a document id of the stub database to its shard's UUID and id there.
  std::pair<const std::string*, Xapian::docid> Locate(Xapian::docid did) const;
};

// ProbeRemoteShardLayout connects to every shard server named by the stub of `index_dir` (all
// of its lines must be `remote HOST:PORT`) and reads its shards' UUIDs. UNIMPLEMENTED for a
// stub with other lines; UNAVAILABLE when a server cannot be reached or a shard has no UUID
// (or two shards share one: a copy served twice).
absl::StatusOr<RemoteShardLayout> ProbeRemoteShardLayout(const std::string& index_dir);

// RemoteProximity returns PairProximity(`terms`) of each of `docids` (documents of `db`, the
// stub database), computed on the shard servers; nullopt when `db`'s UUID is not the one
// `layout` was made for (the caller probes again or reads the positions itself). Throws what
// Xapian throws.
std::optional<std::vector<double>> RemoteProximity(const Xapian::Database& db,
                                                   const RemoteShardLayout& layout,
                                                   const std::vector<Xapian::docid>& docids,
                                                   const std::vector<std::string>& terms);

// RemoteMatchCounts counts, process-wide, the answers RemoteProximity and RemoteDocuments gave
// (not nullopt): how often a search took the one-match paths.
struct RemoteMatchCounts {
  uint64_t proximity = 0;
  uint64_t documents = 0;
};
RemoteMatchCounts RemoteMatchesSoFar();

// RemoteDocuments reads `docids` (documents of `db`, the stub database) from the shard servers
// in one match instead of one round trip each: for each, a document holding its data and the
// values of `slots` (nullopt for one that is gone). nullopt when `db`'s UUID is not the one
// `layout` was made for. Throws what Xapian throws.
std::optional<std::vector<std::optional<Xapian::Document>>> RemoteDocuments(
    const Xapian::Database& db, const RemoteShardLayout& layout,
    const std::vector<Xapian::docid>& docids, const std::vector<Xapian::valueno>& slots);

}  // namespace issuescope::search

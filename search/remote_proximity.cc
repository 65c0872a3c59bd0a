#include "remote_proximity.h"

#include "index_reader.h"

#include <algorithm>
#include <atomic>
#include <set>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/index_layout.h"
#include "proximity.h"
#include "serial_codec.h"

namespace issuescope::search {
namespace {

std::atomic<uint64_t> remote_proximity_answers{0};
std::atomic<uint64_t> remote_document_answers{0};

// Bounds on what a peer may ask a shard server to do in one source.
constexpr uint64_t kMaxShards = 4096;
constexpr uint64_t kMaxDocsPerShard = 100000;
constexpr uint64_t kMaxTerms = 256;

}  // namespace

ListedDocsSource::ListedDocsSource(Listed docs) : docs_(std::move(docs)) {
  for (auto& [uuid, ids] : docs_) {
    std::stable_sort(ids.begin(), ids.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    ids.erase(std::unique(ids.begin(), ids.end(),
                          [](const auto& a, const auto& b) { return a.first == b.first; }),
              ids.end());
  }
}

void ListedDocsSource::init(const Xapian::Database& db) {
  db_ = db;
  auto found = docs_.find(db.get_uuid());
  mine_ = found == docs_.end() ? decltype(mine_)() : found->second;
  pos_ = 0;
  started_ = false;
}

void ListedDocsSource::next(double /*min_wt*/) {
  if (!started_) {
    started_ = true;
    pos_ = 0;
    return;
  }
  ++pos_;
}

void ListedDocsSource::skip_to(Xapian::docid did, double /*min_wt*/) {
  started_ = true;
  while (pos_ < mine_.size() && mine_[pos_].first < did) ++pos_;
}

std::string ListedDocsSource::Describe(const char* what) const {
  size_t n = 0;
  for (const auto& [uuid, ids] : docs_) n += ids.size();
  return absl::StrCat(what, "(", n, " documents in ", docs_.size(), " shards");
}

std::string ListedDocsSource::SerialiseListed() const {
  SerialWriter w;
  w.Uint(docs_.size());
  for (const auto& [uuid, ids] : docs_) {
    w.Str(uuid);
    w.Uint(ids.size());
    Xapian::docid last = 0;
    for (const auto& [id, number] : ids) {  // ascending: steps of at least 1
      w.Uint(id - last);
      w.Uint(number);
      last = id;
    }
  }
  return w.Take();
}

ListedDocsSource::Listed ListedDocsSource::ParseListed(SerialReader& r, bool numbered) {
  const uint64_t n_shards = r.Count();
  if (n_shards > kMaxShards) r.Fail("names too many shards");
  Listed docs;
  for (uint64_t s = 0; s < n_shards; ++s) {
    std::string uuid = r.Str();
    const uint64_t n = r.Count();
    if (n > kMaxDocsPerShard) r.Fail("lists too many documents");
    std::vector<std::pair<Xapian::docid, uint32_t>> ids;
    uint64_t id = 0;
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t step = r.Uint();
      const uint64_t number = r.Uint();
      if (step == 0 || step > UINT32_MAX - id) r.Fail("has a bad document id");
      if (numbered ? number == 0 || number > (1u << 31) : number != 0) r.Fail("has a bad key");
      id += step;
      ids.emplace_back(static_cast<Xapian::docid>(id), static_cast<uint32_t>(number));
    }
    if (!docs.emplace(std::move(uuid), std::move(ids)).second) r.Fail("names a shard twice");
  }
  return docs;
}

namespace {

ListedDocsSource::Listed Unnumbered(const std::map<std::string, std::vector<Xapian::docid>>& docs) {
  ListedDocsSource::Listed listed;
  for (const auto& [uuid, ids] : docs) {
    auto& out = listed[uuid];
    for (Xapian::docid id : ids) out.emplace_back(id, 0);
  }
  return listed;
}

}  // namespace

ProximitySource::ProximitySource(const std::map<std::string, std::vector<Xapian::docid>>& docs,
                                 std::vector<std::string> terms)
    : ProximitySource(FromListed(), Unnumbered(docs), std::move(terms)) {}

ProximitySource::ProximitySource(FromListed, Listed docs, std::vector<std::string> terms)
    : ListedDocsSource(std::move(docs)), terms_(std::move(terms)) {
  // The bonus f is at most one credit per pair plus the phrase credit.
  set_maxweight(1.0 + kPhraseCredit);
}

void ProximitySource::init(const Xapian::Database& db) {
  ListedDocsSource::init(db);
  set_maxweight(1.0 + kPhraseCredit);
}

double ProximitySource::get_weight() const {
  return PairProximity(database(), get_docid(), terms_);
}

ProximitySource* ProximitySource::clone() const {
  return new ProximitySource(FromListed(), listed(), terms_);
}

std::string ProximitySource::get_description() const {
  return absl::StrCat(Describe("issuescope.ProximitySource"), "; ", absl::StrJoin(terms_, " "),
                      ")");
}

std::string ProximitySource::serialise() const {
  SerialWriter w;
  w.Uint(terms_.size());
  for (const std::string& t : terms_) w.Str(t);
  return w.Take() + SerialiseListed();
}

ProximitySource* ProximitySource::unserialise_with_registry(
    const std::string& serialised, const Xapian::Registry& /*registry*/) const {
  SerialReader r(serialised, "issuescope.ProximitySource");
  const uint64_t n_terms = r.Count();
  if (n_terms > kMaxTerms) r.Fail("has too many terms");
  std::vector<std::string> terms;
  for (uint64_t i = 0; i < n_terms; ++i) terms.push_back(r.Str());
  Listed docs = ParseListed(r, false);
  r.End();
  return new ProximitySource(FromListed(), std::move(docs), std::move(terms));
}

KeyedDocsSource::KeyedDocsSource(Listed docs) : ListedDocsSource(std::move(docs)) {
  for (const auto& [uuid, ids] : listed()) {
    for (const auto& [id, key] : ids) max_key_ = std::max(max_key_, key);
  }
  set_maxweight(max_key_);
}

void KeyedDocsSource::init(const Xapian::Database& db) {
  ListedDocsSource::init(db);
  set_maxweight(max_key_);
}

KeyedDocsSource* KeyedDocsSource::clone() const { return new KeyedDocsSource(listed()); }

std::string KeyedDocsSource::get_description() const {
  return Describe("issuescope.KeyedDocsSource") + ")";
}

std::string KeyedDocsSource::serialise() const { return SerialiseListed(); }

KeyedDocsSource* KeyedDocsSource::unserialise_with_registry(
    const std::string& serialised, const Xapian::Registry& /*registry*/) const {
  SerialReader r(serialised, "issuescope.KeyedDocsSource");
  Listed docs = ParseListed(r, true);
  r.End();
  return new KeyedDocsSource(std::move(docs));
}

DocumentCollector::DocumentCollector(std::vector<Xapian::valueno> slots)
    : slots_(std::move(slots)) {}

void DocumentCollector::operator()(const Xapian::Document& doc, double wt) {
  if (!(wt >= 1 && wt <= static_cast<double>(1u << 31))) return;
  // A document id that names no document (the source lists ids, it does not check them) reads
  // as empty data; every indexed issue has data.
  std::string data = doc.get_data();
  if (data.empty()) return;
  Xapian::Document kept;
  kept.set_data(std::move(data));
  for (Xapian::valueno slot : slots_) {
    const std::string value = doc.get_value(slot);
    if (!value.empty()) kept.add_value(slot, value);
  }
  documents_[static_cast<uint32_t>(wt)] = kept;
}

DocumentCollector* DocumentCollector::clone() const { return new DocumentCollector(slots_); }

std::string DocumentCollector::serialise() const {
  SerialWriter w;
  w.Uint(slots_.size());
  for (Xapian::valueno slot : slots_) w.Uint(slot);
  return w.Take();
}

DocumentCollector* DocumentCollector::unserialise(const std::string& serialised,
                                                  const Xapian::Registry& /*context*/) const {
  SerialReader r(serialised, "issuescope.DocumentCollector");
  const uint64_t n = r.Count();
  if (n > 64) throw Xapian::SerialisationError("issuescope.DocumentCollector has too many slots");
  std::vector<Xapian::valueno> slots;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t slot = r.Uint();
    if (slot >= Xapian::BAD_VALUENO) {
      throw Xapian::SerialisationError("issuescope.DocumentCollector has a bad slot");
    }
    slots.push_back(static_cast<Xapian::valueno>(slot));
  }
  r.End();
  return new DocumentCollector(std::move(slots));
}

std::string DocumentCollector::serialise_results() const {
  SerialWriter w;
  w.Uint(documents_.size());
  for (const auto& [key, doc] : documents_) {
    w.Uint(key);
    w.Str(doc.get_data());
    for (Xapian::valueno slot : slots_) w.Str(doc.get_value(slot));
  }
  return w.Take();
}

void DocumentCollector::merge_results(const std::string& serialised) {
  SerialReader r(serialised, "issuescope.DocumentCollector results");
  const uint64_t n = r.Count();
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t key = r.Uint();
    if (key == 0 || key > (1u << 31)) {
      throw Xapian::SerialisationError("issuescope.DocumentCollector results have a bad key");
    }
    Xapian::Document doc;
    doc.set_data(r.Str());
    for (Xapian::valueno slot : slots_) {
      const std::string value = r.Str();
      if (!value.empty()) doc.add_value(slot, value);
    }
    documents_[static_cast<uint32_t>(key)] = doc;
  }
  r.End();
}

std::pair<const std::string*, Xapian::docid> RemoteShardLayout::Locate(Xapian::docid did) const {
  const Xapian::docid h = static_cast<Xapian::docid>(servers.size());
  const std::vector<std::string>& shards = servers[(did - 1) % h];
  const Xapian::docid in_server = (did - 1) / h + 1;
  const Xapian::docid n = static_cast<Xapian::docid>(shards.size());
  return {&shards[(in_server - 1) % n], (in_server - 1) / n + 1};
}

absl::StatusOr<RemoteShardLayout> ProbeRemoteShardLayout(const std::string& index_dir) {
  absl::StatusOr<std::vector<index::RemoteStubEntry>> entries = index::ReadRemoteStub(index_dir);
  if (!entries.ok() && entries.status().code() == absl::StatusCode::kNotFound) {
    return absl::UnavailableError(entries.status().message());
  }
  if (!entries.ok()) return absl::UnimplementedError(entries.status().message());
  RemoteShardLayout layout;
  std::set<std::string> seen;
  std::vector<std::string> all;
  for (const index::RemoteStubEntry& entry : *entries) {
    std::string uuid;
    std::string served_by = entry.servers[0].Name();
    try {
      // Short timeouts: a search waits for no probe (Searcher::RemoteLayout), but a probe of
      // an unreachable server should end soon. An alternate serves the same shards (the same
      // UUIDs: copies made by replication).
      uuid = OpenRemoteShard(entry, 2000, 2000, &served_by).get_uuid();
    } catch (const Xapian::Error& e) {
      return absl::UnavailableError(e.get_msg());
    }
    std::vector<std::string> shards = absl::StrSplit(uuid, ':');
    for (const std::string& shard : shards) {
      if (shard.empty() || !seen.insert(shard).second) {
        return absl::UnavailableError(absl::StrCat(
            "shard server ", served_by, " reports shard UUIDs '", uuid,
            "': a shard without a UUID, or one served twice"));
      }
      all.push_back(shard);
    }
    layout.servers.push_back(std::move(shards));
  }
  if (layout.servers.empty()) return absl::UnimplementedError("the stub names no shard server");
  layout.uuid = absl::StrJoin(all, ":");
  return layout;
}

std::optional<std::vector<double>> RemoteProximity(const Xapian::Database& db,
                                                   const RemoteShardLayout& layout,
                                                   const std::vector<Xapian::docid>& docids,
                                                   const std::vector<std::string>& terms) {
  if (layout.servers.empty() || db.get_uuid() != layout.uuid) return std::nullopt;
  std::map<std::string, std::vector<Xapian::docid>> by_shard;
  for (Xapian::docid did : docids) {
    const auto [uuid, id] = layout.Locate(did);
    by_shard[*uuid].push_back(id);
  }
  Xapian::Enquire enquire(db);
  // Not BoolWeight, under which Xapian scales every weight, a posting source's too, to 0; the
  // query has no terms for the scheme to weigh, so a match weighs its source's weight.
  enquire.set_weighting_scheme(Xapian::BM25Weight());
  enquire.set_query(Xapian::Query((new ProximitySource(std::move(by_shard), terms))->release()));
  const Xapian::MSet mset = enquire.get_mset(0, static_cast<Xapian::doccount>(docids.size()));
  std::unordered_map<Xapian::docid, double> weights;
  for (Xapian::MSetIterator it = mset.begin(); it != mset.end(); ++it) {
    weights[*it] = it.get_weight();
  }
  std::vector<double> out;
  out.reserve(docids.size());
  for (Xapian::docid did : docids) {
    auto found = weights.find(did);
    out.push_back(found == weights.end() ? 0.0 : found->second);
  }
  remote_proximity_answers.fetch_add(1, std::memory_order_relaxed);
  return out;
}

RemoteMatchCounts RemoteMatchesSoFar() {
  RemoteMatchCounts counts;
  counts.proximity = remote_proximity_answers.load(std::memory_order_relaxed);
  counts.documents = remote_document_answers.load(std::memory_order_relaxed);
  return counts;
}

std::optional<std::vector<std::optional<Xapian::Document>>> RemoteDocuments(
    const Xapian::Database& db, const RemoteShardLayout& layout,
    const std::vector<Xapian::docid>& docids, const std::vector<Xapian::valueno>& slots) {
  if (layout.servers.empty() || db.get_uuid() != layout.uuid) return std::nullopt;
  std::map<std::string, std::vector<std::pair<Xapian::docid, uint32_t>>> by_shard;
  for (size_t k = 0; k < docids.size(); ++k) {
    const auto [uuid, id] = layout.Locate(docids[k]);
    by_shard[*uuid].emplace_back(id, static_cast<uint32_t>(k + 1));
  }
  Xapian::Enquire enquire(db);
  // Not BoolWeight (it scales a posting source's weight, the key, to 0).
  enquire.set_weighting_scheme(Xapian::BM25Weight());
  enquire.set_query(Xapian::Query((new KeyedDocsSource(std::move(by_shard)))->release()));
  DocumentCollector collector(slots);
  enquire.add_matchspy(&collector);
  enquire.get_mset(0, static_cast<Xapian::doccount>(docids.size()));
  std::vector<std::optional<Xapian::Document>> out(docids.size());
  for (const auto& [key, doc] : collector.documents()) {
    if (key >= 1 && key <= out.size()) out[key - 1] = doc;
  }
  remote_document_answers.fetch_add(1, std::memory_order_relaxed);
  return out;
}

}  // namespace issuescope::search

#include "remote_proximity.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <unordered_map>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/index_layout.h"
#include "proximity.h"
#include "serial_codec.h"

namespace issuescope::search {
namespace {

// Bounds on what a peer may ask a shard server to do in one source.
constexpr uint64_t kMaxShards = 4096;
constexpr uint64_t kMaxDocsPerShard = 100000;
constexpr uint64_t kMaxTerms = 256;

}  // namespace

ProximitySource::ProximitySource(std::map<std::string, std::vector<Xapian::docid>> docs,
                                 std::vector<std::string> terms)
    : docs_(std::move(docs)), terms_(std::move(terms)) {
  for (auto& [uuid, ids] : docs_) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  }
  // The bonus f is at most one credit per pair plus the phrase credit.
  set_maxweight(1.0 + kPhraseCredit);
}

void ProximitySource::init(const Xapian::Database& db) {
  db_ = db;
  auto found = docs_.find(db.get_uuid());
  mine_ = found == docs_.end() ? std::vector<Xapian::docid>() : found->second;
  pos_ = 0;
  started_ = false;
  set_maxweight(1.0 + kPhraseCredit);
}

void ProximitySource::next(double /*min_wt*/) {
  if (!started_) {
    started_ = true;
    pos_ = 0;
    return;
  }
  ++pos_;
}

void ProximitySource::skip_to(Xapian::docid did, double /*min_wt*/) {
  started_ = true;
  while (pos_ < mine_.size() && mine_[pos_] < did) ++pos_;
}

double ProximitySource::get_weight() const { return PairProximity(db_, mine_[pos_], terms_); }

ProximitySource* ProximitySource::clone() const { return new ProximitySource(docs_, terms_); }

std::string ProximitySource::get_description() const {
  size_t n = 0;
  for (const auto& [uuid, ids] : docs_) n += ids.size();
  return absl::StrCat("issuescope.ProximitySource(", n, " documents in ", docs_.size(),
                      " shards; ", absl::StrJoin(terms_, " "), ")");
}

std::string ProximitySource::serialise() const {
  SerialWriter w;
  w.Uint(terms_.size());
  for (const std::string& t : terms_) w.Str(t);
  w.Uint(docs_.size());
  for (const auto& [uuid, ids] : docs_) {
    w.Str(uuid);
    w.Uint(ids.size());
    Xapian::docid last = 0;
    for (Xapian::docid id : ids) {  // ascending: deltas, each at least 1
      w.Uint(id - last);
      last = id;
    }
  }
  return w.Take();
}

ProximitySource* ProximitySource::unserialise_with_registry(
    const std::string& serialised, const Xapian::Registry& /*registry*/) const {
  SerialReader r(serialised, "issuescope.ProximitySource");
  const uint64_t n_terms = r.Count();
  if (n_terms > kMaxTerms) throw Xapian::SerialisationError("issuescope.ProximitySource has too many terms");
  std::vector<std::string> terms;
  for (uint64_t i = 0; i < n_terms; ++i) terms.push_back(r.Str());
  const uint64_t n_shards = r.Count();
  if (n_shards > kMaxShards) {
    throw Xapian::SerialisationError("issuescope.ProximitySource names too many shards");
  }
  std::map<std::string, std::vector<Xapian::docid>> docs;
  for (uint64_t s = 0; s < n_shards; ++s) {
    std::string uuid = r.Str();
    const uint64_t n = r.Count();
    if (n > kMaxDocsPerShard) {
      throw Xapian::SerialisationError("issuescope.ProximitySource lists too many documents");
    }
    std::vector<Xapian::docid> ids;
    uint64_t id = 0;
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t delta = r.Uint();
      if (delta == 0 || delta > UINT32_MAX - id) {
        throw Xapian::SerialisationError("issuescope.ProximitySource has a bad document id");
      }
      id += delta;
      ids.push_back(static_cast<Xapian::docid>(id));
    }
    if (!docs.emplace(std::move(uuid), std::move(ids)).second) {
      throw Xapian::SerialisationError("issuescope.ProximitySource names a shard twice");
    }
  }
  r.End();
  return new ProximitySource(std::move(docs), std::move(terms));
}

std::pair<const std::string*, Xapian::docid> RemoteShardLayout::Locate(Xapian::docid did) const {
  const Xapian::docid h = static_cast<Xapian::docid>(servers.size());
  const std::vector<std::string>& shards = servers[(did - 1) % h];
  const Xapian::docid in_server = (did - 1) / h + 1;
  const Xapian::docid n = static_cast<Xapian::docid>(shards.size());
  return {&shards[(in_server - 1) % n], (in_server - 1) / n + 1};
}

absl::StatusOr<RemoteShardLayout> ProbeRemoteShardLayout(const std::string& index_dir) {
  std::ifstream in(index::StubPath(index_dir));
  if (!in) return absl::UnavailableError(absl::StrCat("cannot read ", index::StubPath(index_dir)));
  RemoteShardLayout layout;
  std::set<std::string> seen;
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) {
    const absl::string_view text = absl::StripAsciiWhitespace(line);
    if (text.empty() || text[0] == '#') continue;
    std::vector<std::string> words = absl::StrSplit(text, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (words.size() != 2 || words[0] != "remote") {
      return absl::UnimplementedError(absl::StrCat("stub line '", line, "' is not remote HOST:PORT"));
    }
    const size_t colon = words[1].rfind(':');
    unsigned port = 0;
    if (colon == std::string::npos || colon == 0 ||
        !absl::SimpleAtoi(words[1].substr(colon + 1), &port) || port == 0 || port > 65535) {
      return absl::UnimplementedError(absl::StrCat("stub line '", line, "' is not remote HOST:PORT"));
    }
    std::string uuid;
    try {
      Xapian::Database server = Xapian::Remote::open(words[1].substr(0, colon), port);
      uuid = server.get_uuid();
    } catch (const Xapian::Error& e) {
      return absl::UnavailableError(
          absl::StrCat("shard server ", words[1], ": ", e.get_description()));
    }
    std::vector<std::string> shards = absl::StrSplit(uuid, ':');
    for (const std::string& shard : shards) {
      if (shard.empty() || !seen.insert(shard).second) {
        return absl::UnavailableError(absl::StrCat(
            "shard server ", words[1], " reports shard UUIDs '", uuid,
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
  return out;
}

}  // namespace issuescope::search

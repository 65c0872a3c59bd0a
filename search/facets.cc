#include "facets.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/index_facets.h"
#include "common/index_schema.h"
#include "search/match_split.h"
#include "revision_cache.h"
#include "serial_codec.h"

namespace issuescope::search {
namespace {

// DocumentFacetValues returns the facet values of an indexed document: decoded from
// kFacetsSlot, or, for a document indexed before the slot existed, read from its boolean terms
// (and the year from kCreatedSlot). Throws what Xapian throws.
index::FacetValues DocumentFacetValues(const Xapian::Document& doc) {
  if (std::optional<index::FacetValues> decoded = index::DecodeFacetValues(doc.get_value(index::kFacetsSlot))) {
    return *decoded;
  }
  index::FacetValues values;
  for (Xapian::TermIterator it = doc.termlist_begin(); it != doc.termlist_end(); ++it) {
    const std::string term = *it;
    if (term.empty() || term[0] < 'A' || term[0] > 'Z') continue;  // unprefixed text
    for (const index::FacetInfo& info : index::FacetInfos()) {
      const absl::string_view prefix = info.term_prefix;
      // A longer prefix sharing these letters ("XRS" vs "XR") continues with a capital; values
      // are lower-cased, so a capital after the prefix means another field.
      if (term.size() <= prefix.size() || !absl::StartsWith(term, prefix)) continue;
      const char next = term[prefix.size()];
      if (next >= 'A' && next <= 'Z') continue;
      values[static_cast<size_t>(info.field)].push_back(term.substr(prefix.size()));
    }
  }
  std::vector<std::string>& years = values[static_cast<size_t>(index::FacetField::kYear)];
  const std::string created = doc.get_value(index::kCreatedSlot);
  if (years.empty() && !created.empty()) {
    years.push_back(index::FacetYear(static_cast<int64_t>(Xapian::sortable_unserialise(created))));
  }
  return values;
}


size_t Index(index::FacetField field) { return static_cast<size_t>(field); }

}  // namespace

absl::StatusOr<std::vector<index::FacetField>> ParseFacetFields(
    const google::protobuf::RepeatedPtrField<std::string>& names, absl::string_view what) {
  std::vector<index::FacetField> fields;
  for (const std::string& name : names) {
    const index::FacetInfo* info = index::FindFacet(name);
    if (info == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown ", what, " '", name,
                                                     "'; known: ", index::FacetNames()));
    }
    if (std::find(fields.begin(), fields.end(), info->field) != fields.end()) {
      return absl::InvalidArgumentError(absl::StrCat(what, " '", name, "' is given twice"));
    }
    fields.push_back(info->field);
  }
  return fields;
}

FacetCounter::FacetCounter(std::vector<index::FacetField> fields, uint64_t bound)
    : fields_(std::move(fields)), bound_(std::max<uint64_t>(bound, 1)), counts_(fields_.size()) {
  std::fill(std::begin(slot_of_code_), std::end(slot_of_code_), -1);
  for (size_t i = 0; i < fields_.size(); ++i) {
    slot_of_code_[static_cast<unsigned char>(index::FacetInfos()[Index(fields_[i])].code)] =
        static_cast<int>(i);
  }
}

void FacetCounter::operator()(const Xapian::Document& doc, double /*wt*/) {
  ++seen_;
  if (counted_ >= bound_) return;
  ++counted_;
  Count(doc);
}

void FacetCounter::Count(const Xapian::Document& doc) {
  const std::string encoded = doc.get_value(index::kFacetsSlot);
  if (encoded.empty()) {
    // Indexed before kFacetsSlot existed: read the values from the document's terms.
    const index::FacetValues values = DocumentFacetValues(doc);
    for (size_t i = 0; i < fields_.size(); ++i) {
      for (const std::string& value : values[Index(fields_[i])]) ++counts_[i][value];
    }
    return;
  }
  // The slot holds (code, value, NUL)*: count the values of the requested facets in place.
  const absl::string_view all(encoded);
  size_t pos = 0;
  while (pos < all.size()) {
    size_t end = all.find('\0', pos);
    if (end == absl::string_view::npos) end = all.size();
    const int slot = slot_of_code_[static_cast<unsigned char>(all[pos])];
    if (slot >= 0) {
      absl::flat_hash_map<std::string, int64_t>& counts = counts_[static_cast<size_t>(slot)];
      const absl::string_view value = all.substr(pos + 1, end - pos - 1);
      auto found = counts.find(value);
      if (found != counts.end()) {
        ++found->second;
      } else {
        counts.emplace(std::string(value), 1);
      }
    }
    pos = end + 1;
  }
}

void FacetCounter::Add(const FacetCounter& other) {
  seen_ += other.seen_;
  counted_ += other.counted_;
  for (size_t i = 0; i < fields_.size() && i < other.counts_.size(); ++i) {
    for (const auto& [value, count] : other.counts_[i]) counts_[i][value] += count;
  }
}

namespace {

void WriteFields(const std::vector<index::FacetField>& fields, SerialWriter* w) {
  w->Uint(fields.size());
  for (index::FacetField f : fields) w->Uint(static_cast<uint64_t>(Index(f)));
}

std::vector<index::FacetField> ReadFields(SerialReader* r) {
  std::vector<index::FacetField> fields(r->Count());
  for (index::FacetField& f : fields) {
    const uint64_t i = r->Uint();
    if (i >= index::kFacetFieldCount) {
      throw Xapian::SerialisationError("facet counter names an unknown facet");
    }
    f = index::FacetInfos()[i].field;
  }
  return fields;
}

}  // namespace

FacetCounter* FacetCounter::clone() const { return new FacetCounter(fields_, bound_); }

std::string FacetCounter::serialise() const {
  SerialWriter w;
  w.Uint(bound_);
  WriteFields(fields_, &w);
  return w.Take();
}

FacetCounter* FacetCounter::unserialise(const std::string& serialised,
                                        const Xapian::Registry& /*context*/) const {
  SerialReader r(serialised, "facet counter");
  const uint64_t bound = r.Uint();
  std::vector<index::FacetField> fields = ReadFields(&r);
  r.End();
  return new FacetCounter(std::move(fields), bound);
}

std::string FacetCounter::serialise_results() const {
  SerialWriter w;
  w.Uint(seen_);
  w.Uint(counted_);
  w.Uint(counts_.size());
  for (const auto& counts : counts_) {
    w.Uint(counts.size());
    for (const auto& [value, count] : counts) {
      w.Str(value);
      w.Uint(static_cast<uint64_t>(count));
    }
  }
  return w.Take();
}

void FacetCounter::merge_results(const std::string& serialised) {
  SerialReader r(serialised, "facet counts");
  seen_ += r.Uint();
  counted_ += r.Uint();
  const uint64_t fields = r.Count();
  if (fields != counts_.size()) {
    throw Xapian::SerialisationError("facet counts of another number of facets");
  }
  for (auto& counts : counts_) {
    for (uint64_t n = r.Count(); n > 0; --n) {
      std::string value = r.Str();
      counts[std::move(value)] += static_cast<int64_t>(r.Uint());
    }
  }
  r.End();
}

FacetCounts FacetCounter::counts() const {
  FacetCounts out;
  for (size_t i = 0; i < fields_.size(); ++i) {
    std::map<std::string, int64_t>& values = out[fields_[i]];
    for (const auto& [value, count] : counts_[i]) values[value] = count;
  }
  return out;
}

namespace {

// TermCounts counts one facet over the whole database from its terms' frequencies.
std::map<std::string, int64_t> TermCounts(const Xapian::Database& db, index::FacetField field) {
  std::map<std::string, int64_t> values;
  const std::string prefix = index::FacetInfos()[Index(field)].term_prefix;
  for (Xapian::TermIterator it = db.allterms_begin(prefix); it != db.allterms_end(prefix); ++it) {
    const std::string term = *it;
    if (term.size() <= prefix.size()) continue;
    // A capital after the prefix is another field's longer prefix ("XRS…" under "XR").
    const char next = term[prefix.size()];
    if (next >= 'A' && next <= 'Z') continue;
    const Xapian::doccount freq = it.get_termfreq();
    if (freq > 0) values[term.substr(prefix.size())] = freq;
  }
  return values;
}

}  // namespace

FacetCounts CountFacetsFromTerms(const Xapian::Database& db,
                                 const std::vector<index::FacetField>& fields) {
  // Cached per index revision (RevisionKey): walking every author term of every shard took
  // milliseconds per query, and the answer changes only with a commit.
  static auto* cache = new RevisionCache<index::FacetField, std::map<std::string, int64_t>>();
  const std::string revision = RevisionKey(db);
  FacetCounts counts;
  for (index::FacetField field : fields) {
    counts[field] = cache->Get(revision, field, [&] { return TermCounts(db, field); });
  }
  return counts;
}

void ToFacets(const FacetCounts& counts, const std::vector<index::FacetField>& fields, int limit,
              google::protobuf::RepeatedPtrField<v1::Facet>* out) {
  for (index::FacetField field : fields) {
    v1::Facet* facet = out->Add();
    facet->set_name(index::FacetInfos()[Index(field)].name);
    auto found = counts.find(field);
    if (found == counts.end()) continue;
    std::vector<std::pair<std::string, int64_t>> values(found->second.begin(),
                                                        found->second.end());
    std::sort(values.begin(), values.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    facet->set_distinct_values(static_cast<int64_t>(values.size()));
    for (size_t i = 0; i < values.size() && i < static_cast<size_t>(limit); ++i) {
      v1::FacetValue* v = facet->add_values();
      v->set_value(values[i].first);
      v->set_count(values[i].second);
    }
  }
}

AggregateCounter::AggregateCounter(std::vector<index::FacetField> dimensions)
    : dimensions_(std::move(dimensions)) {}

void AggregateCounter::operator()(const Xapian::Document& doc, double /*wt*/) {
  ++seen_;
  const index::FacetValues values = DocumentFacetValues(doc);
  // Cross product of the dimensions' values; "" stands for a dimension without a value.
  std::vector<std::vector<std::string>> keys = {{}};
  for (index::FacetField field : dimensions_) {
    const std::vector<std::string>& own = values[Index(field)];
    const std::vector<std::string> options = own.empty() ? std::vector<std::string>{""} : own;
    std::vector<std::vector<std::string>> next;
    next.reserve(keys.size() * options.size());
    for (const std::vector<std::string>& key : keys) {
      for (const std::string& option : options) {
        next.push_back(key);
        next.back().push_back(option);
      }
    }
    keys = std::move(next);
  }
  for (const std::vector<std::string>& key : keys) ++rows_[key];
}

void AggregateCounter::Add(const AggregateCounter& other) {
  seen_ += other.seen_;
  for (const auto& [key, count] : other.rows_) rows_[key] += count;
}

AggregateCounter* AggregateCounter::clone() const { return new AggregateCounter(dimensions_); }

std::string AggregateCounter::serialise() const {
  SerialWriter w;
  WriteFields(dimensions_, &w);
  return w.Take();
}

AggregateCounter* AggregateCounter::unserialise(const std::string& serialised,
                                                const Xapian::Registry& /*context*/) const {
  SerialReader r(serialised, "aggregate counter");
  std::vector<index::FacetField> dimensions = ReadFields(&r);
  r.End();
  return new AggregateCounter(std::move(dimensions));
}

std::string AggregateCounter::serialise_results() const {
  SerialWriter w;
  w.Uint(seen_);
  w.Uint(rows_.size());
  for (const auto& [values, count] : rows_) {
    w.Uint(values.size());
    for (const std::string& v : values) w.Str(v);
    w.Uint(static_cast<uint64_t>(count));
  }
  return w.Take();
}

void AggregateCounter::merge_results(const std::string& serialised) {
  SerialReader r(serialised, "aggregate rows");
  seen_ += r.Uint();
  for (uint64_t n = r.Count(); n > 0; --n) {
    std::vector<std::string> values(r.Count());
    for (std::string& v : values) v = r.Str();
    if (values.size() != dimensions_.size()) {
      throw Xapian::SerialisationError("aggregate rows of another number of dimensions");
    }
    rows_[std::move(values)] += static_cast<int64_t>(r.Uint());
  }
  r.End();
}

void AggregateCounter::Fill(v1::AggregateResponse* response) const {
  for (index::FacetField field : dimensions_) {
    response->add_dimensions(index::FacetInfos()[Index(field)].name);
  }
  for (const auto& [values, count] : rows_) {
    v1::AggregateRow* row = response->add_rows();
    for (const std::string& v : values) row->add_values(v);
    row->set_count(count);
  }
}

}  // namespace issuescope::search

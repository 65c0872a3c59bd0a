// Facet counting and aggregation over the matches of a query: a Xapian::MatchSpy sees every
// matching document when the Enquire is run with check_at_least at least the number of matches,
// and reads each one's facet values (common/index_facets.h: one value slot per document).
//
// FacetCounter counts the first `bound` matches it sees and says how many it counted. The
// searcher lets it ride along in the pass that ranks the page when the matches probably fit
// the bound; for broader queries it runs the query restricted to an evenly spread sample of
// document ids (search/docid_sample.h) sized to hold about `bound` matches, so every part of
// the index — every repository, whatever order it was indexed in — is sampled alike and the
// work stays proportional to the bound. CountFacetsFromTerms gives exact counts of the whole index from term
// frequencies (for queries that match everything). AggregateCounter counts every match by up to
// three dimensions. A spy belongs to one Enquire in one thread; a query split over several cores
// (search/match_split.h) has one spy per part, added up with Add afterwards.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "common/index_facets.h"
#include "google/protobuf/repeated_field.h"
#include "issuescope/v1/search.pb.h"
#include "xapian.h"

namespace issuescope::search {

// kDefaultFacetLimit is the number of values per facet when a request asks for 0.
inline constexpr int kDefaultFacetLimit = 10;
// kMaxFacetLimit is the largest facet_limit accepted.
inline constexpr int kMaxFacetLimit = 1000;
// kMaxDimensions is the most dimensions an aggregation takes.
inline constexpr int kMaxDimensions = 3;

// ParseFacetFields maps facet names ("repo", "label", …) to fields. INVALID_ARGUMENT naming
// the unknown or repeated name and listing the known ones. `what` names the request field.
absl::StatusOr<std::vector<index::FacetField>> ParseFacetFields(
    const google::protobuf::RepeatedPtrField<std::string>& names, absl::string_view what);

// FacetCounts is the count of every value of every counted facet.
using FacetCounts = std::map<index::FacetField, std::map<std::string, int64_t>>;

// FacetCounter is a MatchSpy counting facet values of at most `bound` of the matches it sees.
class FacetCounter : public Xapian::MatchSpy {
 public:
  // FacetCounter counts `fields` over the first `bound` matches it sees (bound > 0).
  FacetCounter(std::vector<index::FacetField> fields, uint64_t bound);

  // operator() is called by the matcher for each matching document.
  void operator()(const Xapian::Document& doc, double wt) override;

  // seen is the number of documents the matcher passed; counted how many were counted.
  uint64_t seen() const { return seen_; }
  uint64_t counted() const { return counted_; }
  // counts are the counts so far.
  FacetCounts counts() const;
  // Add adds the seen and counted documents and the counts of `other` (a counter of the same
  // fields over other matches, e.g. another part of a MatchSplit). Each counter applied its
  // bound to what it saw.
  void Add(const FacetCounter& other);

  // For Xapian's remote protocol (search/remote_registry.h): a shard server counts its own
  // matches with a copy made from serialise() and sends its counts back (serialise_results),
  // which merge_results adds here; each server applies the bound to its matches, as the parts
  // of a MatchSplit do. Malformed bytes throw Xapian::SerialisationError.
  FacetCounter* clone() const override;
  std::string name() const override { return "issuescope.FacetCounter"; }
  std::string serialise() const override;
  FacetCounter* unserialise(const std::string& serialised,
                            const Xapian::Registry& context) const override;
  std::string serialise_results() const override;
  void merge_results(const std::string& serialised) override;

 private:
  // Count adds one document's values.
  void Count(const Xapian::Document& doc);

  const std::vector<index::FacetField> fields_;
  const uint64_t bound_;
  uint64_t seen_ = 0;
  uint64_t counted_ = 0;
  // slot_of_code_[c] is the index in fields_ of the facet whose slot code is c, or -1.
  int slot_of_code_[256];
  // counts_[i] counts the values of fields_[i].
  std::vector<absl::flat_hash_map<std::string, int64_t>> counts_;
};

// CountFacetsFromTerms counts `fields` over the whole database from the term frequencies of
// their boolean terms: exact, and cheap (no document is read; cached per index revision, see
// RevisionKey). Throws what Xapian throws.
FacetCounts CountFacetsFromTerms(const Xapian::Database& db,
                                 const std::vector<index::FacetField>& fields);

// ToFacets renders counts as Facet messages in the order of `fields`: most frequent first
// (ties by value), at most `limit` values each, with the number of distinct values.
void ToFacets(const FacetCounts& counts, const std::vector<index::FacetField>& fields, int limit,
              google::protobuf::RepeatedPtrField<v1::Facet>* out);

// AggregateCounter is a MatchSpy counting every document it sees by the cross product of its
// values of up to three dimensions ("" for a dimension without a value).
class AggregateCounter : public Xapian::MatchSpy {
 public:
  // AggregateCounter groups by `dimensions` (1 to kMaxDimensions).
  explicit AggregateCounter(std::vector<index::FacetField> dimensions);

  // operator() is called by the matcher for each matching document.
  void operator()(const Xapian::Document& doc, double wt) override;

  // seen is the number of documents counted.
  uint64_t seen() const { return seen_; }
  // Add adds the rows of `other` (a counter of the same dimensions over other matches).
  void Add(const AggregateCounter& other);

  // For Xapian's remote protocol, as FacetCounter's.
  AggregateCounter* clone() const override;
  std::string name() const override { return "issuescope.AggregateCounter"; }
  std::string serialise() const override;
  AggregateCounter* unserialise(const std::string& serialised,
                                const Xapian::Registry& context) const override;
  std::string serialise_results() const override;
  void merge_results(const std::string& serialised) override;
  // Fill writes the rows, sorted by values, and the dimension names into `response`.
  void Fill(v1::AggregateResponse* response) const;

 private:
  const std::vector<index::FacetField> dimensions_;
  uint64_t seen_ = 0;
  std::map<std::vector<std::string>, int64_t> rows_;
};

}  // namespace issuescope::search

// Facet counting and aggregation over the matches of a query, exactly (no estimates): a
// Xapian::MatchSpy sees every matching document when the Enquire is run with check_at_least at
// least the number of matches, and reads each one's facet values (common/index_facets.h).
//
// FacetCounter counts at most `bound` documents (the first ones the matcher passes, roughly in
// document order) and only counts the rest, so a broad query costs a bounded amount of facet
// work and says how much it counted; CountFacetsFromTerms gives exact counts of the whole index
// from term frequencies (for queries that match everything). AggregateCounter counts every
// match by up to three dimensions. A spy belongs to one Enquire in one thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

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

// FacetCounter is a MatchSpy counting facet values of the first `bound` matches it sees.
class FacetCounter : public Xapian::MatchSpy {
 public:
  // FacetCounter counts `fields` over at most `bound` documents.
  FacetCounter(std::vector<index::FacetField> fields, uint64_t bound);

  // operator() is called by the matcher for each matching document.
  void operator()(const Xapian::Document& doc, double wt) override;

  // seen is the number of documents the matcher passed; counted how many were counted.
  uint64_t seen() const { return seen_; }
  uint64_t counted() const { return counted_; }
  // counts are the counts so far.
  const FacetCounts& counts() const { return counts_; }

 private:
  const std::vector<index::FacetField> fields_;
  const uint64_t bound_;
  uint64_t seen_ = 0;
  uint64_t counted_ = 0;
  FacetCounts counts_;
};

// CountFacetsFromTerms counts `fields` over the whole database from the term frequencies of
// their boolean terms: exact, and cheap (no document is read). Throws what Xapian throws.
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
  // Fill writes the rows, sorted by values, and the dimension names into `response`.
  void Fill(v1::AggregateResponse* response) const;

 private:
  const std::vector<index::FacetField> dimensions_;
  uint64_t seen_ = 0;
  std::map<std::vector<std::string>, int64_t> rows_;
};

}  // namespace issuescope::search

// The qualifiers of the query language (`repo:`, `label:`, `is:`, `created:`, `sort:` …): one
// table maps each qualifier name to the function that turns its values into a boolean Xapian
// filter (terms and value ranges of common/index_schema.h) or, for `sort:`, into a sort order.
// A new qualifier is one new table entry in qualifiers.cc. Plain functions; thread-safe.
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "search/query_lexer.h"
#include "xapian.h"

namespace issuescope::search {

// SortField is what hits are ordered by.
enum class SortField { kRelevance, kCreated, kUpdated, kComments };

// SortOrder is the order requested with `sort:` (or the default).
struct SortOrder {
  // Field to order by.
  SortField field = SortField::kRelevance;
  // True for `-asc`; descending otherwise.
  bool ascending = false;
  // True when the query named the order with `sort:`.
  bool is_explicit = false;
};

// QualifierResult is what one qualifier contributes to a query: a filter, or a sort order.
struct QualifierResult {
  // Boolean filter (weight 0); an empty Query for directives such as `sort:`.
  Xapian::Query filter;
  // Set by `sort:` only.
  std::optional<SortOrder> sort;
};

// KnownQualifiers returns the qualifier names, comma-separated, for error messages.
std::string KnownQualifiers();

// BuildQualifier turns a kQualifier token into its filter or sort order. INVALID_ARGUMENT
// naming the qualifier and column for an unknown qualifier, an empty value, a bad `is:`,
// `tracker:`, `repo:` or `sort:` value, or a bad date.
absl::StatusOr<QualifierResult> BuildQualifier(const Token& token);

// DateFilter makes the value-slot filter of a `created:`/`updated:` value: `>D`, `>=D`, `<D`,
// `<=D`, `A..B` (either side may be `*`) or a plain `D` (that whole day, or that second for a
// date-time). D is YYYY-MM-DD (UTC day) or an RFC 3339 date-time (UTC when no offset given).
absl::StatusOr<Xapian::Query> DateFilter(Xapian::valueno slot, absl::string_view qualifier,
                                         const QualifierValue& value);

// BooleanFilter wraps a query so it filters without adding weight (OP_SCALE_WEIGHT by 0).
Xapian::Query BooleanFilter(const Xapian::Query& query);

}  // namespace issuescope::search

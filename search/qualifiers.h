// The qualifiers of the query language (`repo:`, `label:`, `is:`, `created:`, `sort:` …): one
// table maps each qualifier name to the function that turns its values into a boolean Xapian
// filter (terms and value ranges of common/index_schema.h) or, for `sort:`, into a sort order.
// A new qualifier is one new table entry in qualifiers.cc. Plain functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/index_text.h"
#include "query_lexer.h"
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

// QualifierResult is what one qualifier contributes to a query: a filter, a sort order, or the
// text fields of its AND-group.
struct QualifierResult {
  // Boolean filter (weight 0); an empty Query for the directives `sort:` and `in:`.
  Xapian::Query filter;
  // Set by `sort:` only.
  std::optional<SortOrder> sort;
  // Set by `in:` only: the fields the free text of the same AND-group is searched in.
  std::vector<index::TextField> text_fields;
};

// KnownQualifiers returns the qualifier names, comma-separated, for error messages.
std::string KnownQualifiers();

// BuildQualifier turns a kQualifier token into its filter, sort order or text fields. `db`
// expands the short forms of `theme:` and `subtheme:` (the last segment of an id). Returns
// INVALID_ARGUMENT naming the qualifier, the column and what was expected for an unknown
// qualifier (listing the known ones), an empty value, a value a qualifier does not take, a
// bad date or number, or a list given to a single-valued qualifier. Throws what Xapian throws.
absl::StatusOr<QualifierResult> BuildQualifier(const Token& token, const Xapian::Database& db);

// DateFilter makes the value-slot filter of a `created:`/`updated:` value: `>D`, `>=D`, `<D`,
// `<=D`, `A..B` (either side may be `*`) or a plain `D` (that whole day, or that second for a
// date-time). D is YYYY-MM-DD (UTC day) or an RFC 3339 date-time (UTC when no offset given).
// With `db` (optional), a range over the created, updated or closed time of an index whose
// every document with that time has its month (and, for created, year) term is answered from
// those terms: the
// years and months wholly inside the range are their posting lists, and only the months at its
// two ends check values — the matcher leapfrogs posting lists instead of reading a value per
// candidate. The matches are the same.
absl::StatusOr<Xapian::Query> DateFilter(Xapian::valueno slot, absl::string_view qualifier,
                                         const QualifierValue& value,
                                         const Xapian::Database* db = nullptr);

// NumberFilter makes the value-slot filter of a `comments:`/`reactions:` value: `>N`, `>=N`,
// `<N`, `<=N`, `=N`, `N`, or `A..B` (either side may be `*`), N non-negative integers.
absl::StatusOr<Xapian::Query> NumberFilter(Xapian::valueno slot, absl::string_view qualifier,
                                           const QualifierValue& value);

// BooleanFilter wraps a query so it filters without adding weight (OP_SCALE_WEIGHT by 0).
Xapian::Query BooleanFilter(const Xapian::Query& query);

}  // namespace issuescope::search

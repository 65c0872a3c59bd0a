// QueryParser turns a query of the issuescope query language (docs/QUERY.md) into a Xapian
// query. Its own recursive-descent parser handles the structure (OR, AND, NOT/-, parentheses)
// and the qualifiers (search/qualifiers.h); each free-text atom (word, `prefix*`, "phrase",
// CJK text) becomes terms with common/index_text.h's TextQuery, the same tokens and stems the
// indexer wrote; a ranked query adds the title bonus (TitleBonusQuery). Qualifiers are boolean
// filters of weight 0, combined with the text through OP_FILTER / OP_AND_NOT, so scores stay the
// BM25 weight of the text.
//
// Grammar (operators upper case; `and`, `or`, `not` are words):
//   query   := or_expr
//   or_expr := and_expr ("OR" and_expr)*
//   and_expr:= unary (["AND"] unary)*
//   unary   := ("NOT" | "-") unary | atom
//   atom    := "(" or_expr ")" | qualifier | "quoted phrase" | word
//
// `in:title|body|comments` scopes the free text of the AND-group it stands in (the terms joined
// by AND or juxtaposition up to the next OR or closing parenthesis), including text inside that
// group's parentheses unless they have an `in:` of their own. `a in:title OR b` searches a in
// titles and b everywhere.
//
// A QueryParser borrows the Database it expands wildcards against; it is cheap to make, so make
// one per query. Not thread-safe (neither is the Database); use one per thread.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "qualifiers.h"
#include "xapian.h"

namespace issuescope::search {

// kMaxQueryBytes is the longest query accepted (longer → INVALID_ARGUMENT).
inline constexpr size_t kMaxQueryBytes = 4096;
// kMaxQueryWildcardTerms bounds the words all the wildcards of a query expand to together (each
// wildcard counts the words it expands to, at most kMaxWildcardTerms; a scoped query
// counts each field it searches). More → INVALID_ARGUMENT naming the limit: hundreds of short
// wildcards (`a* OR b* OR …`) would otherwise merge tens of thousands of posting lists.
inline constexpr unsigned kMaxQueryWildcardTerms = 1000;

// ParsedQuery is a query ready for Xapian::Enquire.
struct ParsedQuery {
  // The query; never empty (MatchAll, as a weightless filter, when nothing constrains).
  Xapian::Query query;
  // True when free text contributes a score; false for listings (qualifiers/negations only).
  bool has_text = false;
  // True when nothing constrains the query (empty, or only `sort:`): it matches every document.
  bool match_all = false;
  // The order asked for with `sort:`, or the default (relevance, not explicit).
  SortOrder sort;
  // True when some AND-group joins two or more free-text atoms, so that the query can be
  // relaxed (ParseOptions::relax) when no issue has all of them.
  bool relaxable = false;
  // The parts a hit's score is made of, labelled (`text "kv"`, `title "kv"`): each free-text
  // atom's query and each part of the title bonus. SearchRequest.explain weighs each against
  // the hit. Only with ParseOptions::explain.
  std::vector<std::pair<std::string, Xapian::Query>> explain_parts;
  // The positional terms of the unquoted words, in order, when the query is ranked by
  // relevance and has two or more (search/proximity.h): FetchPage re-ranks the best matches
  // by how close together they hold them. Empty otherwise.
  std::vector<std::string> proximity_terms;
};

// ParseOptions change how a query is read.
struct ParseOptions {
  // The free-text atoms of each AND-group are joined by OR instead of AND (filters, phrases and
  // negations stay as they are): issues with some of the words, ranked by how well they match.
  // The searcher uses it when no issue has all the words. Default: false.
  bool relax = false;
  // Fill ParsedQuery::explain_parts (SearchRequest.explain). Default: false.
  bool explain = false;
};

// QueryParser parses queries; see the file comment.
class QueryParser {
 public:
  // QueryParser expands wildcards against `db`, which must outlive it.
  explicit QueryParser(const Xapian::Database& db);

  // Parse parses `query`. INVALID_ARGUMENT with the 1-based column and what was expected for
  // an unknown qualifier, an empty qualifier value, an unbalanced parenthesis or quote, a bad
  // date or `is:` value, a dangling operator, text with nothing searchable, wildcards that
  // expand to more than kMaxQueryWildcardTerms words, or a query longer than kMaxQueryBytes.
  // Throws nothing.
  absl::StatusOr<ParsedQuery> Parse(absl::string_view query, ParseOptions options = {}) const;

 private:
  const Xapian::Database& db_;
};

}  // namespace issuescope::search

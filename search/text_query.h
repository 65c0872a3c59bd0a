// The query side of the free-text term scheme (common/index_text.h writes the terms; this reads
// them): the query of one free-text atom, the title bonus of ranked queries, the field scope of
// in:body / in:comments / in:code / in:logs, and the count of words wildcards expand to. The
// search service's own (the indexer links none of it).
//
// Plain functions over a Xapian::Database the caller owns; thread-compatible (Xapian handles
// are not shared between threads).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/index_text.h"
#include "xapian.h"

namespace issuescope::search {

using index::TextField;

// kExactFormBoost scales the whole-identifier term of a compound query token.
inline constexpr double kExactFormBoost = 0.5;
// kTitleBoost scales the title bonus of ranked queries.
inline constexpr double kTitleBoost = 1.0;
// kMaxWildcardTerms bounds the words a wildcard expands to (the most frequent).
inline constexpr Xapian::termcount kMaxWildcardTerms = 200;

// WildcardExpansion counts the words the wildcards (OP_WILDCARD) of `query` expand to in `db`,
// each at most kMaxWildcardTerms as the match expands it; it stops counting (and reading the
// term list) once the count passes `limit`, so its cost is bounded by `limit` terms plus one
// seek per wildcard. Throws what Xapian throws.
Xapian::termcount WildcardExpansion(const Xapian::Query& query, const Xapian::Database& db,
                                    Xapian::termcount limit);

// TextQuery is the query of one free-text atom of a search: an unquoted word as the user typed
// it (`kv`, `pin_memory()`, `RuntimeError`, `torch==2.1.0`, `内存不足`, `tokeni*`), or with
// `phrase` the words of a quoted phrase. Unquoted words match all their forms (stems); a
// compound matches its parts in sequence (and weighs more where the text has the exact form);
// a phrase matches exactly. kTitle searches the title terms, every other field the all-text
// terms (kBody and kComments then need ScopeToField). An empty query when the text holds no
// word.
absl::StatusOr<Xapian::Query> TextQuery(absl::string_view text, bool phrase, TextField field,
                                        const Xapian::Database& db);

// TitleBonusQuery is the bonus a ranked query adds (OP_AND_MAYBE) for its words in the title:
// each word's title term (stemmed), scaled by kTitleBoost. `words` are the unquoted free-text
// atoms of the query. Empty when there are none.
Xapian::Query TitleBonusQuery(const std::vector<std::string>& words);

// TitleBonusParts are the parts of TitleBonusQuery(words), each scaled as in it, labelled for
// explanations (`title "kv"`); their weights add up to the bonus's.
std::vector<std::pair<std::string, Xapian::Query>> TitleBonusParts(
    const std::vector<std::string>& words);

// ScopeToField restricts `text`, a query parsed for TextField::kAll, to the body, the comments,
// the code blocks or the logs (`field`; kAll and kTitle return `text` unchanged): each term, phrase and wildcard
// of it must occur inside that field (a stem matches through its surface forms). Weights stay
// those of the all-text terms. Document-level checks read positions, so a scoped query costs
// more per match than an unscoped one. `db` expands stems and wildcards.
Xapian::Query ScopeToField(const Xapian::Query& text, TextField field, const Xapian::Database& db);

// RegisterTextQuerySources adds the posting sources of text queries (field scopes) to a
// registry for Xapian's remote protocol (search/remote_registry.h).
void RegisterTextQuerySources(Xapian::Registry* registry);

}  // namespace issuescope::search

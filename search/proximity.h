// Proximity: the re-ranking step that puts issues holding a multi-word query's words next to
// each other, in the query's order, above issues that hold them apart. BM25 weighs words one
// by one: for `kv cache` an issue whose pasted logs say "kv" and "cache" far apart scores like
// one titled "KV cache ...". Xapian 1.4 cannot put a phrase on the optional side of a pruned
// ranking pass (it defers positional checks; match_split_test), so the check runs after the
// pass, on the first ProximityWindow matches only, reading their position lists.
//
// The bonus of a document: f is the fraction of the query's neighbouring word pairs
// (t_i, t_i+1) that the document holds adjacent and in order (full credit) or within
// kNearDistance positions either way (kNearCredit), anywhere in the all-text positions (title,
// body, comments; a phrase never spans two fields or sections), plus kPhraseCredit when the
// whole query occurs as one phrase. Its weight becomes weight × (1 + kProximityWeight × f):
// at most 2× for the whole phrase. docs/RELEVANCE.md measures the constants (tuned on the
// relevance benchmark's seed 14, checked on the held-out seed 15).
//
// Plain functions; thread-safe for distinct Database handles.
#pragma once

#include <string>
#include <vector>

#include "xapian.h"

namespace issuescope::search {

// kProximityWindow is how many of the best matches are re-ranked.
inline constexpr size_t kProximityWindow = 50;
// kProximityWeight scales the bonus: a document with every pair adjacent weighs
// (1 + kProximityWeight)× its BM25 weight, with the whole phrase (1 + 2 × kProximityWeight)×.
inline constexpr double kProximityWeight = 0.5;
// kNearDistance and kNearCredit: a pair within this many positions (not adjacent in order)
// earns this much of a pair's credit.
inline constexpr unsigned kNearDistance = 3;
inline constexpr double kNearCredit = 0.5;
// kPhraseCredit is added to f when the whole query occurs as one phrase.
inline constexpr double kPhraseCredit = 1.0;
// kMaxPositionsRead bounds the positions read per term and document (a word repeated
// thousands of times in a pasted log).
inline constexpr size_t kMaxPositionsRead = 4096;

// ProximityTerms are the positional terms of a query's unquoted words (excluded ones left out),
// in the query's order; words of different OR branches or groups are chained like the rest:
// each word's token parts (`pin_memory()` gives pin, memory), lower-cased, as the all-text
// posting lists hold them. Empty when fewer than two.
std::vector<std::string> ProximityTerms(const std::vector<std::string>& words);

// PairProximity is f above for document `did`, in [0, 1 + kPhraseCredit] (0 when `terms`
// has fewer than two entries; a document that is gone earns 0). Throws what Xapian throws except for a term the document lacks (no credit) and
// DatabaseModifiedError, which it rethrows (the searcher reopens and retries).
double PairProximity(const Xapian::Database& db, Xapian::docid did,
                     const std::vector<std::string>& terms);

// ProximityWeighted is `weight` with the bonus of proximity `f`.
inline double ProximityWeighted(double weight, double f) {
  return weight * (1.0 + kProximityWeight * f);
}

}  // namespace issuescope::search

// Pager runs a parsed query for one page of hits, in the query's order, starting at a
// PageCursor (search/page_token.h), and says where the next page starts. Search pages through
// results with it one request at a time; Export with it chunk by chunk, so memory stays
// bounded however many hits a query has. Also counts matches exactly (with optional spies).
// Plain functions over a Database the caller owns and does not share during the call.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "issuescope/v1/search.pb.h"
#include "search/match_split.h"
#include "page_token.h"
#include "query_parser.h"
#include "remote_proximity.h"
#include "xapian.h"

namespace issuescope::search {

// PageOptions says what FetchPage returns besides the hits.
struct PageOptions {
  // Hits per page (> 0).
  int size = 20;
  // Compute the exact number of matches of the whole query (Page::total). On a first page
  // (no keyset cursor) it is counted in the same pass that ranks the page (every match is
  // weighed once), except for a relevance-ranked disjunction of terms (a word over the text
  // fields, ORed words, wildcards; with or without the title bonus, which decides no match):
  // ranked with pruning, then counted by a boolean pass (without the bonus) unless
  // the ranking pass already knows the exact number. Later pages of value-sorted results are
  // counted by a boolean pass. Default: false.
  bool count_total = false;
  // Bound on the work of counting: with count_total, the total is exact when the query has at
  // most this many matches, and otherwise Xapian's estimate after looking at (at least) this
  // many (Page::total_exact false). 0: always exact. Default: 0.
  uint64_t count_bound = 0;
  // Spies to pass every match to when counting (only with count_total; not owned): none, or
  // one per part of the MatchSplit, each seeing its part's matches. Default: none.
  std::vector<Xapian::MatchSpy*> spies;
  // A query sorted by created or updated time and estimated to match at least this many
  // documents is paged by walking the month bucket terms in sort order (one month's matches
  // sorted at a time) instead of sorting every match; its total is then counted apart
  // (bounded). Not with a spy. Default: 5000 (tests set 0 to walk always, or a huge number).
  uint64_t bucket_walk_min_matches = 5000;
  // Sort by a field with its sort key slot (index::kCreatedSortSlot…, the same order) instead
  // of a Xapian::MultiValueKeyMaker, which Xapian's remote protocol cannot carry: set for an
  // index with remote shards. Such an index must be of the current scheme (kTextScheme), or a
  // sorted query is FAILED_PRECONDITION. Default: false.
  bool sort_by_key_slots = false;
  // How the index's remote shards number their documents (an index whose stub names only
  // shard servers): the proximity re-ranking asks the servers for its bonuses in one match
  // (search/remote_proximity.h) instead of reading position lists over the network. Not owned;
  // null: read them. Default: null.
  const RemoteShardLayout* remote_layout = nullptr;
  // Highlighted snippets in the hits. Default: true.
  bool snippets = true;
  // Length of snippets in bytes.
  size_t snippet_bytes = 200;
  // Fill SearchHit.explain from ParsedQuery::explain_parts. Default: false.
  bool explain = false;
};

// Page is one page of hits.
struct Page {
  std::vector<v1::SearchHit> hits;
  // Number of matches of the query, when PageOptions::count_total: exact, or an estimate when
  // total_exact is false (more matches than PageOptions::count_bound).
  std::optional<int64_t> total;
  bool total_exact = true;
  // Where the next page starts; nullopt on the last page.
  std::optional<PageCursor> next;
};

// FetchPage returns the page of `parsed` that starts at `cursor`. Throws what Xapian throws;
// DATA_LOSS for a document whose data is not an issue. With a MatchSplit of several parts the
// ranking pass (and any count) runs on all of them in parallel and their ranked lists are
// merged: the same hits in the same order as one pass, in less time on an idle machine. Each
// part needs its own parse of the query (`parts[i]` parsed against split.db(i)): Xapian's
// reference counts are not atomic, so threads must not share Query objects. INTERNAL when
// `parts` or PageOptions::spies (unless empty) do not have one entry per part.
absl::StatusOr<Page> FetchPage(const Xapian::Database& db, const ParsedQuery& parsed,
                               const PageCursor& cursor, const PageOptions& options);
absl::StatusOr<Page> FetchPage(const MatchSplit& split, const std::vector<ParsedQuery>& parts,
                               const PageCursor& cursor, const PageOptions& options);

// CountMatches returns the exact number of matches of `query`, passing each to `spy` (may be
// null). Throws what Xapian throws.
int64_t CountMatches(const Xapian::Database& db, const Xapian::Query& query,
                     Xapian::MatchSpy* spy);
// PartQueries returns the query of every part's parse, for CountMatches over a split.
std::vector<Xapian::Query> PartQueries(const std::vector<ParsedQuery>& parts);

// CountMatches over a split counts the matches of `queries[i]` (one query object per part, as
// for FetchPage) in part i, in parallel, passing them to `spies[i]` (`spies` empty or one per
// part); with `fraction` < 1 only those in an evenly spread sample of that fraction of the
// document ids (DocidSample). Throws what Xapian throws.
int64_t CountMatches(const MatchSplit& split, const std::vector<Xapian::Query>& queries,
                     const std::vector<Xapian::MatchSpy*>& spies, double fraction = 1.0);

// MatchCount is a number of matches, exact or estimated.
struct MatchCount {
  int64_t count = 0;
  bool exact = true;
};

// CountMatchesBounded counts the matches of `query` looking at no more than about `bound` of
// them (0: all): exact when there are at most `bound`, else Xapian's estimate. Throws what
// Xapian throws.
MatchCount CountMatchesBounded(const Xapian::Database& db, const Xapian::Query& query,
                               uint64_t bound);
MatchCount CountMatchesBounded(const MatchSplit& split, const std::vector<Xapian::Query>& queries,
                               uint64_t bound);

// FillHit copies the fields of an indexed issue into a hit (no score, no snippet; tags without
// their evidence, which GetIssue returns).
void FillHit(const v1::IssueWithComments& issue, v1::SearchHit* hit);

}  // namespace issuescope::search

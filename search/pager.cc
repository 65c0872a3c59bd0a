#include "pager.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"

#include "common/index_text.h"
#include "common/index_document.h"
#include "common/index_schema.h"
#include "common/repo_slug.h"
#include "common/status_macros.h"
#include "docid_sample.h"
#include "search/full_coverage.h"
#include "search/match_split.h"
#include "proximity.h"
#include "remote_proximity.h"
#include "ranking_weight.h"
#include "snippet.h"

namespace issuescope::search {
namespace {

// SortKeySlot is the slot of index::SortKey(field's value, number) (PageOptions::sort_by_key_slots).
Xapian::valueno SortKeySlot(SortField field) {
  switch (field) {
    case SortField::kUpdated: return index::kUpdatedSortSlot;
    case SortField::kComments: return index::kCommentsSortSlot;
    default: return index::kCreatedSortSlot;
  }
}

Xapian::valueno SortSlot(SortField field) {
  switch (field) {
    case SortField::kUpdated: return index::kUpdatedSlot;
    case SortField::kComments: return index::kCommentsSlot;
    default: return index::kCreatedSlot;
  }
}

// EffectiveSort is the field hits are ordered by: `sort:` if given, else relevance for text
// and newest created first for listings.
SortField EffectiveSort(const ParsedQuery& parsed) {
  if (parsed.sort.is_explicit) return parsed.sort.field;
  return parsed.has_text ? SortField::kRelevance : SortField::kCreated;
}

Xapian::Query Equal(Xapian::valueno slot, const std::string& value) {
  return Xapian::Query(Xapian::Query::OP_VALUE_RANGE, slot, value, value);
}

// AfterKey keeps the documents that sort at or after the key (a, b) of `cursor`: for
// descending order a < A, or a == A and b <= B; ascending mirrored. Hits equal to (A, B) come
// first and `cursor.ties` of them were already returned.
Xapian::Query AfterKey(Xapian::valueno slot, bool ascending, const PageCursor& cursor) {
  const Xapian::Query::op toward = ascending ? Xapian::Query::OP_VALUE_GE
                                             : Xapian::Query::OP_VALUE_LE;
  const Xapian::Query::op away = ascending ? Xapian::Query::OP_VALUE_LE
                                           : Xapian::Query::OP_VALUE_GE;
  // (a == A and b strictly before B in the page order): already returned.
  const Xapian::Query number_before(
      Xapian::Query::OP_AND_NOT, Xapian::Query(away, index::kNumberSlot, cursor.number_value),
      Equal(index::kNumberSlot, cursor.number_value));
  const Xapian::Query seen(Xapian::Query::OP_AND, Equal(slot, cursor.sort_value), number_before);
  const Xapian::Query after(Xapian::Query::OP_AND_NOT,
                            Xapian::Query(toward, slot, cursor.sort_value), seen);
  if (ascending) return after;  // documents without the value sort first: already returned
  // Descending, documents without the value sort last (MultiValueKeyMaker puts an empty
  // reversed value after every other): still to come.
  // (OP_VALUE_GE with "" would match every document; "\0" is the least non-empty value. A
  // fresh match-all query, not the shared Query::MatchAll, whose reference count is not atomic:
  // queries are built on several threads at once.)
  const Xapian::Query without_value(
      Xapian::Query::OP_AND_NOT, Xapian::Query(std::string()),
      Xapian::Query(Xapian::Query::OP_VALUE_GE, slot, std::string(1, '\0')));
  return Xapian::Query(Xapian::Query::OP_OR, after, without_value);
}

// IsDisjunctionOfTerms says whether `query` is terms joined by OR (or a synonym or wildcard
// expansion of them, scaled or not), optionally with a bonus (OP_AND_MAYBE's right side, which
// decides no match): no AND, phrase or filter in what decides the matches.
bool IsDisjunctionOfTerms(const Xapian::Query& query) {
  switch (query.get_type()) {
    case Xapian::Query::LEAF_TERM:
    case Xapian::Query::OP_WILDCARD:
      return true;
    case Xapian::Query::OP_SCALE_WEIGHT:
    case Xapian::Query::OP_AND_MAYBE:
      return IsDisjunctionOfTerms(query.get_subquery(0));
    case Xapian::Query::OP_OR:
    case Xapian::Query::OP_SYNONYM:
      for (size_t i = 0; i < query.get_num_subqueries(); ++i) {
        if (!IsDisjunctionOfTerms(query.get_subquery(i))) return false;
      }
      return true;
    default:
      return false;
  }
}

// MatchSetQuery is `query` without the bonus of a ranked query (the right side of a top-level
// OP_AND_MAYBE), which decides no match: what a count or a spy needs to run.
Xapian::Query MatchSetQuery(Xapian::Query query) {
  while (query.get_type() == Xapian::Query::OP_AND_MAYBE) query = query.get_subquery(0);
  return query;
}

// MonthPrefix is the prefix of the month bucket terms of a sort field, or nullptr.
const char* MonthPrefix(SortField field) {
  switch (field) {
    case SortField::kCreated: return index::kCreatedMonthPrefix;
    case SortField::kUpdated: return index::kUpdatedMonthPrefix;
    default: return nullptr;
  }
}

// MonthOf is "YYYY-MM" (UTC) of a sortable-serialised unix time, as the month terms spell it.
std::string MonthOf(const std::string& sortable_seconds) {
  const auto seconds = static_cast<int64_t>(Xapian::sortable_unserialise(sortable_seconds));
  const absl::CivilSecond c =
      absl::ToCivilSecond(absl::FromUnixSeconds(seconds), absl::UTCTimeZone());
  return absl::StrFormat("%04d-%02d", c.year(), c.month());
}

// MonthBuckets returns the month terms under `prefix`, in the order a walk visits them (newest
// first unless `ascending`), or an empty list when some document has none (it could not be
// reached by a walk; such an index sorts in one pass). With a keyset `cursor`, months before
// the cursor's in the walk's order are left out (AfterKey excludes all their documents).
std::vector<std::string> MonthBuckets(const Xapian::Database& db, const std::string& prefix,
                                      bool ascending, const PageCursor& cursor) {
  std::vector<std::string> terms;
  Xapian::doccount covered = 0;
  for (Xapian::TermIterator t = db.allterms_begin(prefix); t != db.allterms_end(prefix); ++t) {
    terms.push_back(*t);
    covered += t.get_termfreq();
  }
  if (covered != db.get_doccount()) return {};
  if (!ascending) std::reverse(terms.begin(), terms.end());
  if (cursor.keyset && !cursor.sort_value.empty()) {
    const std::string from = prefix + MonthOf(cursor.sort_value);
    auto keep = std::find_if(terms.begin(), terms.end(), [&](const std::string& t) {
      return ascending ? t >= from : t <= from;
    });
    terms.erase(terms.begin(), keep);
  }
  return terms;
}

}  // namespace

// Explain fills hit->explain: the weight of each of `parts` in the hit's document.
// `proximity` is the bonus of the proximity re-ranking (search/proximity.h), a part of its own
// over `proximity_terms` when positive.
void Explain(const Xapian::Database& db,
             const std::vector<std::pair<std::string, Xapian::Query>>& parts, double proximity,
             const std::vector<std::string>& proximity_terms, v1::SearchHit* hit) {
  // The document's unique term restricts each part to it; the part's weight there is its
  // share of the score (Xapian adds the weights of OR'ed, AND'ed and AND_MAYBE'd parts).
  const std::string id_term = index::IdTerm(hit->repo_slug(), hit->number());
  std::vector<v1::ScorePart> out;
  for (const auto& [label, query] : parts) {
    Xapian::Enquire enquire(db);
    enquire.set_query(Xapian::Query(Xapian::Query::OP_FILTER, query, Xapian::Query(id_term)));
    enquire.set_weighting_scheme(RankingWeight());
    const Xapian::MSet mset = enquire.get_mset(0, 1);
    if (mset.empty() || mset.begin().get_weight() <= 0) continue;
    v1::ScorePart part;
    part.set_part(label);
    part.set_weight(mset.begin().get_weight());
    for (Xapian::TermIterator t = query.get_unique_terms_begin();
         t != query.get_unique_terms_end(); ++t) {
      part.add_terms(*t);
    }
    out.push_back(std::move(part));
  }
  if (proximity > 0) {
    v1::ScorePart part;
    part.set_part("proximity");
    part.set_weight(proximity);
    for (const std::string& t : proximity_terms) part.add_terms(t);
    out.push_back(std::move(part));
  }
  std::sort(out.begin(), out.end(),
            [](const v1::ScorePart& a, const v1::ScorePart& b) { return a.weight() > b.weight(); });
  for (v1::ScorePart& p : out) *hit->add_explain() = std::move(p);
}

void FillHit(const v1::IssueWithComments& iwc, v1::SearchHit* hit) {
  const v1::Issue& issue = iwc.issue();
  hit->set_repo_slug(RepoSlug(issue.repo()));
  hit->set_repo(RepoFullName(issue.repo()));
  hit->set_number(issue.number());
  hit->set_title(issue.title());
  hit->set_state(issue.state());
  *hit->mutable_labels() = issue.labels();
  hit->set_author(issue.author());
  if (issue.has_created_at()) *hit->mutable_created_at() = issue.created_at();
  if (issue.has_updated_at()) *hit->mutable_updated_at() = issue.updated_at();
  hit->set_comment_count(issue.comment_count());
  hit->set_is_pull_request(issue.is_pull_request());
  hit->set_url(issue.url());
  hit->set_deleted(issue.deleted());
  hit->set_transferred_to(issue.transferred_to());
  if (issue.has_tags()) {
    // The tags without their evidence: audit detail for the issue view (GetIssue), and most
    // of a hit's bytes.
    *hit->mutable_tags() = issue.tags();
    hit->mutable_tags()->clear_evidence();
  }
}

namespace {

// CheckAtLeast is the check_at_least that counts up to `bound` matches (0: every match).
Xapian::doccount CheckAtLeast(uint64_t bound, Xapian::doccount doccount) {
  return bound == 0 ? doccount
                    : static_cast<Xapian::doccount>(std::min<uint64_t>(bound, doccount));
}

// BooleanCount runs `query` unranked, in document order, counting up to `check` matches and
// passing each one seen to `spy` (may be null).
Xapian::MSet BooleanCount(const Xapian::Database& db, const Xapian::Query& query,
                          Xapian::MatchSpy* spy, Xapian::doccount check) {
  Xapian::Enquire enquire(db);
  enquire.set_query(MatchSetQuery(query));
  SetUnrankedScheme(enquire, db);
  enquire.set_docid_order(Xapian::Enquire::ASCENDING);
  if (spy != nullptr) enquire.add_matchspy(spy);
  return enquire.get_mset(0, 1, check);
}

// SplitCount counts every match of `queries[i]` in part i of `split` (a full boolean pass
// each, in parallel), passing each match to its part's spy (`spies` empty or one per part);
// with `fraction` < 1 only the matches in an evenly spread sample of that fraction of the
// document ids (DocidSample). Each part's query objects are built and used on its own thread:
// Xapian's reference counts are not atomic, so parts must not share a Query.
int64_t SplitCount(const MatchSplit& split, const std::vector<Xapian::Query>& queries,
                   const std::vector<Xapian::MatchSpy*>& spies, double fraction = 1.0) {
  std::vector<Xapian::doccount> counts(split.parts(), 0);
  split.Run([&](size_t i) {
    const Xapian::Database& db = split.db(i);
    Xapian::Query query = split.Restrict(i, MatchSetQuery(queries[i]));
    if (fraction < 1.0) {
      query = Xapian::Query(Xapian::Query::OP_FILTER, query,
                            Xapian::Query((new DocidSample(fraction, kSampleWindows))->release()));
    }
    counts[i] = BooleanCount(db, query, spies.empty() ? nullptr : spies[i], db.get_doccount())
                    .get_matches_lower_bound();
  });
  int64_t total = 0;
  for (Xapian::doccount count : counts) total += count;
  return total;
}

// Candidate is a match of one part's MSet.
struct Candidate {
  const Xapian::MSet* mset;
  Xapian::MSetIterator it;
  size_t part = 0;  // the part of the split whose handle and thread it belongs to
  // The match's weight, with the proximity bonus once re-ranked.
  double weight = 0;
};

// Before says whether `a` comes before `b` in Xapian's order of a ranked match: the sort key
// ascending when sorting by key (a KeyMaker's reversed key is stored reversed; a value slot
// sorted in reverse, `key_descending`, is not), then the weight descending, then the document
// id ascending. Weights of one query over handles of the same index are equal for equal
// matches (MatchSplit), so parts merge in exactly the unsplit order.
bool Before(const Candidate& a, const Candidate& b, bool by_key, bool key_descending) {
  if (by_key) {
    const std::string ka = a.it.get_sort_key();
    const std::string kb = b.it.get_sort_key();
    if (ka != kb) return key_descending ? kb < ka : ka < kb;
  }
  const double wa = a.it.get_weight();
  const double wb = b.it.get_weight();
  if (wa != wb) return wa > wb;
  return *a.it < *b.it;
}

// Merge merges the parts' lists of candidates, each in the query's order, into one: `want`
// candidates after skipping the first `skip`.
std::vector<Candidate> Merge(const std::vector<std::vector<Candidate>>& lists,
                             Xapian::doccount skip, Xapian::doccount want, bool by_key,
                             bool key_descending) {
  std::vector<Candidate> out;
  std::vector<size_t> next(lists.size(), 0);
  Xapian::doccount skipped = 0;
  while (out.size() < want) {
    size_t best = lists.size();
    for (size_t l = 0; l < lists.size(); ++l) {
      if (next[l] == lists[l].size()) continue;
      if (best == lists.size() ||
          Before(lists[l][next[l]], lists[best][next[best]], by_key, key_descending)) {
        best = l;
      }
    }
    if (best == lists.size()) break;
    if (skipped < skip) {
      ++skipped;
    } else {
      out.push_back(lists[best][next[best]]);
    }
    ++next[best];
  }
  return out;
}

}  // namespace

int64_t CountMatches(const Xapian::Database& db, const Xapian::Query& query,
                     Xapian::MatchSpy* spy) {
  return BooleanCount(db, query, spy, db.get_doccount()).get_matches_estimated();
}

std::vector<Xapian::Query> PartQueries(const std::vector<ParsedQuery>& parts) {
  std::vector<Xapian::Query> out;
  out.reserve(parts.size());
  for (const ParsedQuery& part : parts) out.push_back(part.query);
  return out;
}

int64_t CountMatches(const MatchSplit& split, const std::vector<Xapian::Query>& queries,
                     const std::vector<Xapian::MatchSpy*>& spies, double fraction) {
  return SplitCount(split, queries, spies, fraction);
}

MatchCount CountMatchesBounded(const Xapian::Database& db, const Xapian::Query& query,
                               uint64_t bound) {
  return CountMatchesBounded(MatchSplit(db), {query}, bound);
}

MatchCount CountMatchesBounded(const MatchSplit& split, const std::vector<Xapian::Query>& queries,
                               uint64_t bound) {
  const Xapian::Database& db = split.db(0);
  // Xapian's matcher does not stop an unranked pass at check_at_least (no weight can prune
  // it), so a bound on the work is kept here. First what the posting lists' statistics say:
  // exact for one term (a label, a state, a single word), free.
  Xapian::Enquire estimator(db);
  estimator.set_query(MatchSetQuery(queries[0]));
  SetUnrankedScheme(estimator, db);
  const Xapian::MSet probe = estimator.get_mset(0, 0);  // statistics only: no match is run
  if (probe.get_matches_lower_bound() == probe.get_matches_upper_bound()) {
    return {static_cast<int64_t>(probe.get_matches_lower_bound()), true};
  }
  const auto full = [&] { return MatchCount{SplitCount(split, queries, {}), true}; };
  if (bound == 0 || probe.get_matches_upper_bound() <= bound) return full();
  // Then the matches inside an evenly spread sample of document ids (DocidSample), sized from
  // the estimate to hold a quarter more than the bound and grown while it holds fewer:
  // at least `bound` matches in the sample prove the total larger, and the sample scaled up
  // estimates it; a sample grown to everything counts exactly.
  const double estimate = std::max<double>(1, probe.get_matches_estimated());
  double fraction = std::min(1.0, 1.25 * static_cast<double>(bound) / estimate);
  while (fraction < 1.0) {
    const int64_t in_sample = SplitCount(split, queries, {}, fraction);
    // More than `bound` matches prove the total beyond it (exactly `bound` could be all).
    if (in_sample > static_cast<int64_t>(bound)) {
      return {static_cast<int64_t>(std::llround(static_cast<double>(in_sample) / fraction)),
              false};
    }
    fraction = std::min(1.0, fraction * std::max(2.0, 2.0 * static_cast<double>(bound) /
                                                          std::max<double>(1, in_sample)));
  }
  return full();
}

absl::StatusOr<Page> FetchPage(const Xapian::Database& db, const ParsedQuery& parsed,
                               const PageCursor& cursor, const PageOptions& options) {
  return FetchPage(MatchSplit(db), {parsed}, cursor, options);
}

namespace {

// Kept holds, per part, the MSets that candidates point into (a deque: stable addresses).
using Kept = std::vector<std::deque<Xapian::MSet>>;

// PagePlan is what FetchPage decides before running anything: the order, where the page
// starts, how many matches it wants and how the total is counted. The steps below read it.
struct PagePlan {
  PagePlan(const MatchSplit& split_in, const std::vector<ParsedQuery>& parts_in,
           const PageCursor& cursor_in, const PageOptions& options_in)
      : split(split_in),
        parts(parts_in),
        parsed(parts_in[0]),
        cursor(cursor_in),
        options(options_in),
        field(EffectiveSort(parsed)),
        by_value(field != SortField::kRelevance),
        ascending(parsed.sort.is_explicit && parsed.sort.ascending),
        slot(SortSlot(field)),
        doccount(split_in.db(0).get_doccount()),
        first(static_cast<Xapian::doccount>(
            std::min<uint64_t>(cursor_in.keyset ? cursor_in.ties : cursor_in.offset, doccount))),
        want(static_cast<Xapian::doccount>(options_in.size) + 1),
        // With a count bound the ranking pass weighs at least that many matches (all of them
        // when there are no more), then may skip the rest.
        check(CheckAtLeast(options_in.count_bound, doccount)),
        count_here(options_in.count_total && !cursor_in.keyset) {}

  // PartQuery is the query of part i (what the cursor has not returned yet); built on the
  // part's thread.
  Xapian::Query PartQuery(size_t i) const {
    Xapian::Query q = parts[i].query;
    if (cursor.keyset) {
      q = Xapian::Query(Xapian::Query::OP_FILTER, q, AfterKey(slot, ascending, cursor));
    }
    return q;
  }

  // KeyDescending says whether the sort keys of this order compare descending: a sort key
  // slot sorted in reverse (a KeyMaker's keys are reversed already).
  bool KeyDescending() const { return by_value && options.sort_by_key_slots && !ascending; }

  // Configure sets up an Enquire for `q` in the query's order; `keymaker` must outlive its
  // get_mset.
  void Configure(Xapian::Enquire& enquire, const Xapian::Query& q,
                 Xapian::MultiValueKeyMaker& keymaker) const {
    enquire.set_query(q);
    if (parsed.has_text) {
      enquire.set_weighting_scheme(RankingWeight());
    } else {
      enquire.set_weighting_scheme(Xapian::BoolWeight());
    }
    if (by_value && options.sort_by_key_slots) {
      enquire.set_sort_by_value_then_relevance(SortKeySlot(field), !ascending);
    } else if (by_value) {
      keymaker.add_value(slot, !ascending);
      keymaker.add_value(index::kNumberSlot, !ascending);
      enquire.set_sort_by_key_then_relevance(&keymaker, false);
    }
  }

  const MatchSplit& split;
  const std::vector<ParsedQuery>& parts;
  const ParsedQuery& parsed;  // part 0's
  const PageCursor& cursor;
  const PageOptions& options;
  const SortField field;
  const bool by_value;
  const bool ascending;
  const Xapian::valueno slot;
  const Xapian::doccount doccount;
  const Xapian::doccount first;  // matches the cursor has already returned (skipped)
  const Xapian::doccount want;   // the page and one more (is there a next page?)
  const Xapian::doccount check;
  // The total is counted on a first page (count_here), in the ranking pass, except for a
  // relevance-ranked disjunction of terms (one word over the text fields, a wildcard): there the
  // matcher ranks the page while skipping postings that cannot reach it, and a boolean count
  // is cheaper than weighing every posting of every list (or free, when the ranking pass
  // already knows the exact number): count_apart. A spy then runs in the ranking pass
  // (spy_here) unless the count runs apart. Set by FetchPage once part 0's query is built.
  const bool count_here;
  bool count_apart = false;
  bool spy_here = false;
};

// WalkMonths pages a broad query sorted by created or updated time by walking the month
// buckets in sort order, sorting one month's matches at a time, until the page is full:
// reading every match's sort key (a million for a broad word) is what a one-pass sort costs.
// With a split every part walks its shards, and their pages merge by sort key. A query whose
// matches lie far from the walk's start (a date filter on another field, say) yields little per
// month: once the months walked hold a sixteenth of the index and the page is not full, the
// walk gives up (false, `kept` cleared) and one pass over everything is cheaper. (A query
// spread evenly over the index and worth walking, at least bucket_walk_min_matches of a
// million, has hundreds of matches in that sixteenth: far more than a page; a part of a split
// sees about 1/parts of them and needs a whole page, yet the same limit holds.) False too
// when the walk does not apply.
bool WalkMonths(const PagePlan& plan, const Xapian::Query& query, Xapian::Enquire& enquire,
                Kept* kept, std::vector<Candidate>* out) {
  const char* month_prefix = MonthPrefix(plan.field);
  if (!plan.by_value || month_prefix == nullptr || !plan.options.spies.empty() ||
      enquire.get_mset(0, 0).get_matches_estimated() < plan.options.bucket_walk_min_matches) {
    return false;
  }
  const MatchSplit& split = plan.split;
  const Xapian::Database& db = split.db(0);
  const std::vector<std::string> buckets =
      MonthBuckets(db, month_prefix, plan.ascending, plan.cursor);
  if (buckets.empty()) return false;
  const size_t parts = split.parts();
  std::vector<std::vector<Candidate>> found(parts);
  std::vector<char> aborted(parts, 0);
  const uint64_t walk_limit = std::max<uint64_t>(1, db.get_doccount() / 16);
  const auto walk = [&](size_t i) {
    const Xapian::Database& part_db = split.db(i);
    Xapian::Enquire part_enquire(part_db);
    Xapian::MultiValueKeyMaker part_keymaker;
    const Xapian::Query q = parts == 1 ? query : split.Restrict(i, i == 0 ? query : plan.PartQuery(i));
    plan.Configure(part_enquire, q, part_keymaker);
    Xapian::doccount skip = parts == 1 ? plan.first : 0;
    Xapian::doccount need = parts == 1 ? plan.want : plan.first + plan.want;
    uint64_t walked_docs = 0;
    for (const std::string& bucket : buckets) {
      walked_docs += part_db.get_termfreq(bucket);
      if (walked_docs > walk_limit && bucket != buckets.front()) {
        aborted[i] = 1;
        return;
      }
      part_enquire.set_query(Xapian::Query(Xapian::Query::OP_FILTER, q, Xapian::Query(bucket)));
      Xapian::MSet month = part_enquire.get_mset(skip, need, skip + need);
      if (month.empty()) {
        // At most skip + need matches, so counted exactly: all of them are skipped.
        skip -= std::min<Xapian::doccount>(skip, month.get_matches_lower_bound());
        continue;
      }
      skip = 0;
      need -= std::min<Xapian::doccount>(need, month.size());
      const Xapian::MSet& held = (*kept)[i].emplace_back(std::move(month));
      for (Xapian::MSetIterator it = held.begin(); it != held.end(); ++it) {
        found[i].push_back({&held, it, i, it.get_weight()});
      }
      if (need == 0) break;
    }
  };
  split.Run(walk);
  if (std::find(aborted.begin(), aborted.end(), 1) != aborted.end()) {
    for (std::deque<Xapian::MSet>& held : *kept) held.clear();
    return false;
  }
  *out = parts == 1 ? std::move(found[0])
                    : Merge(found, plan.first, plan.want, true, plan.KeyDescending());
  return true;
}

// RankedPass is the ranking pass's candidates and what it knows of the number of matches.
struct RankedPass {
  std::vector<Candidate> candidates;
  Xapian::doccount lower = 0, upper = 0, estimated = 0;
};

// RankParts runs one ranking pass per part of the split, in parallel; each part returns its
// first `rank_first + rank_want` matches and the merge keeps `rank_want` after skipping
// `rank_first` (one part: the pass skips them itself). Each part counts up to its share of the
// bound; when that leaves a total that may be within the bound inexact, the parts run again
// counting up to the whole bound (rare: the matches must lie unevenly). A relevance-ranked
// disjunction of terms matching more than a third of the index is not split: its pass is a
// walk along long posting lists, and the shard filter costs more per posting than the split
// saves (measured: docs/BENCHMARKS.md).
RankedPass RankParts(const PagePlan& plan, const Xapian::Query& query, Xapian::Enquire& enquire,
                     Xapian::doccount rank_first, Xapian::doccount rank_want, Kept* kept) {
  const MatchSplit& split = plan.split;
  const bool disjunction = !plan.by_value && IsDisjunctionOfTerms(query);
  const size_t parts =
      split.parts() > 1 && disjunction &&
              enquire.get_mset(0, 0).get_matches_estimated() > split.db(0).get_doccount() / 3
          ? 1
          : split.parts();
  std::vector<Xapian::MSet> msets(parts);
  const Xapian::doccount pass_check = plan.count_here && !plan.count_apart ? plan.check : 0;
  // Rank runs the parts listed in `run` (all when empty), part i counting up to checks[i].
  const auto rank = [&](const std::vector<Xapian::doccount>& checks, const std::vector<bool>& run) {
    const auto body = [&](size_t i) {
      if (!run.empty() && !run[i]) return;
      if (parts == 1) {
        if (plan.spy_here) enquire.add_matchspy(plan.options.spies[0]);
        msets[0] = enquire.get_mset(rank_first, rank_want, checks[0]);
        return;
      }
      Xapian::Enquire part_enquire(split.db(i));
      Xapian::MultiValueKeyMaker part_keymaker;
      plan.Configure(part_enquire, split.Restrict(i, i == 0 ? query : plan.PartQuery(i)),
                     part_keymaker);
      if (plan.spy_here) part_enquire.add_matchspy(plan.options.spies[i]);
      msets[i] = part_enquire.get_mset(0, rank_first + rank_want, checks[i]);
    };
    if (parts == 1) {
      body(0);
    } else {
      split.Run(body);
    }
  };
  const bool share = parts > 1 && pass_check > 0 && pass_check < plan.doccount && !plan.spy_here;
  // One more than an even share: two parts that stop there hold more than the bound.
  const Xapian::doccount per_part =
      (pass_check + static_cast<Xapian::doccount>(parts) - 1) / static_cast<Xapian::doccount>(parts) + 1;
  rank(std::vector<Xapian::doccount>(parts, share ? per_part : pass_check), {});
  if (share) {
    // Parts that stopped counting at their share run again, each counting up to what the
    // bound leaves beside the others' matches, when the total may still be within it.
    Xapian::doccount seen = 0;
    std::vector<bool> again(parts, false);
    bool any = false;
    for (size_t i = 0; i < parts; ++i) {
      seen += msets[i].get_matches_lower_bound();
      again[i] = msets[i].get_matches_lower_bound() != msets[i].get_matches_upper_bound();
      any = any || again[i];
    }
    if (any && seen <= pass_check) {
      std::vector<Xapian::doccount> checks(parts, 0);
      for (size_t i = 0; i < parts; ++i) {
        checks[i] = pass_check - (seen - msets[i].get_matches_lower_bound());
      }
      rank(checks, again);
    }
  }
  RankedPass pass;
  for (const Xapian::MSet& part : msets) {
    pass.lower += part.get_matches_lower_bound();
    pass.upper += part.get_matches_upper_bound();
    pass.estimated += part.get_matches_estimated();
  }
  std::vector<std::vector<Candidate>> found(parts);
  for (size_t i = 0; i < parts; ++i) {
    const Xapian::MSet& held = (*kept)[i].emplace_back(std::move(msets[i]));
    for (Xapian::MSetIterator it = held.begin(); it != held.end(); ++it) {
      found[i].push_back({&held, it, i, it.get_weight()});
    }
  }
  pass.candidates =
      parts == 1 ? std::move(found[0])
                 : Merge(found, rank_first, rank_want, plan.by_value, plan.KeyDescending());
  return pass;
}

// RemoteOrNothing runs one of the one-match helpers of search/remote_proximity.h; nullopt (the
// caller reads item by item, as before) when a shard server cannot run it: one of an older
// release, without the class registered. Errors of the connection or the index still throw.
template <typename F>
auto RemoteOrNothing(F f) -> decltype(f()) {
  try {
    return f();
  } catch (const Xapian::SerialisationError&) {
    return std::nullopt;
  } catch (const Xapian::InvalidArgumentError&) {
    return std::nullopt;
  } catch (const Xapian::UnimplementedError&) {
    return std::nullopt;
  }
}

// ReRankByProximity re-ranks the first kProximityWindow candidates (the window, from the
// pass's start) by proximity (search/proximity.h), then drops the `first` the cursor has
// returned. Each window match's bonus comes from its own part's handle, the parts in parallel
// (each on its own thread, as for materialising hits); ties keep the pass's order, which
// breaks equal weights by document id.
void ReRankByProximity(const PagePlan& plan, std::vector<Candidate>* candidates) {
  std::vector<Candidate>& c = *candidates;
  const size_t window = std::min<size_t>(c.size(), kProximityWindow);
  bool several = false;
  for (size_t k = 0; k < window; ++k) several = several || c[k].part != 0;
  // Remote shards: the servers compute the bonuses, in one match.
  std::optional<std::vector<double>> remote;
  if (plan.options.remote_layout != nullptr && !several && window > 0) {
    std::vector<Xapian::docid> docids;
    for (size_t k = 0; k < window; ++k) docids.push_back(*c[k].it);
    remote = RemoteOrNothing([&] {
      return RemoteProximity(plan.split.db(0), *plan.options.remote_layout, docids,
                             plan.parts[0].proximity_terms);
    });
  }
  const auto bonus = [&](size_t i) {
    for (size_t k = 0; k < window; ++k) {
      if (c[k].part != i) continue;
      c[k].weight = ProximityWeighted(
          c[k].weight, remote ? (*remote)[k]
                              : PairProximity(plan.split.db(i), *c[k].it,
                                              plan.parts[i].proximity_terms));
    }
  };
  if (several) {
    plan.split.Run(bonus);
  } else {
    bonus(0);
  }
  std::stable_sort(c.begin(), c.begin() + static_cast<ptrdiff_t>(window),
                   [](const Candidate& a, const Candidate& b) { return a.weight > b.weight; });
  c.erase(c.begin(), c.begin() + static_cast<ptrdiff_t>(std::min<size_t>(plan.first, c.size())));
}

// CountTotal fills page->total (and total_exact) as PageOptions::count_total asks: from the
// ranking pass when it counted (`pass`, null after a month walk), else by a count apart.
void CountTotal(const PagePlan& plan, const RankedPass* pass, Page* page) {
  const PageOptions& options = plan.options;
  const bool known = pass != nullptr && pass->lower == pass->upper;
  const auto bounded = [&] {
    const MatchCount counted =
        CountMatchesBounded(plan.split, PartQueries(plan.parts), options.count_bound);
    page->total = counted.count;
    page->total_exact = counted.exact;
  };
  if (pass == nullptr) {
    if (options.count_total) bounded();
  } else if (plan.count_apart && options.spies.empty() && known) {
    page->total = pass->lower;
  } else if (plan.count_here && !plan.count_apart) {
    page->total_exact = known;
    page->total = known ? pass->lower : pass->estimated;
  } else if (options.count_total && !options.spies.empty()) {
    page->total = CountMatches(plan.split, PartQueries(plan.parts), options.spies);
  } else if (options.count_total) {
    bounded();
  }
}

// MaterialiseHits reads the page's documents, fills its hits (snippets, explanations) and the
// cursor of the next page. With a split, each part does its own candidates on its own thread
// (its handle, its MSet: Xapian objects are not shared between threads).
absl::Status MaterialiseHits(const PagePlan& plan, const std::vector<Candidate>& candidates,
                             Page* page) {
  const PageOptions& options = plan.options;
  const ParsedQuery& parsed = plan.parsed;
  const SnippetTerms snippet_terms =
      options.snippets && parsed.has_text ? SnippetTermsOf(parsed.query) : SnippetTerms();
  const size_t shown = std::min(candidates.size(), static_cast<size_t>(options.size));
  struct Shown {
    v1::SearchHit hit;
    std::string sort_value, number_value;
    absl::Status status;
  };
  std::vector<Shown> hits(shown);
  bool merged = false;
  for (size_t k = 0; k < shown; ++k) merged = merged || candidates[k].part != 0;
  // Remote shards: the page's documents in one match rather than one round trip each.
  std::optional<std::vector<std::optional<Xapian::Document>>> fetched;
  if (options.remote_layout != nullptr && !merged && shown > 0) {
    std::vector<Xapian::docid> docids;
    for (size_t k = 0; k < shown; ++k) docids.push_back(*candidates[k].it);
    std::vector<Xapian::valueno> slots;
    if (plan.by_value) slots = {plan.slot, index::kNumberSlot};
    fetched = RemoteOrNothing(
        [&] { return RemoteDocuments(plan.split.db(0), *options.remote_layout, docids, slots); });
  }
  const auto materialise = [&](size_t k) {
    const Candidate& candidate = candidates[k];
    const Xapian::Document doc = fetched && (*fetched)[k] ? *(*fetched)[k]
                                                           : candidate.it.get_document();
    absl::StatusOr<v1::IssueWithComments> iwc = index::ReadDocument(doc);
    if (!iwc.ok()) {
      hits[k].status = iwc.status();
      return;
    }
    v1::SearchHit& hit = hits[k].hit;
    FillHit(*iwc, &hit);
    hit.set_score(parsed.has_text ? candidate.weight : 0.0);
    if (options.snippets) {
      hit.set_snippet(MakeSnippet(snippet_terms, parsed.has_text, *iwc, options.snippet_bytes));
    }
    if (options.explain && parsed.has_text) {
      Explain(plan.split.db(candidate.part), plan.parts[candidate.part].explain_parts,
              candidate.weight - candidate.it.get_weight(),
              plan.parts[candidate.part].proximity_terms, &hit);
    }
    if (plan.by_value) {
      hits[k].sort_value = doc.get_value(plan.slot);
      hits[k].number_value = doc.get_value(index::kNumberSlot);
    }
  };
  if (merged) {
    // SnippetTermsOf above read part 0's query on this thread; only part i touches its objects
    // below.
    plan.split.Run([&](size_t i) {
      for (size_t k = 0; k < shown; ++k) {
        if (candidates[k].part == i) materialise(k);
      }
    });
  } else {
    for (size_t k = 0; k < shown; ++k) materialise(k);
  }
  const PageCursor& cursor = plan.cursor;
  std::string last_sort, last_number;
  uint64_t ties = 0;
  for (Shown& shown_hit : hits) {
    RETURN_IF_ERROR(shown_hit.status);
    page->hits.push_back(std::move(shown_hit.hit));
    if (plan.by_value) {
      const bool same = shown_hit.sort_value == last_sort && shown_hit.number_value == last_number;
      // Ties carried over from the previous page count when the key did not move.
      const bool same_as_cursor = page->hits.size() == 1 && cursor.keyset &&
                                  shown_hit.sort_value == cursor.sort_value &&
                                  shown_hit.number_value == cursor.number_value;
      ties = same ? ties + 1 : (same_as_cursor ? cursor.ties + 1 : 1);
      last_sort = std::move(shown_hit.sort_value);
      last_number = std::move(shown_hit.number_value);
    }
  }
  if (candidates.size() > shown) {
    PageCursor next;
    next.offset = cursor.offset + page->hits.size();
    if (plan.by_value && !last_sort.empty()) {
      next.keyset = true;
      next.sort_value = last_sort;
      next.number_value = last_number;
      next.ties = ties;
    }
    page->next = next;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Page> FetchPage(const MatchSplit& split, const std::vector<ParsedQuery>& parts,
                               const PageCursor& cursor, const PageOptions& options) {
  if (parts.size() != split.parts() ||
      (!options.spies.empty() && options.spies.size() != split.parts())) {
    return absl::InternalError("FetchPage: one query (and spy, if any) per part of the split");
  }
  PagePlan plan(split, parts, cursor, options);
  if (plan.by_value && options.sort_by_key_slots) {
    // Every document must carry the key: value statistics add up over every shard and server
    // (the scheme's metadata is read from the first shard only, and a rebuild goes shard by
    // shard).
    const Xapian::Database& db = split.db(0);
    const Xapian::doccount keyed = db.get_value_freq(SortKeySlot(plan.field));
    if (keyed != db.get_doccount()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "sorting by a field over remote shards needs the sort keys of index scheme ",
          index::kTextScheme, ", and ", db.get_doccount() - keyed, " of ", db.get_doccount(),
          " documents lack them (an index built before them; the indexer rebuilds it in the "
          "background; offline: issuescope reindex)"));
    }
  }
  const Xapian::Query query = plan.PartQuery(0);
  plan.count_apart = plan.count_here && !plan.by_value && IsDisjunctionOfTerms(query);
  plan.spy_here = plan.count_here && !plan.count_apart && !options.spies.empty();
  Xapian::Enquire enquire(split.db(0));
  Xapian::MultiValueKeyMaker keymaker;
  plan.Configure(enquire, query, keymaker);

  // The page's matches in order, from MSets kept alive in `kept` (per part): a month walk when
  // it applies, else one ranking pass (per part).
  Kept kept(split.parts());
  std::vector<Candidate> candidates;
  Page page;
  if (WalkMonths(plan, query, enquire, &kept, &candidates)) {
    CountTotal(plan, nullptr, &page);
  } else {
    // A ranked query of several words re-ranks its best kProximityWindow matches by proximity
    // (search/proximity.h): a page that reaches into them ranks them all, the pass returning the
    // window from its start; pages past it are unchanged (the window holds the same matches).
    const bool rerank = !plan.by_value && plan.parsed.has_text && options.size > 0 &&
                        !plan.parsed.proximity_terms.empty() && plan.first < kProximityWindow;
    const Xapian::doccount rank_first = rerank ? 0 : plan.first;
    const Xapian::doccount rank_want =
        rerank ? std::max<Xapian::doccount>(kProximityWindow, plan.first + plan.want) : plan.want;
    RankedPass pass = RankParts(plan, query, enquire, rank_first, rank_want, &kept);
    candidates = std::move(pass.candidates);
    if (rerank) ReRankByProximity(plan, &candidates);
    CountTotal(plan, &pass, &page);
  }
  RETURN_IF_ERROR(MaterialiseHits(plan, candidates, &page));
  return page;
}

}  // namespace issuescope::search

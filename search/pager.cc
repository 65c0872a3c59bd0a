#include "search/pager.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"

#include "common/index_document.h"
#include "common/index_schema.h"
#include "common/repo_slug.h"
#include "common/status_macros.h"
#include "search/docid_sample.h"
#include "search/snippet.h"

namespace issuescope::search {
namespace {

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
  // (OP_VALUE_GE with "" would match every document; "\0" is the least non-empty value.)
  const Xapian::Query without_value(
      Xapian::Query::OP_AND_NOT, Xapian::Query::MatchAll,
      Xapian::Query(Xapian::Query::OP_VALUE_GE, slot, std::string(1, '\0')));
  return Xapian::Query(Xapian::Query::OP_OR, after, without_value);
}

// IsDisjunctionOfTerms says whether `query` is terms joined by OR (or a synonym or wildcard
// expansion of them): no AND, phrase or filter anywhere.
bool IsDisjunctionOfTerms(const Xapian::Query& query) {
  switch (query.get_type()) {
    case Xapian::Query::LEAF_TERM:
    case Xapian::Query::OP_WILDCARD:
      return true;
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

Xapian::BM25Weight RankingWeight() {
  // k1 = 1, k2 = 0, k3 = 1 and min_normlen 0.5 are Xapian's defaults; b = 0 turns off length
  // normalisation, so no match's document length is looked up.
  return Xapian::BM25Weight(1, 0, 1, 0, 0.5);
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
  if (issue.has_tags()) *hit->mutable_tags() = issue.tags();
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
  enquire.set_query(query);
  enquire.set_weighting_scheme(Xapian::BoolWeight());
  enquire.set_docid_order(Xapian::Enquire::ASCENDING);
  if (spy != nullptr) enquire.add_matchspy(spy);
  return enquire.get_mset(0, 1, check);
}

}  // namespace

int64_t CountMatches(const Xapian::Database& db, const Xapian::Query& query,
                     Xapian::MatchSpy* spy) {
  return BooleanCount(db, query, spy, db.get_doccount()).get_matches_estimated();
}

MatchCount CountMatchesBounded(const Xapian::Database& db, const Xapian::Query& query,
                               uint64_t bound) {
  // Xapian's matcher does not stop an unranked pass at check_at_least (no weight can prune
  // it), so a bound on the work is kept here. First what the posting lists' statistics say:
  // exact for one term (a label, a state, a single word), free.
  Xapian::Enquire estimator(db);
  estimator.set_query(query);
  estimator.set_weighting_scheme(Xapian::BoolWeight());
  const Xapian::MSet probe = estimator.get_mset(0, 0);  // statistics only: no match is run
  if (probe.get_matches_lower_bound() == probe.get_matches_upper_bound()) {
    return {static_cast<int64_t>(probe.get_matches_lower_bound()), true};
  }
  const Xapian::doccount doccount = db.get_doccount();
  const auto full = [&] {
    return MatchCount{static_cast<int64_t>(
                          BooleanCount(db, query, nullptr, doccount).get_matches_lower_bound()),
                      true};
  };
  if (bound == 0 || probe.get_matches_upper_bound() <= bound) return full();
  // Then the matches inside an evenly spread sample of document ids (DocidSample), sized from
  // the estimate to hold a quarter more than the bound and grown while it holds fewer:
  // at least `bound` matches in the sample prove the total larger, and the sample scaled up
  // estimates it; a sample grown to everything counts exactly.
  const double estimate = std::max<double>(1, probe.get_matches_estimated());
  double fraction = std::min(1.0, 1.25 * static_cast<double>(bound) / estimate);
  while (fraction < 1.0) {
    const Xapian::Query sampled(
        Xapian::Query::OP_FILTER, query,
        Xapian::Query((new DocidSample(fraction, kSampleWindows))->release()));
    const Xapian::doccount in_sample =
        BooleanCount(db, sampled, nullptr, doccount).get_matches_lower_bound();
    if (in_sample >= bound) {
      return {static_cast<int64_t>(std::llround(in_sample / fraction)), false};
    }
    fraction = std::min(1.0, fraction * std::max(2.0, 2.0 * static_cast<double>(bound) /
                                                          std::max<double>(1, in_sample)));
  }
  return full();
}

absl::StatusOr<Page> FetchPage(const Xapian::Database& db, const ParsedQuery& parsed,
                               const PageCursor& cursor, const PageOptions& options) {
  const SortField field = EffectiveSort(parsed);
  const bool by_value = field != SortField::kRelevance;
  const bool ascending = parsed.sort.is_explicit && parsed.sort.ascending;
  const Xapian::valueno slot = SortSlot(field);

  Xapian::Enquire enquire(db);
  Xapian::Query query = parsed.query;
  if (cursor.keyset) {
    query = Xapian::Query(Xapian::Query::OP_FILTER, query, AfterKey(slot, ascending, cursor));
  }
  enquire.set_query(query);
  if (parsed.has_text) {
    enquire.set_weighting_scheme(RankingWeight());
  } else {
    enquire.set_weighting_scheme(Xapian::BoolWeight());
  }
  Xapian::MultiValueKeyMaker keymaker;  // must outlive get_mset
  if (by_value) {
    keymaker.add_value(slot, !ascending);
    keymaker.add_value(index::kNumberSlot, !ascending);
    enquire.set_sort_by_key_then_relevance(&keymaker, false);
  }
  // The total is counted in the ranking pass (check_at_least = all documents), except for a
  // relevance-ranked disjunction of terms (one word over the text fields, a wildcard): there
  // the matcher ranks the page while skipping postings that cannot reach it, and a boolean
  // count is cheaper than weighing every posting of every list (or free, when the ranking pass
  // already knows the exact number).
  const bool count_here = options.count_total && !cursor.keyset;
  const bool count_apart = count_here && !by_value && IsDisjunctionOfTerms(query);
  if (count_here && !count_apart && options.spy != nullptr) enquire.add_matchspy(options.spy);
  const Xapian::doccount doccount = db.get_doccount();
  const uint64_t start = cursor.keyset ? cursor.ties : cursor.offset;
  const Xapian::doccount first = static_cast<Xapian::doccount>(std::min<uint64_t>(start, doccount));
  // With a count bound the ranking pass weighs at least that many matches (all of them when
  // there are no more), then may skip the rest.
  const Xapian::doccount check = CheckAtLeast(options.count_bound, doccount);
  // A broad query sorted by created or updated time walks the month buckets in sort order,
  // sorting one month's matches at a time, until the page is full: reading every match's sort
  // key (a million for a broad word) is what a one-pass sort costs. The total, if wanted, is
  // then counted apart (bounded). Not with a spy, which must see every match anyway.
  std::vector<Xapian::MSet> msets;
  bool walked = false;
  const char* month_prefix = MonthPrefix(field);
  if (by_value && month_prefix != nullptr && options.spy == nullptr &&
      enquire.get_mset(0, 0).get_matches_estimated() >= options.bucket_walk_min_matches) {
    const std::vector<std::string> buckets = MonthBuckets(db, month_prefix, ascending, cursor);
    if (!buckets.empty()) {
      walked = true;
      Xapian::doccount skip = first;
      Xapian::doccount need = static_cast<Xapian::doccount>(options.size) + 1;
      // A query whose matches lie far from the walk's start (a date filter on another field,
      // say) yields little per month: once the months walked hold a quarter of the index and
      // the page is not full, one pass over everything is cheaper.
      uint64_t walked_docs = 0;
      const uint64_t walk_limit = std::max<uint64_t>(1, db.get_doccount() / 4);
      for (const std::string& bucket : buckets) {
        walked_docs += db.get_termfreq(bucket);
        if (walked_docs > walk_limit && bucket != buckets.front()) {
          walked = false;
          msets.clear();
          enquire.set_query(query);
          break;
        }
        enquire.set_query(Xapian::Query(Xapian::Query::OP_FILTER, query, Xapian::Query(bucket)));
        Xapian::MSet part = enquire.get_mset(skip, need, skip + need);
        if (part.empty()) {
          // At most skip + need matches, so counted exactly: all of them are skipped.
          skip -= std::min<Xapian::doccount>(skip, part.get_matches_lower_bound());
          continue;
        }
        skip = 0;
        need -= std::min<Xapian::doccount>(need, part.size());
        msets.push_back(std::move(part));
        if (need == 0) break;
      }
    }
  }
  if (!walked) {
    msets.push_back(
        enquire.get_mset(first, options.size + 1, count_here && !count_apart ? check : 0));
  }
  const Xapian::MSet& mset = msets.empty() ? Xapian::MSet() : msets.front();

  Page page;
  const bool known =
      !walked && mset.get_matches_lower_bound() == mset.get_matches_upper_bound();
  if (walked) {
    if (options.count_total) {
      const MatchCount counted = CountMatchesBounded(db, parsed.query, options.count_bound);
      page.total = counted.count;
      page.total_exact = counted.exact;
    }
  } else if (count_apart && options.spy == nullptr && known) {
    page.total = mset.get_matches_lower_bound();
  } else if (count_here && !count_apart) {
    page.total_exact = known;
    page.total = known ? mset.get_matches_lower_bound() : mset.get_matches_estimated();
  } else if (options.count_total && options.spy != nullptr) {
    page.total = CountMatches(db, parsed.query, options.spy);
  } else if (options.count_total) {
    const MatchCount counted = CountMatchesBounded(db, parsed.query, options.count_bound);
    page.total = counted.count;
    page.total_exact = counted.exact;
  }
  std::string last_sort, last_number;
  uint64_t ties = 0;
  const std::vector<std::string> snippet_roots =
      options.snippets && parsed.has_text ? SnippetRoots(parsed.query) : std::vector<std::string>();
  bool full = false;
  for (const Xapian::MSet& part : msets) {
    for (Xapian::MSetIterator it = part.begin(); it != part.end() && !full; ++it) {
      if (page.hits.size() == static_cast<size_t>(options.size)) {
        PageCursor next;
        next.offset = cursor.offset + page.hits.size();
        if (by_value && !last_sort.empty()) {
          next.keyset = true;
          next.sort_value = last_sort;
          next.number_value = last_number;
          next.ties = ties;
        }
        page.next = next;
        full = true;
        break;
      }
      const Xapian::Document doc = it.get_document();
      ASSIGN_OR_RETURN(v1::IssueWithComments iwc, index::ReadDocument(doc));
      v1::SearchHit& hit = page.hits.emplace_back();
      FillHit(iwc, &hit);
      hit.set_score(parsed.has_text ? it.get_weight() : 0.0);
      if (options.snippets) {
        hit.set_snippet(
            MakeSnippet(part, parsed.has_text, iwc, options.snippet_bytes, snippet_roots));
      }
      if (by_value) {
        std::string sort_value = doc.get_value(slot);
        std::string number_value = doc.get_value(index::kNumberSlot);
        const bool same = sort_value == last_sort && number_value == last_number;
        // Ties carried over from the previous page count when the key did not move.
        const bool same_as_cursor = page.hits.size() == 1 && cursor.keyset &&
                                    sort_value == cursor.sort_value &&
                                    number_value == cursor.number_value;
        ties = same ? ties + 1 : (same_as_cursor ? cursor.ties + 1 : 1);
        last_sort = std::move(sort_value);
        last_number = std::move(number_value);
      }
    }
    if (full) break;
  }
  return page;
}

}  // namespace issuescope::search

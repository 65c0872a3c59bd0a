// The Xapian document schema shared by the indexer (writes) and the search service (reads).
// Follows Omega's conventions: one unique "Q" term per document, single-capital prefixes for
// standard fields, "X…" prefixes for our own; dates and numbers live in value slots.
//
// Free text (common/index_text.h, which both sides call) is indexed once, unprefixed and with
// positions, title + body + comments in one posting list per word; the title again under S for
// `in:title`; `in:body|comments` check positions against the field bounds in kTextBoundsSlot.
// Boolean terms are lower-cased.
#pragma once

#include <string>
#include "absl/strings/string_view.h"

#include "xapian.h"

namespace issuescope::index {

// Term prefixes.
inline constexpr char kIdPrefix[] = "Q";          // Q<repo_slug>#<number>: unique per issue
inline constexpr char kTitlePrefix[] = "S";       // title words (positional; also unprefixed)
inline constexpr char kRepoPrefix[] = "XR";       // XRowner/name (lower-case)
inline constexpr char kRepoSlugPrefix[] = "XRS";  // XRSgithub:owner/name
inline constexpr char kOrgPrefix[] = "XO";        // XOowner
inline constexpr char kTrackerPrefix[] = "XTR";   // XTRgithub
inline constexpr char kLabelPrefix[] = "K";       // Klabel name (lower-case, spaces kept)
inline constexpr char kNoLabelTerm[] = "XNOLABEL";
inline constexpr char kStatePrefix[] = "XS";      // XSopen / XSclosed / ...
inline constexpr char kTypePrefix[] = "XY";       // XYissue / XYpr
inline constexpr char kAuthorPrefix[] = "A";      // Alogin (lower-case)
inline constexpr char kAssigneePrefix[] = "XA";   // XAlogin
inline constexpr char kKindPrefix[] = "XK";       // taxonomy kind
inline constexpr char kThemePrefix[] = "XTH";     // taxonomy theme
inline constexpr char kSubthemePrefix[] = "XST";  // taxonomy sub-theme
inline constexpr char kLlmPrefix[] = "XL";        // XLtrue / XLfalse
inline constexpr char kKeywordPrefix[] = "XKW";   // matched llm keywords (Tags.keywords)
inline constexpr char kTaxonomyPrefix[] = "XTX";  // XTXllm-dl/1: taxonomy version of the tags
inline constexpr char kYearPrefix[] = "XD";       // XD2024: UTC year of created_at (facets)
inline constexpr char kCreatedMonthPrefix[] = "XMC";  // XMC2024-06: UTC month of created_at
inline constexpr char kUpdatedMonthPrefix[] = "XMU";  // XMU2024-06: UTC month of updated_at
inline constexpr char kClosedMonthPrefix[] = "XMX";   // XMX2024-06: UTC month of closed_at
// XGNdeleted / XGNtransferred: only in the gone database of deleted and transferred issues
// (index_layout.h, GonePath), which search answers `is:deleted` / `is:transferred` from.
inline constexpr char kGonePrefix[] = "XGN";

// Value slots (numbers via Xapian::sortable_serialise).
inline constexpr Xapian::valueno kCreatedSlot = 0;    // unix seconds
inline constexpr Xapian::valueno kUpdatedSlot = 1;    // unix seconds
inline constexpr Xapian::valueno kClosedSlot = 2;     // unix seconds; empty while open
inline constexpr Xapian::valueno kCommentsSlot = 3;   // comment count
inline constexpr Xapian::valueno kNumberSlot = 4;     // issue number
inline constexpr Xapian::valueno kVersionSlot = 5;    // index::IndexVersion::Encode()
inline constexpr Xapian::valueno kReactionsSlot = 6;  // reactions
inline constexpr Xapian::valueno kFacetsSlot = 7;     // facet values (common/index_facets.h)
inline constexpr Xapian::valueno kTextBoundsSlot = 8;  // field bounds (common/index_text.h)
inline constexpr Xapian::valueno kSectionRangesSlot = 9;  // code and log position ranges (index_text.h)
// Sort keys (scheme sections-4): SortKey(field value, kNumberSlot value) of the created,
// updated and comments slots. Ordering by one of them as a string orders by the field, then by
// issue number, as Xapian::MultiValueKeyMaker over the two slots does; sorting by a value slot
// is what Xapian's remote protocol can carry (a KeyMaker it cannot), so a search over remote
// shards sorts with these (search/pager.cc).
inline constexpr Xapian::valueno kCreatedSortSlot = 10;
inline constexpr Xapian::valueno kUpdatedSortSlot = 11;
inline constexpr Xapian::valueno kCommentsSortSlot = 12;

// SortKey is `value` with each zero byte escaped ("\0\xff"), the terminator "\0\0", then
// `number`: as strings, SortKey(a, n) < SortKey(b, m) exactly when (a, n) < (b, m) pairwise
// (an empty value first), and the reverse order is the pairwise descending one.
inline std::string SortKey(const std::string& value, const std::string& number) {
  std::string key;
  key.reserve(value.size() + 2 + number.size());
  for (const char c : value) {
    key.push_back(c);
    if (c == '\0') key.push_back('\xff');
  }
  key.append("\0\0", 2);
  key.append(number);
  return key;
}

// Metadata keys. "feed:<store_id>" holds the highest consumed change-feed sequence number of
// that crawler worker's store, committed in the same transaction as the documents.
inline constexpr char kFeedMetadataPrefix[] = "feed:";

// Metadata key naming the free-text scheme the documents were indexed with (kTextScheme); the
// search service warns about an index of another scheme (rebuild it with `issuescope reindex`).
inline constexpr char kTextSchemeKey[] = "text_scheme";
// "sections-4" ("sections-3" named an experiment that never shipped: docs/BENCHMARKS.md): the
// free text of sections-2 (common/index_text.h) and the sort key slots
// (kCreatedSortSlot…); an index of sections-2 answers every local query alike and is rebuilt in
// the background for the sort keys that search over remote shards needs.
inline constexpr char kTextScheme[] = "sections-4";
// The scheme before kTextScheme whose free text is the same (only the sort keys are missing).
inline constexpr char kTextSchemeWithoutSortKeys[] = "sections-2";

// Metadata key holding the fingerprint (taxonomy name/version + model hash) the documents'
// tags were made with; the indexer re-tags when it differs from its own.
inline constexpr char kTaggerMetadataKey[] = "tagger";

// Metadata keys of a re-tag in progress, per shard database (written by indexer::Retagger,
// read by index::ReadTaggingStatus for the search service's IndexStatus).
inline constexpr char kRetagFingerprintKey[] = "retag:fingerprint";  // fingerprint being applied
inline constexpr char kRetagCursorKey[] = "retag:cursor";  // last re-tagged docid; unset when done
inline constexpr char kRetagEndKey[] = "retag:end";        // last docid the re-tag visits
inline constexpr char kRetagDoneKey[] = "retag:done";      // documents re-tagged so far
inline constexpr char kRetagTotalKey[] = "retag:total";    // documents to re-tag

// Document data: a serialized issuescope.v1.IssueWithComments (with tags), so hits, snippets
// and GetIssue need no other store.

// IdTerm returns the unique term of an issue.
inline std::string IdTerm(absl::string_view repo_slug, int64_t number) {
  return std::string(kIdPrefix) + std::string(repo_slug) + "#" + std::to_string(number);
}

}  // namespace issuescope::index

// The free-text part of the index schema: how the indexer turns an issue's title, body and
// comments into Xapian terms, and how the search service turns free text into a query whose
// terms match. Both sides call these functions, so the two can never drift apart.
//
// Scheme "sections-2" (the free text of kTextScheme "sections-4"; docs/RELEVANCE.md measures it):
// - Tokens (common/text_tokens.h): identifiers are kept whole and as their parts at
//   consecutive positions (`pin_memory` at p, `pin` at p, `memory` at p+1), so `pin memory`,
//   `pin_memory` and `pin_memory()` all find it and the exact form weighs more; CJK text as
//   characters and bigrams. English stems ("Z" terms, no positions) for words of letters.
// - Sections (common/issue_sections.h): each part of a body or comment is indexed with the
//   weight (wdf per occurrence, kTextWeights) of what it is: the author's prose above code and
//   logs, environment dumps and template text with weight 0 (found, but adding nothing to a
//   score).
// - One unprefixed positional posting list per word over title, body and comments, with a gap
//   of positions between fields, comments and sections so that a phrase never spans two; the
//   title again under kTitlePrefix ("S") for `in:title` and for the title bonus of ranked
//   queries (TitleBonusQuery). `in:body` and `in:comments` are the all-text query with every
//   word, phrase and wildcard checked against the document's field bounds (kTextBoundsSlot):
//   ScopeToField.
//
// Earlier schemes ("unprefixed-1": Xapian's TermGenerator, no sections; before it, prefixed
// fields) are rebuilt from the stored issues by the indexer's background re-tag pass or
// `issuescope reindex`; the search service warns about an index of another scheme meanwhile.
//
// Stateless; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include "issuescope/v1/model.pb.h"
#include "xapian.h"

namespace issuescope::index {

// TextField names the part of an issue a piece of free text is searched in.
enum class TextField { kAll, kTitle, kBody, kComments, kCode, kLogs };

// TextWeights are the weights of each part of an issue in the all-text terms. A term's wdf is
// wdf_scale × (title weight × its title occurrences + Σ section weight × occurrences / norm),
// rounded (at least 1 when it has any weight), where norm = 1 − length_b + length_b × L /
// length_pivot and L is the document's weighed length (Σ weights of its body and comment
// words): BM25's length normalisation applied when indexing, so the search reads no lengths.
struct TextWeights {
  double title = 8;
  double body_prose = 2;     // also a body's exception lines
  double comment_prose = 1;  // also a comment's exception lines
  double code = 1;
  double log = 1;
  double environment = 0;    // found, but adding nothing to a score
  double template_text = 0;
  double wdf_scale = 4;
  double length_b = 0.75;
  double length_pivot = 600;
  double min_norm = 0.5;
};
inline constexpr TextWeights kTextWeights;

// kRankingK1 is BM25's k1 for the wdf of this scheme (search/ranking_weight.h): how fast
// repeated occurrences saturate, in units of wdf_scale.
inline constexpr double kRankingK1 = 2;

// kFieldGap is the gap of positions between title, body and each comment.
inline constexpr Xapian::termpos kFieldGap = 100;
// IndexIssueText adds the free-text terms (and positions) of `issue` to `doc`, and its field
// bounds to kTextBoundsSlot.
void IndexIssueText(const v1::IssueWithComments& issue, Xapian::Document* doc);

// TextBounds are the first positions of the body and of the comments in a document's
// all-text terms (the title starts at 1). Positions from `comments` on belong to comments.
struct TextBounds {
  uint32_t body = 0;
  uint32_t comments = 0;
};

// EncodeTextBounds / DecodeTextBounds are the kTextBoundsSlot value's encoding.
std::string EncodeTextBounds(const TextBounds& bounds);
std::optional<TextBounds> DecodeTextBounds(const std::string& value);

// SectionRange is the position range [begin, end] of one code block or log (a log's exception
// line included) in a document's all-text terms, body or comments: what `in:code` and `in:logs`
// search (kSectionRangesSlot).
struct SectionRange {
  bool log = false;  // a log or exception line; else code
  uint32_t begin = 0, end = 0;
};

// EncodeSectionRanges / DecodeSectionRanges are the kSectionRangesSlot value's encoding.
std::string EncodeSectionRanges(const std::vector<SectionRange>& ranges);
std::vector<SectionRange> DecodeSectionRanges(const std::string& value);

}  // namespace issuescope::index

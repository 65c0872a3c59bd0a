// The free-text part of the index schema: how the indexer turns an issue's title, body and
// comments into Xapian terms, and how the search service parses free text so that its terms
// match. Both sides call these functions, so the two can never drift apart.
//
// Scheme "unprefixed-1" (kTextScheme; measured in docs/BENCHMARKS.md, "Free-text term
// scheme"): the title, the body and every comment are indexed ONCE, unprefixed, into one
// positional posting list per word, in that order, with a gap of positions between the fields
// and between comments so that a phrase never spans two of them; the title's wdf counts twice
// (the title boost). English stemming STEM_SOME: an unstemmed positional term plus a "Z" stem
// per word, so exact forms, wildcards on surface forms and stems all work. So a plain word is
// one posting list (its total is its term frequency) and a phrase checks one position list per
// word. The title is indexed a second time under kTitlePrefix (titles are short) so that
// `in:title` is a posting list of its own. `in:body` and `in:comments` are the all-text query
// with every word, phrase and wildcard checked against the document's field bounds (the first
// body and first comment positions, kept in kTextBoundsSlot): ScopeToField.
//
// Until "unprefixed-1" each field had its own prefixed terms (XB body, XC comments), so a plain
// word was the OR of three posting lists. Each shard records its scheme (kTextSchemeKey); a
// shard of another scheme is rebuilt from the stored issues by the indexer's background re-tag
// pass or `issuescope reindex`, and the search service warns about it meanwhile.
//
// Stateless; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "issuescope/v1/model.pb.h"
#include "xapian.h"

namespace issuescope::index {

// TextField names the part of an issue a piece of free text is searched in.
enum class TextField { kAll, kTitle, kBody, kComments };

// IndexIssueText adds the free-text terms (and positions) of `issue` to `doc`, and its field
// bounds to kTextBoundsSlot.
void IndexIssueText(const v1::IssueWithComments& issue, Xapian::Document* doc);

// IndexIssueText is the same with a caller-owned TermGenerator, reused across documents by
// bulk indexers (it saves building a stemmer per document). `gen` must come from
// MakeTextTermGenerator; its document is replaced.
void IndexIssueText(const v1::IssueWithComments& issue, Xapian::Document* doc,
                    Xapian::TermGenerator* gen);

// MakeTextTermGenerator returns a TermGenerator configured as IndexIssueText needs (stemmer,
// stemming strategy, CJK n-grams). Not thread-safe: one per thread.
Xapian::TermGenerator MakeTextTermGenerator();

// ConfigureTextParser sets stemmer, stemming strategy and field prefix of `parser` so that text
// parsed with TextParseFlags() matches what IndexIssueText indexed: kTitle searches the title
// terms; every other field the all-text terms (kBody and kComments then need ScopeToField).
void ConfigureTextParser(TextField field, Xapian::QueryParser* parser);

// TextParseFlags are the Xapian::QueryParser flags for free text (phrases, CJK n-grams,
// wildcards).
unsigned TextParseFlags();

// ScopeToField restricts `text`, a query parsed for TextField::kAll, to the body or the
// comments (`field`; kAll and kTitle return `text` unchanged): each term, phrase and wildcard
// of it must occur inside that field (a stem matches through its surface forms). Weights stay
// those of the all-text terms. Document-level checks read positions, so a scoped query costs
// more per match than an unscoped one. `db` expands stems and wildcards.
Xapian::Query ScopeToField(const Xapian::Query& text, TextField field, const Xapian::Database& db);

// TextBounds are the first positions of the body and of the comments in a document's
// all-text terms (the title starts at 1). Positions from `comments` on belong to comments.
struct TextBounds {
  uint32_t body = 0;
  uint32_t comments = 0;
};

// EncodeTextBounds / DecodeTextBounds are the kTextBoundsSlot value's encoding.
std::string EncodeTextBounds(const TextBounds& bounds);
std::optional<TextBounds> DecodeTextBounds(const std::string& value);

}  // namespace issuescope::index

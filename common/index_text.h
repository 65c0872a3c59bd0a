// The free-text part of the index schema: how the indexer turns an issue's title, body and
// comments into Xapian terms, and how the search service parses free text so that its terms
// match. Both sides call these functions, so the two can never drift apart.
//
// Scheme (measured in docs/BENCHMARKS.md, "Free-text term scheme"): each field is indexed ONCE,
// under its own prefix — title under kTitlePrefix (wdf 2, the title boost), body under
// kBodyPrefix, every comment under kCommentPrefix — with positions (phrases must match in any
// field, comments included) and English stemming STEM_SOME (an unstemmed positional term plus
// a "Z" stem per word, so exact forms, wildcards on surface forms and stems all work). Until
// this scheme every text was also indexed unprefixed, which doubled the terms and the cost.
//
// Query side: kAll searches the three field prefixes (Xapian's QueryParser ORs a query built for
// each prefix, phrases included) and also the unprefixed form. The unprefixed alternative
// matches nothing in an index built with this scheme; it keeps MSet::snippet highlighting
// (which only recognises unprefixed terms) and keeps indexes written by the old scheme
// searchable. kTitle, kBody and kComments (`in:title|body|comments`) search one prefix.
//
// Stateless; thread-safe.
#pragma once

#include "issuescope/v1/model.pb.h"
#include "xapian.h"

namespace issuescope::index {

// TextField names the part of an issue a piece of free text is searched in.
enum class TextField { kAll, kTitle, kBody, kComments };

// IndexIssueText adds the free-text terms (and positions) of `issue` to `doc`.
void IndexIssueText(const v1::IssueWithComments& issue, Xapian::Document* doc);

// IndexIssueText is the same with a caller-owned TermGenerator, reused across documents by
// bulk indexers (it saves building a stemmer per document). `gen` must come from
// MakeTextTermGenerator; its document is replaced.
void IndexIssueText(const v1::IssueWithComments& issue, Xapian::Document* doc,
                    Xapian::TermGenerator* gen);

// MakeTextTermGenerator returns a TermGenerator configured as IndexIssueText needs (stemmer,
// stemming strategy, CJK n-grams). Not thread-safe: one per thread.
Xapian::TermGenerator MakeTextTermGenerator();

// ConfigureTextParser sets stemmer, stemming strategy and field prefixes of `parser` so that
// text parsed with TextParseFlags() matches what IndexIssueText indexed for `field`.
void ConfigureTextParser(TextField field, Xapian::QueryParser* parser);

// TextParseFlags are the Xapian::QueryParser flags for free text (phrases, CJK n-grams,
// wildcards).
unsigned TextParseFlags();

}  // namespace issuescope::index

// Snippets of search hits: a short excerpt of an issue as plain text (no Markdown syntax, no
// template headings), HTML-escaped, with the matched words wrapped in <mark>…</mark>.
//
// Where from: the author's prose of the body (common/issue_sections.h), else the prose of the
// first comments that match, else a matching exception line, code block or log, else an
// environment dump; the window with the most distinct query words wins, the earliest on ties.
// Queries without free text get the beginning of the body's prose. Words are matched with the
// tokens of the index (common/text_tokens.h): a query for `pin memory` marks `pin_memory()`,
// one for `crashes` marks `crash` and `crashed` (same stem).
//
// Plain functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "issuescope/v1/model.pb.h"
#include "xapian.h"

namespace issuescope::search {

// HtmlEscape escapes &, <, >, " and ' for HTML.
std::string HtmlEscape(absl::string_view text);

// LeadingExcerpt returns about `length` bytes from the start of `text` (cut at a word boundary
// and a UTF-8 character boundary, "…" appended when cut), HTML-escaped.
std::string LeadingExcerpt(absl::string_view text, size_t length);

// SnippetTerms are what a word of a text must be to count as a match of a query.
struct SnippetTerms {
  // Unprefixed terms of the query: words, identifier wholes and parts, CJK characters/bigrams.
  absl::flat_hash_set<std::string> words;
  // Stems of the query's stemmed words ("Z" terms without the Z).
  absl::flat_hash_set<std::string> stems;
  // Patterns of the query's wildcards (a word starting with one matches).
  std::vector<std::string> wildcards;
  bool empty() const { return words.empty() && stems.empty() && wildcards.empty(); }
};

// SnippetTermsOf collects the SnippetTerms of `query` (prefixed terms, i.e. qualifiers and the
// title bonus, left out).
SnippetTerms SnippetTermsOf(const Xapian::Query& query);

// MakeSnippet returns the snippet of `issue`, about `length` bytes of text, for a query with
// `terms` (has_text false: the beginning of the body's prose).
std::string MakeSnippet(const SnippetTerms& terms, bool has_text,
                        const v1::IssueWithComments& issue, size_t length);

}  // namespace issuescope::search

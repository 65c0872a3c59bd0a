// Snippets of search hits: a short, HTML-escaped excerpt of an issue with the matched terms
// wrapped in <mark>…</mark>. Taken from the body, or from the first matching comment when the
// body does not match, or the beginning of the body for queries without free text. Plain
// functions; as thread-safe as the MSet they read (use it from one thread).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "issuescope/v1/model.pb.h"
#include "xapian.h"

namespace issuescope::search {

// HtmlEscape escapes &, <, >, " and ' for HTML.
std::string HtmlEscape(absl::string_view text);

// LeadingExcerpt returns about `length` bytes from the start of `text` (cut at a word boundary
// and a UTF-8 character boundary, "…" appended when cut), HTML-escaped.
std::string LeadingExcerpt(absl::string_view text, size_t length);

// SnippetRoots are lower-case strings of which every text that can hold a match of `query`
// contains at least one: the query's free-text terms, stems without a final 'i' (Porter turns
// a final "y" into "i": happy -> happi), prefixed (boolean) terms left out. MakeSnippet skips
// the body and comments that contain none of them without asking Xapian to find a passage.
std::vector<std::string> SnippetRoots(const Xapian::Query& query);

// MakeSnippet returns the snippet of `issue` for the query behind `mset` (has_text false: the
// beginning of the body). `roots` (SnippetRoots of the query; empty: no pre-check) only saves
// work: a text without any of them is not searched for a passage.
std::string MakeSnippet(const Xapian::MSet& mset, bool has_text,
                        const v1::IssueWithComments& issue, size_t length,
                        const std::vector<std::string>& roots = {});

}  // namespace issuescope::search

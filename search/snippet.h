// Snippets of search hits: a short, HTML-escaped excerpt of an issue with the matched terms
// wrapped in <mark>…</mark>. Taken from the body, or from the first matching comment when the
// body does not match, or the beginning of the body for queries without free text. Plain
// functions; as thread-safe as the MSet they read (use it from one thread).
#pragma once

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"
#include "issuescope/v1/model.pb.h"
#include "xapian.h"

namespace issuescope::search {

// HtmlEscape escapes &, <, >, " and ' for HTML.
std::string HtmlEscape(absl::string_view text);

// LeadingExcerpt returns about `length` bytes from the start of `text` (cut at a word boundary
// and a UTF-8 character boundary, "…" appended when cut), HTML-escaped.
std::string LeadingExcerpt(absl::string_view text, size_t length);

// MakeSnippet returns the snippet of `issue` for the query behind `mset` (has_text false: the
// beginning of the body).
std::string MakeSnippet(const Xapian::MSet& mset, bool has_text,
                        const v1::IssueWithComments& issue, size_t length);

}  // namespace issuescope::search

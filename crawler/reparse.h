// Reparse re-derives the stored issues and comments of a worker's IssueStore from the raw pages
// it kept (IssueStore::PutRawPage), with the current parsers, and applies them like a crawl
// would: a record changes (and a change reaches the feed) only when the re-parsed version differs
// from the stored one, so after a parser fix only the affected records are re-indexed. Pages are
// applied per repository in fetch order, under the repository's current fencing epoch; pull
// requests and their comments are left out when the crawl that fetched the page left them out.
// Tombstones stay (a deleted issue's old page never replaces them).
//
// Thread-safety: runs on the caller's thread; the store may be used concurrently (a running
// crawl's newer pages win by updated_at as usual).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "crawler/issue_store.h"

namespace issuescope::crawler {

// ReparseResult counts what a reparse did.
struct ReparseResult {
  // Raw pages read, and those the current parser rejected (their records are left as stored).
  int64_t pages = 0;
  int64_t bad_pages = 0;
  // Items left out of pages that parsed: bad items (crawler/github_parse.h, BadItem) and items
  // updated after their page was fetched (the crawl quarantined both).
  int64_t bad_items = 0;
  // Records parsed from the pages, and those that differed from the store and were re-applied.
  int64_t issues_parsed = 0;
  int64_t issues_changed = 0;
  int64_t comments_parsed = 0;
  int64_t comments_changed = 0;
  // The first parse error (with its page URL), empty when none.
  std::string first_error;
};

// Reparse re-derives the records of `repo_slug` (every repository when empty). Errors: the
// store's (DATA_LOSS for a corrupt raw page, FAILED_PRECONDITION when fenced meanwhile).
absl::StatusOr<ReparseResult> Reparse(IssueStore* store, absl::string_view repo_slug);

}  // namespace issuescope::crawler

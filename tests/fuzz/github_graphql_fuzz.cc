// Fuzz target: GitHub GraphQL answers (crawler/github_graphql.h): the threads page, the
// follow-up comment pages, the numbers page, the rateLimit object and the timeout test. Every
// parser must return a status (never throw or crash) and keep its invariants: comments filed
// under positive issue numbers, one updatedAt per listed number, a next page only with a cursor.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "crawler/github_graphql.h"

namespace cr = issuescope::crawler;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view body(reinterpret_cast<const char*>(data), size);
  issuescope::v1::RepositoryRef repo;
  repo.set_tracker(issuescope::v1::TRACKER_GITHUB);
  repo.set_owner("o");
  repo.set_name("r");
  if (auto page = cr::ParseGraphqlThreadsPage(body, repo); page.ok()) {
    if (page->numbers.size() != page->updated.size()) __builtin_trap();
    if (page->has_next && page->end_cursor.empty()) __builtin_trap();
    for (const auto& c : page->comments) {
      if (c.issue_number() <= 0) __builtin_trap();
    }
  }
  const std::vector<cr::ThreadCursor> asked = {{1, "a"}, {2, "b"}};
  for (const auto* threads : {&asked, static_cast<const std::vector<cr::ThreadCursor>*>(nullptr)}) {
    auto pages = threads ? cr::ParseGraphqlCommentPages(body, repo, *threads)
                         : cr::ParseGraphqlCommentPages(body, repo);
    if (pages.ok()) {
      for (const auto& c : pages->comments) {
        if (c.issue_number() <= 0) __builtin_trap();
      }
    }
  }
  if (auto numbers = cr::ParseGraphqlNumbersPage(body); numbers.ok()) {
    for (int64_t n : numbers->numbers) {
      if (n <= 0) __builtin_trap();
    }
  }
  (void)cr::ParseGraphqlRate(body);
  (void)cr::IsGraphqlTimeout(200, body);
  return 0;
}

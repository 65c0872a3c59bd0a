#include "reparse_command.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/repo_slug.h"
#include "common/status_macros.h"
#include "crawler/issue_store.h"
#include "crawler/reparse.h"
#include "crawl_command.h"
#include "progress.h"
#include "indexer/index_writer.h"

namespace issuescope::cli {

absl::Status RunReparse(const ReparseCommandOptions& options) {
  if (options.data_dir.empty()) return absl::InvalidArgumentError("--data is required");
  const std::string store_dir = options.data_dir + "/store";
  if (!std::filesystem::exists(store_dir)) {
    return absl::NotFoundError(
        absl::StrCat("no store in ", options.data_dir, " (run `issuescope crawl` first)"));
  }
  std::string slug;
  if (!options.repo.empty()) {
    ASSIGN_OR_RETURN(v1::RepositoryRef ref, ParseRepoSpec(options.repo));
    slug = RepoSlug(ref);
  }
  crawler::StoreOptions store_options;
  store_options.create_if_missing = false;
  ASSIGN_OR_RETURN(auto store, crawler::IssueStore::Open(store_dir, store_options));
  ASSIGN_OR_RETURN(crawler::ReparseResult r, crawler::Reparse(store.get(), slug));
  int64_t indexed = 0;
  if (std::filesystem::exists(options.data_dir + "/index")) {
    ASSIGN_OR_RETURN(auto writer, indexer::IndexWriter::Open(options.data_dir + "/index"));
    ASSIGN_OR_RETURN(indexed, CatchUpIndex(*store, *writer));
  }
  absl::PrintF(
      "reparsed %s raw pages of %s (stored with %s compression): %s issues and %s comments "
      "parsed, %s issues and %s comments changed; %s changes indexed\n",
      WithThousands(r.pages), slug.empty() ? std::string("all repositories") : slug,
      store->raw_compression(), WithThousands(r.issues_parsed), WithThousands(r.comments_parsed),
      WithThousands(r.issues_changed), WithThousands(r.comments_changed), WithThousands(indexed));
  if (r.bad_pages > 0) {
    return absl::DataLossError(absl::StrCat(r.bad_pages, " raw pages no longer parse (their ",
                                            "records were left as stored); first: ",
                                            r.first_error));
  }
  return absl::OkStatus();
}

}  // namespace issuescope::cli

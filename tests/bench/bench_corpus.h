// The benchmark corpus: realistic DL-framework issues from the tracker simulator's generator,
// generated in chunks (so a million issues never sit in memory at once) and converted to the
// crawler's records (issuescope.v1.Issue / Comment, as a crawl would store them).
//
// Chunk c is GenerateCorpus with seed `seed + c` and `repos_per_chunk` repositories whose names
// get the suffix "-c<c>", so every repository slug is unique. Deterministic: the same options
// give the same issues. Free functions; thread-compatible.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "issuescope/v1/model.pb.h"

namespace issuescope::bench {

// CorpusOptions say how many issues to make and how.
struct CorpusOptions {
  // issues is the total number of issues (pull requests included). Default: 100000.
  int64_t issues = 100000;
  // issues_per_repo per generated repository. Default: 5000.
  int issues_per_repo = 5000;
  // repos_per_chunk repositories are generated at a time. Default: 4.
  int repos_per_chunk = 4;
  // comments_per_issue is the Poisson mean of comments per issue. Default: 3.
  double comments_per_issue = 3.0;
  // seed of the first chunk. Default: 1.
  uint64_t seed = 1;
};

// RepoIssues is one repository's issues, with comments, as stored by a crawl.
struct RepoIssues {
  std::string slug;  // "github:owner/name"
  std::vector<v1::IssueWithComments> issues;
};

// GenerateChunks generates the corpus chunk by chunk and calls `fn` with each repository's
// issues; stops early when fn returns an error, which is returned.
absl::Status GenerateChunks(const CorpusOptions& options,
                            const std::function<absl::Status(RepoIssues&)>& fn);

// TextBytes is the size of an issue's free text: title + body + comment bodies.
int64_t TextBytes(const v1::IssueWithComments& issue);

}  // namespace issuescope::bench

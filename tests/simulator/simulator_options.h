// SimulatorOptions: how a TrackerSimulator serves and what corpus it generates or loads.
// A plain value type; copy freely. ValidateOptions names the first bad field.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/clock.h"
#include "tests/simulator/corpus.h"
#include "tests/simulator/faults.h"

namespace issuescope::sim {

// RepoSpec is one generated repository given explicitly: its tracker, "owner/name" (GitLab
// owners may contain '/') and issue count (-1 = issues_per_repo).
struct RepoSpec {
  Tracker tracker = Tracker::kGithub;
  std::string owner;
  std::string name;
  int issues = -1;
};

// ParseRepoSpec parses "[TRACKER:]OWNER/NAME[:ISSUES]" (the --repo flag), e.g.
// "gitlab:group/project:500", "gitee:mindspore/mindspore", "pytorch/pytorch".
absl::StatusOr<RepoSpec> ParseRepoSpec(absl::string_view text);

struct SimulatorOptions {
  // listen_host is the address to bind. Default: "127.0.0.1".
  std::string listen_host = "127.0.0.1";
  // port to bind; 0 picks an ephemeral port (see TrackerSimulator::port()). Default: 0.
  int port = 0;
  // repos is the number of generated GitHub repositories (named after real DL projects, then
  // suffixed "-2", "-3", ...) when repo_specs is empty. Default: 3.
  int repos = 3;
  // repo_specs lists the generated repositories explicitly (any tracker); when non-empty it
  // replaces `repos`. Default: empty.
  std::vector<RepoSpec> repo_specs;
  // issues_per_repo is the number of generated issues (pull requests included) per repository.
  // Default: 500.
  int issues_per_repo = 500;
  // comments_per_issue is the mean of the (Poisson) number of comments per issue. Default: 3.0.
  double comments_per_issue = 3.0;
  // long_thread_fraction is the share of generated issues that get a long thread instead: 101
  // to long_thread_max comments (uniform), the tail DL-framework trackers have. Default: 0.
  double long_thread_fraction = 0;
  int long_thread_max = 400;
  // seed makes generation deterministic: the same options give a byte-identical corpus.
  // Default: 1.
  uint64_t seed = 1;
  // corpus_file is a JSONL corpus (one issue per line); when set it replaces generation and the
  // generation fields above are ignored. Default: "" (generate).
  std::string corpus_file;
  // plant_phrase is planted verbatim in exactly plant_count issues (body or a comment); each of
  // its words also appears, never adjacent and never in phrase order, in a few other issues.
  // Its words must be outside the generator's vocabulary. Default: "" (nothing planted).
  std::string plant_phrase;
  // plant_count is how many issues carry plant_phrase. Default: 0.
  int plant_count = 0;
  // pr_fraction is the share of generated issues that are pull requests. Default: 0.15.
  double pr_fraction = 0.15;
  // cjk_fraction is the share of generated GitHub and GitLab issues written in Chinese.
  // Default: 0.1.
  double cjk_fraction = 0.1;
  // gitee_cjk_fraction is the share of generated Gitee issues written in Chinese. Default: 0.8.
  double gitee_cjk_fraction = 0.8;
  // system_note_fraction is the probability that a generated GitLab issue gets system notes
  // ("added ~label label", "assigned to @x", "closed"). Default: 0.5.
  double system_note_fraction = 0.5;
  // rate_limit is the number of API requests per hour of simulator time per token (GitHub: the
  // Authorization value; GitLab: PRIVATE-TOKEN or Authorization: Bearer; Gitee: access_token;
  // requests without one share their tracker's "anonymous" budget). faults.budget overrides it.
  // Default: 5000.
  int64_t rate_limit = 5000;
  // faults to inject from the start (see faults.h; POST /_sim/faults changes them later).
  FaultConfig faults;
  // actions (transfers, deletions) applied to the corpus at Start.
  FaultActions actions;
  // threads is the size of the HTTP worker pool. Default: 8.
  int threads = 8;
  // clock is the time seam: simulator time advances with it. Not owned; must outlive the
  // simulator. Default: nullptr (the real clock).
  Clock* clock = nullptr;
};

// ValidateOptions returns INVALID_ARGUMENT naming the first out-of-range field.
absl::Status ValidateOptions(const SimulatorOptions& options);

}  // namespace issuescope::sim

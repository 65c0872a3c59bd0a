// Assignment of repositories to workers: weighted rendezvous (highest-random-weight) hashing with
// bounded loads, sticky to the current owners.
//
// Each (worker, repository) pair gets a deterministic score; weighted by the worker's capacity
// w the score is -w / ln(h), h the pair's hash mapped into (0, 1), so a worker's expected share of
// repositories is proportional to w. Repositories differ in size (issues), so AssignRepositories
// also bounds every worker's load (the sum of its repositories' sizes) by
// (1 + tolerance) * its weighted share of the total, and it keeps each repository with its
// current owner while that owner is eligible and under its bound. Hence: a re-crawl goes to the
// same worker (sticky); a joining worker takes repositories only from workers over their new
// bound; a leaving worker's repositories go to the others in rendezvous order; and loads stay
// within the bound around the weighted mean.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace issuescope::coordinator {

// RendezvousScore is the deterministic 64-bit hash of `worker_id` for `repo_slug`; stable
// across processes, builds and platforms.
uint64_t RendezvousScore(absl::string_view worker_id, absl::string_view repo_slug);

// WeightedRendezvousScore is -weight / ln(h), h = RendezvousScore mapped into (0, 1). Higher
// wins. `weight` must be positive.
double WeightedRendezvousScore(absl::string_view worker_id, absl::string_view repo_slug,
                               double weight);

// RendezvousOwner returns the worker among `workers` (equal weights) with the highest score for
// `repo_slug` (ties broken by the smaller id), or "" when `workers` is empty.
std::string RendezvousOwner(const std::vector<std::string>& workers, absl::string_view repo_slug);

// AssignableWorker is a worker that may own repositories.
struct AssignableWorker {
  std::string id;
  // Relative share (the worker's capacity); must be positive.
  double weight = 1;
};

// AssignableRepo is a repository to place.
struct AssignableRepo {
  std::string slug;
  // Load the repository puts on its owner (e.g. its estimated issues); 0 or less means unknown
  // and counts as the average known size.
  int64_t size = 1;
  // Current owner ("" if none); kept while it is among the workers and under its bound.
  std::string owner;
};

// kDefaultLoadTolerance is how far above its weighted share a worker's load may go.
inline constexpr double kDefaultLoadTolerance = 0.05;

// AssignRepositories places every repository on one of `workers` (see the file comment) and
// returns slug -> worker id; empty when `workers` is empty. Deterministic: the result depends
// only on the inputs, not on their order.
std::map<std::string, std::string> AssignRepositories(
    const std::vector<AssignableWorker>& workers, const std::vector<AssignableRepo>& repos,
    double tolerance = kDefaultLoadTolerance);

}  // namespace issuescope::coordinator

// Assignment of repositories to workers by rendezvous (highest-random-weight) hashing: each
// (worker, repository) pair gets a deterministic score and a repository belongs to the live
// worker with the highest score. Adding or removing a worker moves only the repositories it
// wins or held, and the shares are balanced. Weighted shares (capacity) and draining fit here
// later: a weight scales the score, a draining worker is left out of `workers`.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace issuescope::coordinator {

// RendezvousScore is the deterministic 64-bit score of `worker_id` for `repo_slug`; stable
// across processes, builds and platforms.
uint64_t RendezvousScore(absl::string_view worker_id, absl::string_view repo_slug);

// RendezvousOwner returns the worker among `workers` with the highest score for `repo_slug`
// (ties broken by the smaller id), or "" when `workers` is empty.
std::string RendezvousOwner(const std::vector<std::string>& workers, absl::string_view repo_slug);

}  // namespace issuescope::coordinator

#include "coordinator/assignment.h"

namespace issuescope::coordinator {
namespace {

// FNV-1a over the bytes, then the SplitMix64 finaliser for avalanche.
uint64_t Fnv1a(uint64_t hash, absl::string_view bytes) {
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

uint64_t RendezvousScore(absl::string_view worker_id, absl::string_view repo_slug) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  hash = Fnv1a(hash, worker_id);
  hash = Fnv1a(hash, absl::string_view("\0", 1));
  hash = Fnv1a(hash, repo_slug);
  return Mix(hash);
}

std::string RendezvousOwner(const std::vector<std::string>& workers, absl::string_view repo_slug) {
  std::string best;
  uint64_t best_score = 0;
  for (const std::string& worker : workers) {
    uint64_t score = RendezvousScore(worker, repo_slug);
    if (best.empty() || score > best_score || (score == best_score && worker < best)) {
      best = worker;
      best_score = score;
    }
  }
  return best;
}

}  // namespace issuescope::coordinator

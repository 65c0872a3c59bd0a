#include "assignment.h"

#include <algorithm>
#include <cmath>

#include "common/hash.h"

namespace issuescope::coordinator {

uint64_t RendezvousScore(absl::string_view worker_id, absl::string_view repo_slug) {
  // FNV-1a over "worker\0repo", then the SplitMix64 finaliser for avalanche.
  uint64_t hash = Fnv1a(worker_id);
  hash = Fnv1a(hash, absl::string_view("\0", 1));
  hash = Fnv1a(hash, repo_slug);
  return Mix64(hash);
}

double WeightedRendezvousScore(absl::string_view worker_id, absl::string_view repo_slug,
                               double weight) {
  // The top 53 bits, centred in their interval: h in (0, 1), never 0 or 1.
  const double h =
      (static_cast<double>(RendezvousScore(worker_id, repo_slug) >> 11) + 0.5) / 9007199254740992.0;
  return -weight / std::log(h);
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

std::map<std::string, std::string> AssignRepositories(
    const std::vector<AssignableWorker>& workers_in, const std::vector<AssignableRepo>& repos_in,
    double tolerance) {
  std::map<std::string, std::string> result;
  if (workers_in.empty()) return result;
  std::vector<AssignableWorker> workers = workers_in;
  std::sort(workers.begin(), workers.end(),
            [](const AssignableWorker& a, const AssignableWorker& b) { return a.id < b.id; });
  std::vector<AssignableRepo> repos = repos_in;
  // A repository whose size is not known yet (no estimate reported) weighs as much as the
  // average known one: counting it as tiny would pile unknown repositories on one worker and
  // move them again — a full crawl each — once their estimates arrive.
  int64_t known = 0, known_total = 0;
  for (const auto& repo : repos) {
    if (repo.size > 0) {
      ++known;
      known_total += repo.size;
    }
  }
  const int64_t unknown_size = known > 0 ? std::max<int64_t>(1, known_total / known) : 1;
  for (auto& repo : repos) repo.size = repo.size > 0 ? repo.size : unknown_size;
  // Largest first, so the small ones fill the gaps the large ones leave.
  std::sort(repos.begin(), repos.end(), [](const AssignableRepo& a, const AssignableRepo& b) {
    return a.size != b.size ? a.size > b.size : a.slug < b.slug;
  });

  double total = 0;
  double weights = 0;
  for (const auto& repo : repos) total += static_cast<double>(repo.size);
  for (const auto& worker : workers) weights += std::max(worker.weight, 1e-9);
  std::map<std::string, double> bound;
  std::map<std::string, double> load;
  std::map<std::string, double> weight;
  for (const auto& worker : workers) {
    double w = std::max(worker.weight, 1e-9);
    weight[worker.id] = w;
    bound[worker.id] = (1 + tolerance) * total * w / weights;
    load[worker.id] = 0;
  }

  // Sticky pass: each repository stays with its eligible owner while the owner has room. An
  // owner that has to give repositories up is full: it takes none in the next pass, so nothing
  // moves between two workers that both keep what they can.
  std::vector<const AssignableRepo*> unplaced;
  std::map<std::string, bool> full;
  for (const auto& repo : repos) {
    auto it = load.find(repo.owner);
    if (it != load.end() && it->second + static_cast<double>(repo.size) <= bound[repo.owner]) {
      it->second += static_cast<double>(repo.size);
      result[repo.slug] = repo.owner;
    } else {
      if (it != load.end()) full[repo.owner] = true;
      unplaced.push_back(&repo);
    }
  }
  // Rendezvous pass: the highest-scoring worker with room; when none has room, the one whose
  // load relative to its weight stays lowest.
  for (const AssignableRepo* repo : unplaced) {
    const double size = static_cast<double>(repo->size);
    const std::string* best = nullptr;
    double best_score = 0;
    for (const auto& worker : workers) {
      if (full[worker.id] || load[worker.id] + size > bound[worker.id]) continue;
      double score = WeightedRendezvousScore(worker.id, repo->slug, weight[worker.id]);
      if (best == nullptr || score > best_score) {
        best = &worker.id;
        best_score = score;
      }
    }
    if (best == nullptr) {
      double best_ratio = 0;
      for (const auto& worker : workers) {
        double ratio = (load[worker.id] + size) / weight[worker.id];
        if (best == nullptr || ratio < best_ratio) {
          best = &worker.id;
          best_ratio = ratio;
        }
      }
      // No worker has room (the sizes do not divide evenly, e.g. 3 equal repositories on 2
      // workers): a move that does not make the result clearly more even would only flap
      // between re-crawls — and a moved repository costs a full crawl — so the owner keeps it.
      auto owner = weight.find(repo->owner);
      if (owner != weight.end() && *best != repo->owner) {
        const double owner_ratio = (load[repo->owner] + size) / owner->second;
        if (owner_ratio <= best_ratio * (1 + tolerance) + 1e-9) best = &owner->first;
      }
    }
    load[*best] += size;
    result[repo->slug] = *best;
  }
  return result;
}

}  // namespace issuescope::coordinator

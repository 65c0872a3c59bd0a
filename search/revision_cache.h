// RevisionCache keeps values derived from the contents of an index (period terms, facet counts
// from term frequencies) for one revision of it: RevisionKey (search/match_split.h) names every
// shard's UUID and revision, so a commit, a rebuild or another index starts afresh. An empty
// revision (an in-memory database, which has no UUID) is never cached. Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace issuescope::search {

template <typename Key, typename Value>
class RevisionCache {
 public:
  // Get returns the value of `key` for `revision`, computing it with `compute()` (outside the
  // lock) when the cache does not hold it.
  template <typename Compute>
  Value Get(const std::string& revision, const Key& key, Compute compute) {
    if (revision.empty()) return compute();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (revision_ == revision) {
        auto found = values_.find(key);
        if (found != values_.end()) return found->second;
      }
    }
    Value value = compute();
    std::lock_guard<std::mutex> lock(mu_);
    if (revision_ != revision) {
      values_.clear();
      revision_ = revision;
    }
    values_[key] = value;
    return value;
  }

 private:
  std::mutex mu_;
  std::string revision_;
  std::map<Key, Value> values_;
};

}  // namespace issuescope::search

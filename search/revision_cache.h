// RevisionCache keeps values derived from the contents of an index (period terms, facet counts
// from term frequencies) for the last few revisions seen: RevisionKey (search/match_split.h)
// names every shard's UUID and revision, so a commit, a rebuild or another index starts afresh.
// It holds kSlots revisions, least recently used out first, so a search service answering from
// two indexes by turns (the live index and its gone databases, searcher.h) keeps both. An empty
// revision (an in-memory database, which has no UUID) is never cached. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace issuescope::search {

template <typename Key, typename Value>
class RevisionCache {
 public:
  // Revisions kept at once.
  static constexpr size_t kSlots = 4;

  // Get returns the value of `key` for `revision`, computing it with `compute()` (outside the
  // lock) when the cache does not hold it.
  template <typename Compute>
  Value Get(const std::string& revision, const Key& key, Compute compute) {
    if (revision.empty()) return compute();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (Slot* slot = Find(revision)) {
        slot->used = ++clock_;
        auto found = slot->values.find(key);
        if (found != slot->values.end()) return found->second;
      }
    }
    Value value = compute();
    std::lock_guard<std::mutex> lock(mu_);
    Slot* slot = Find(revision);
    if (slot == nullptr) {
      if (slots_.size() < kSlots) {
        slot = &slots_.emplace_back();
      } else {
        slot = &slots_.front();
        for (Slot& s : slots_) {
          if (s.used < slot->used) slot = &s;
        }
        slot->values.clear();
      }
      slot->revision = revision;
    }
    slot->used = ++clock_;
    slot->values[key] = value;
    return value;
  }

 private:
  struct Slot {
    std::string revision;
    uint64_t used = 0;
    std::map<Key, Value> values;
  };

  Slot* Find(const std::string& revision) {
    for (Slot& s : slots_) {
      if (s.revision == revision) return &s;
    }
    return nullptr;
  }

  std::mutex mu_;
  uint64_t clock_ = 0;
  std::vector<Slot> slots_;
};

}  // namespace issuescope::search

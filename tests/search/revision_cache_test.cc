// RevisionCache: values are computed once per revision and key, several revisions are kept
// (least recently used out first), and an empty revision is never cached.
#include "search/revision_cache.h"

#include <string>

#include "gtest/gtest.h"

namespace issuescope::search {
namespace {

TEST(RevisionCacheTest, KeepsSeveralRevisionsAndDropsTheLeastRecentlyUsed) {
  RevisionCache<std::string, int> cache;
  int computed = 0;
  auto get = [&](const std::string& revision, const std::string& key) {
    return cache.Get(revision, key, [&] {
      ++computed;
      return static_cast<int>(revision.size() * 10 + key.size());
    });
  };
  EXPECT_EQ(get("live@1", "k"), 61);
  EXPECT_EQ(get("gone@1", "k"), 61);
  // Alternating between two revisions computes nothing again.
  for (int i = 0; i < 3; ++i) {
    get("live@1", "k");
    get("gone@1", "k");
  }
  EXPECT_EQ(computed, 2);
  // Fill the other slots; "live@1" stays the most recently used of the first two.
  get("r3", "k");
  get("r4", "k");
  get("live@1", "k");
  EXPECT_EQ(computed, 4);
  get("r5", "k");  // evicts gone@1, the least recently used
  EXPECT_EQ(computed, 5);
  get("live@1", "k");
  EXPECT_EQ(computed, 5);
  get("gone@1", "k");
  EXPECT_EQ(computed, 6);
  // An in-memory index (no revision) is computed every time.
  get("", "k");
  get("", "k");
  EXPECT_EQ(computed, 8);
}

}  // namespace
}  // namespace issuescope::search

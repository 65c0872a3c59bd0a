// Rendezvous assignment: balanced over workers, sticky across crawls, and minimal movement when
// a worker dies.
#include "coordinator/assignment.h"

#include <map>
#include <string>

#include "gtest/gtest.h"
#include "tests/coordinator/core_fixture.h"

namespace issuescope::coordinator::testing {
namespace {

using Owners = std::map<std::string, std::string>;  // slug -> worker

class AssignmentTest : public CoreTest {
 protected:
  // CrawlAll lets every worker in `workers` acquire and finish everything it owns.
  Owners CrawlAll(const std::vector<std::string>& workers) {
    Owners owners;
    for (const auto& worker : workers) {
      for (const auto& lease : Acquire(worker, 1000)) {
        owners[lease.repo_slug()] = worker;
        auto done = Report(worker, lease);
        done.set_done(true);
        EXPECT_TRUE(core_->ReportProgress(done).ok());
      }
    }
    return owners;
  }
  void TriggerAll() {
    v1::TriggerCrawlRequest all;
    ASSERT_TRUE(core_->TriggerCrawl(all).ok());
  }
};

TEST(RendezvousTest, DeterministicAndIndependentOfOrder) {
  EXPECT_EQ(RendezvousScore("w1", "github:a/b"),
            RendezvousScore("w1", "github:a/b"));
  EXPECT_NE(RendezvousScore("w1", "github:a/b"),
            RendezvousScore("w2", "github:a/b"));
  EXPECT_EQ(RendezvousOwner({"w1", "w2", "w3"}, "github:x/y"),
            RendezvousOwner({"w3", "w1", "w2"}, "github:x/y"));
  EXPECT_EQ(RendezvousOwner({}, "github:x/y"), "");
}

TEST_F(AssignmentTest, BalancedStickyAndMinimalMovement) {
  std::vector<v1::RepositorySpec> specs;
  for (int i = 0; i < 300; ++i)
    specs.push_back(Spec("org" + std::to_string(i % 7), "repo" + std::to_string(i)));
  Add(specs);
  const std::vector<std::string> workers = {"worker-0", "worker-1", "worker-2"};
  for (const auto& w : workers) Register(w);

  Owners first = CrawlAll(workers);
  ASSERT_EQ(first.size(), 300u);
  std::map<std::string, int> share;
  for (const auto& [slug, worker] : first) ++share[worker];
  for (const auto& w : workers) {
    SCOPED_TRACE(w);
    EXPECT_GE(share[w], 75);  // mean 100, ±25%
    EXPECT_LE(share[w], 125);
  }
  EXPECT_TRUE(Status().quiescent());

  // Sticky: the next crawl of everything goes to the same workers.
  TriggerAll();
  Owners second = CrawlAll(workers);
  EXPECT_EQ(second, first);

  // worker-2 dies: only its repositories move, spread over the others.
  clock_.Advance(absl::Seconds(5));
  Register("worker-0");
  Register("worker-1");
  clock_.Advance(absl::Seconds(6));  // worker-2 silent for 11 s
  TriggerAll();
  Owners third = CrawlAll({"worker-0", "worker-1"});
  ASSERT_EQ(third.size(), 300u);
  int moved_to[2] = {0, 0};
  for (const auto& [slug, worker] : first) {
    if (worker == "worker-2") {
      ASSERT_NE(third[slug], "worker-2");
      ++moved_to[third[slug] == "worker-0" ? 0 : 1];
    } else {
      EXPECT_EQ(third[slug], worker) << slug << " moved although its worker is alive";
    }
  }
  EXPECT_GT(moved_to[0], 0);
  EXPECT_GT(moved_to[1], 0);
}

TEST_F(AssignmentTest, AWorkerGetsOnlyItsOwnRepositories) {
  std::vector<v1::RepositorySpec> specs;
  for (int i = 0; i < 40; ++i) specs.push_back(Spec("o", "r" + std::to_string(i)));
  Add(specs);
  Register("a");
  Register("b");
  std::map<std::string, std::string> owner;
  const v1::GetStatusResponse status = Status();
  for (const auto& repo : status.repositories()) owner[repo.repo_slug()] = repo.owner();
  for (const auto& lease : Acquire("a", 1000)) EXPECT_EQ(owner[lease.repo_slug()], "a");
  // b has not asked yet: its repositories wait for it (sticky), a gets nothing more.
  EXPECT_TRUE(Acquire("a", 1000).empty());
  EXPECT_FALSE(Acquire("b", 1000).empty());
}

}  // namespace
}  // namespace issuescope::coordinator::testing

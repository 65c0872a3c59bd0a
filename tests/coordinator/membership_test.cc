// Membership: draining (LeaveWorker / DrainWorker), failover timing after a worker dies, and
// shared account budgets reported in heartbeats.
#include <map>
#include <string>
#include <vector>

#include "common/time_util.h"
#include "coordinator/account_budgets.h"
#include "gtest/gtest.h"
#include "tests/coordinator/core_fixture.h"

namespace issuescope::coordinator::testing {
namespace {

class MembershipTest : public CoreTest {
 protected:
  absl::StatusOr<v1::DrainWorkerResponse> Drain(const std::string& worker) {
    v1::DrainWorkerRequest req;
    req.set_worker_id(worker);
    return core_->DrainWorker(req);
  }
  v1::WorkerStatus WorkerStatusOf(const std::string& id) {
    const v1::GetStatusResponse status = Status();
    for (const auto& w : status.workers()) {
      if (w.worker_id() == id) return w;
    }
    return v1::WorkerStatus();
  }
  bool Known(const std::string& id) { return !WorkerStatusOf(id).worker_id().empty(); }

  static v1::TokenBudget Budget(const std::string& account, const std::string& fp,
                                int64_t remaining, absl::Time reset) {
    v1::TokenBudget b;
    b.set_account(account);
    b.set_token_fingerprint(fp);
    b.set_tracker(v1::TRACKER_GITHUB);
    b.set_remaining(remaining);
    b.set_limit(5000);
    *b.mutable_reset() = ToProto(reset);
    return b;
  }
  absl::StatusOr<v1::HeartbeatResponse> Beat(const std::string& worker,
                                             const std::vector<v1::TokenBudget>& budgets,
                                             const std::vector<v1::Lease>& held = {}) {
    v1::HeartbeatRequest req;
    req.set_worker_id(worker);
    for (const auto& lease : held) {
      req.add_held()->set_repo(lease.repo_slug());
      req.mutable_held(req.held_size() - 1)->set_epoch(lease.epoch());
    }
    for (const auto& b : budgets) *req.add_budgets() = b;
    return core_->Heartbeat(req);
  }
};

TEST_F(MembershipTest, DrainingWorkerFinishesItsLeasesThenLeaves) {
  std::vector<v1::RepositorySpec> specs;
  for (int i = 0; i < 20; ++i) specs.push_back(Spec("o", "r" + std::to_string(i)));
  Add(specs);
  Register("a");
  Register("b");
  std::vector<v1::Lease> held = Acquire("a", 2);
  ASSERT_EQ(held.size(), 2u);

  auto drained = Drain("a");
  ASSERT_TRUE(drained.ok()) << drained.status();
  EXPECT_EQ(drained->leases_held(), 2);
  EXPECT_FALSE(drained->removed());
  v1::WorkerStatus a = WorkerStatusOf("a");
  EXPECT_TRUE(a.draining());
  EXPECT_EQ(a.repositories_owned(), 0);
  EXPECT_TRUE(Acquire("a", 10).empty()) << "a draining worker gets no new leases";
  // Its leases stay valid and renewable; b now owns everything else.
  auto beat = Heartbeat("a", held);
  ASSERT_TRUE(beat.ok());
  EXPECT_EQ(beat->revoked_size(), 0);
  EXPECT_TRUE(beat->draining());
  EXPECT_EQ(Acquire("b", 100).size(), 18u);

  // One lease finishes, the other is handed back: then a is gone.
  auto done = Report("a", held[0]);
  done.set_done(true);
  ASSERT_TRUE(core_->ReportProgress(done).ok());
  EXPECT_TRUE(Known("a"));
  v1::ReleaseLeaseRequest release;
  release.set_worker_id("a");
  release.mutable_lease()->set_repo(held[1].repo_slug());
  release.mutable_lease()->set_epoch(held[1].epoch());
  ASSERT_TRUE(core_->ReleaseLease(release).ok());
  EXPECT_FALSE(Known("a"));
  // The handed-back repository goes to b; after a restart a is still gone.
  auto rest = Acquire("b", 100);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].repo_slug(), held[1].repo_slug());
  Reopen();
  EXPECT_FALSE(Known("a"));
}

TEST_F(MembershipTest, DrainWithoutLeasesRemovesAtOnceAndReRegisteringRejoins) {
  Register("a");
  auto drained = Drain("a");
  ASSERT_TRUE(drained.ok());
  EXPECT_TRUE(drained->removed());
  EXPECT_FALSE(Known("a"));
  EXPECT_EQ(Drain("nobody").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(Drain("bad id").status().code(), absl::StatusCode::kInvalidArgument);
  Register("a");
  EXPECT_TRUE(Known("a"));
  EXPECT_FALSE(WorkerStatusOf("a").draining());
}

TEST_F(MembershipTest, DeadWorkersRepositoriesAreGrantedAgainWithinTheTimeout) {
  Add({Spec("o", "r")});
  Register("a");
  Register("b");
  std::string holder = Acquire("a").empty() ? "b" : "a";
  const std::string other = holder == "a" ? "b" : "a";
  if (holder == "b") ASSERT_EQ(Acquire("b").size(), 1u);
  // The holder goes silent; the other keeps heartbeating.
  for (int i = 0; i < 4; ++i) {
    clock_.Advance(absl::Seconds(2));
    ASSERT_TRUE(Heartbeat(other, {}).ok());
    EXPECT_TRUE(Acquire(other).empty()) << "granted while the holder is alive, at " << i;
  }
  clock_.Advance(absl::Milliseconds(1999));
  EXPECT_TRUE(Acquire(other).empty()) << "granted 1 ms before the worker timeout";
  // worker_timeout (10 s) since the holder's last call: well within lease_ttl (15 s) + 1 s.
  clock_.Advance(absl::Milliseconds(1));
  auto leases = Acquire(other);
  ASSERT_EQ(leases.size(), 1u);
  EXPECT_EQ(leases[0].epoch(), 2u);
  EXPECT_EQ(core_->Counters().lease_expirations, 1);
  EXPECT_EQ(core_->Counters().epochs_granted, 2);
}

TEST_F(MembershipTest, LeavingWorkersRepositoriesMoveWithoutNewCrawls) {
  std::vector<v1::RepositorySpec> specs;
  for (int i = 0; i < 4; ++i) specs.push_back(Spec("o", "r" + std::to_string(i)));
  Add(specs);
  Register("a", 4);
  std::vector<v1::Lease> leases = Acquire("a");
  ASSERT_EQ(leases.size(), 4u);
  std::map<std::string, v1::Lease> by_slug;
  for (const auto& l : leases) by_slug[l.repo_slug()] = l;
  // a completes r0 and r1 (cursors reported by its store) and is crawling r2 and r3.
  for (const char* slug : {"github:o/r0", "github:o/r1"}) {
    auto done = Report("a", by_slug[slug]);
    *done.mutable_cursor()->mutable_issues_since() = ToProto(clock_.Now());
    done.set_done(true);
    ASSERT_TRUE(core_->ReportProgress(done).ok());
  }
  Register("b", 4);

  // a leaves (LeaveWorker) holding two leases.
  auto left = Drain("a");
  ASSERT_TRUE(left.ok()) << left.status();
  EXPECT_EQ(left->leases_held(), 2);
  // Its idle repositories now belong to b but stay idle with their cursors: moving them
  // schedules no crawl (full or not); b gets nothing while a finishes.
  EXPECT_TRUE(Acquire("b").empty());
  for (const char* slug : {"github:o/r0", "github:o/r1"}) {
    const v1::RepositoryStatus r = RepoStatus(slug);
    EXPECT_EQ(r.phase(), v1::REPO_PHASE_IDLE) << slug;
    EXPECT_EQ(r.owner(), "b") << slug;
    EXPECT_TRUE(r.cursor().has_issues_since()) << slug;
  }
  // a hands back its two running crawls (cancelled at its drain timeout): b gets them at once;
  // they had no cursor yet, so they are full crawls.
  for (const char* slug : {"github:o/r2", "github:o/r3"}) {
    v1::ReleaseLeaseRequest release;
    release.set_worker_id("a");
    release.mutable_lease()->set_repo(slug);
    release.mutable_lease()->set_epoch(by_slug[slug].epoch());
    ASSERT_TRUE(core_->ReleaseLease(release).ok());
  }
  EXPECT_FALSE(Known("a"));
  std::vector<v1::Lease> moved = Acquire("b");
  ASSERT_EQ(moved.size(), 2u);
  for (const auto& l : moved) {
    EXPECT_TRUE(l.repo_slug() == "github:o/r2" || l.repo_slug() == "github:o/r3") << l.repo_slug();
    EXPECT_EQ(l.mode(), v1::CRAWL_MODE_FULL);
    EXPECT_GT(l.epoch(), by_slug[l.repo_slug()].epoch());
    auto done = Report("b", l);
    *done.mutable_cursor()->mutable_issues_since() = ToProto(clock_.Now());
    done.set_done(true);
    ASSERT_TRUE(core_->ReportProgress(done).ok());
  }
  // The removed worker's heartbeat says so (known=false, draining=true): it exits instead of
  // registering again.
  auto beat = Heartbeat("a", {});
  ASSERT_TRUE(beat.ok());
  EXPECT_FALSE(beat->known());
  EXPECT_TRUE(beat->draining());

  // a comes back with the same store: the repositories whose cursor its store set return to it
  // and their next crawl is incremental.
  Register("a", 4);
  beat = Heartbeat("a", {});
  ASSERT_TRUE(beat.ok());
  EXPECT_TRUE(beat->known());
  EXPECT_FALSE(beat->draining());
  EXPECT_EQ(RepoStatus("github:o/r0").owner(), "a");
  EXPECT_EQ(RepoStatus("github:o/r1").owner(), "a");
  v1::TriggerCrawlRequest trigger;
  trigger.add_repo_slugs("github:o/r0");
  trigger.set_mode(v1::CRAWL_MODE_INCREMENTAL);
  ASSERT_TRUE(core_->TriggerCrawl(trigger).ok());
  std::vector<v1::Lease> again = Acquire("a");
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].repo_slug(), "github:o/r0");
  EXPECT_EQ(again[0].mode(), v1::CRAWL_MODE_INCREMENTAL);
}

// Drained feeds: a drained worker whose store the indexer has not read to the end stays a
// member (serving its store) until the indexer's committed position reaches the store seq the
// worker reported; only then is it removed, and its repositories move without a crawl.
class DrainedFeedTest : public MembershipTest {
 protected:
  // a completes r0 and r1 (its store at seq 40), b is registered; returns nothing.
  void CrawlTwoOnA() {
    Add({Spec("o", "r0"), Spec("o", "r1")});
    Register("a");
    std::vector<v1::Lease> leases = Acquire("a");
    ASSERT_EQ(leases.size(), 2u);
    uint64_t seq = 0;
    for (const auto& lease : leases) {
      auto done = Report("a", lease);
      *done.mutable_cursor()->mutable_issues_since() = ToProto(clock_.Now());
      done.set_done(true);
      seq += 20;
      done.set_store_last_seq(seq);
      ASSERT_TRUE(core_->ReportProgress(done).ok());
    }
    Register("b");
  }
  absl::Status Indexed(const std::string& indexer, uint64_t seq_of_a) {
    v1::ReportIndexProgressRequest req;
    req.set_indexer_id(indexer);
    v1::StorePosition* position = req.add_positions();
    position->set_store_id("store-a");
    position->set_seq(seq_of_a);
    return core_->ReportIndexProgress(req).status();
  }
};

TEST_F(DrainedFeedTest, DrainedWorkerStaysUntilTheIndexerHasReadItsStore) {
  CrawlTwoOnA();
  ASSERT_TRUE(Indexed("ix", 10).ok());
  auto drained = Drain("a");
  ASSERT_TRUE(drained.ok()) << drained.status();
  EXPECT_EQ(drained->leases_held(), 0);
  EXPECT_FALSE(drained->removed()) << "the indexer has read 10 of its store's 40 changes";
  v1::WorkerStatus a = WorkerStatusOf("a");
  EXPECT_TRUE(a.draining());
  EXPECT_EQ(a.store_last_seq(), 40u);
  EXPECT_EQ(a.indexed_seq(), 10u);
  ASSERT_EQ(Status().active_indexers_size(), 1);
  // It keeps heartbeating as a draining member (serving its store); its repositories already
  // belong to b, with no crawl.
  for (int i = 0; i < 5; ++i) {
    clock_.Advance(absl::Seconds(2));
    auto beat = Heartbeat("a", {});
    ASSERT_TRUE(beat.ok());
    EXPECT_TRUE(beat->known());
    EXPECT_TRUE(beat->draining());
    ASSERT_TRUE(Heartbeat("b", {}).ok());
    ASSERT_TRUE(Indexed("ix", 10 + 5 * i).ok());
    EXPECT_TRUE(Known("a")) << i;
  }
  EXPECT_EQ(RepoStatus("github:o/r0").owner(), "b");
  EXPECT_TRUE(Acquire("b").empty());
  // A second indexer that has read everything does not release it: every active one must.
  ASSERT_TRUE(Indexed("ix2", 40).ok());
  EXPECT_TRUE(Known("a"));
  // The first indexer commits the rest: a is removed; its heartbeat says so.
  ASSERT_TRUE(Indexed("ix", 40).ok());
  EXPECT_FALSE(Known("a"));
  auto beat = Heartbeat("a", {});
  ASSERT_TRUE(beat.ok());
  EXPECT_FALSE(beat->known());
  EXPECT_TRUE(beat->draining());
  // Its repositories moved without a crawl.
  EXPECT_TRUE(Acquire("b").empty());
  EXPECT_EQ(RepoStatus("github:o/r1").phase(), v1::REPO_PHASE_IDLE);
}

TEST_F(DrainedFeedTest, StoreNotReadWithinTheTimeoutIsAbandonedAndCrawledAgain) {
  options_.drain_feed_timeout = absl::Seconds(30);
  Reopen();
  CrawlTwoOnA();
  ASSERT_TRUE(Indexed("ix", 10).ok());
  ASSERT_TRUE(Drain("a").ok());
  for (int i = 0; i < 14; ++i) {
    clock_.Advance(absl::Seconds(2));
    ASSERT_TRUE(Heartbeat("a", {}).ok());
    ASSERT_TRUE(Heartbeat("b", {}).ok());
    ASSERT_TRUE(Indexed("ix", 10).ok());
  }
  EXPECT_TRUE(Known("a")) << "removed 2 s before the drain feed timeout";
  EXPECT_TRUE(Acquire("b").empty());
  clock_.Advance(absl::Seconds(2));
  ASSERT_TRUE(Heartbeat("b", {}).ok());
  EXPECT_FALSE(Known("a"));
  // What the indexer had not read exists nowhere else: both repositories are crawled again,
  // FULL on b's store.
  std::vector<v1::Lease> again = Acquire("b");
  ASSERT_EQ(again.size(), 2u);
  for (const auto& lease : again) EXPECT_EQ(lease.mode(), v1::CRAWL_MODE_FULL) << lease.repo_slug();
}

TEST_F(DrainedFeedTest, DrainedWorkerThatDiesBeforeItsStoreIsReadHasItsRepositoriesCrawled) {
  CrawlTwoOnA();
  ASSERT_TRUE(Indexed("ix", 20).ok());
  ASSERT_TRUE(Drain("a").ok());
  EXPECT_TRUE(Known("a"));
  // a falls silent (its process, and its store, are gone); b and the indexer carry on.
  for (int i = 0; i < 5; ++i) {
    clock_.Advance(absl::Seconds(2));
    ASSERT_TRUE(Heartbeat("b", {}).ok());
    ASSERT_TRUE(Indexed("ix", 20).ok());
  }
  EXPECT_FALSE(Known("a"));
  std::vector<v1::Lease> again = Acquire("b");
  ASSERT_EQ(again.size(), 2u);
  for (const auto& lease : again) EXPECT_EQ(lease.mode(), v1::CRAWL_MODE_FULL) << lease.repo_slug();
}

TEST_F(DrainedFeedTest, WithoutAnActiveIndexerADrainedWorkerLeavesAtOnce) {
  options_.drain_feed_timeout = absl::Seconds(30);
  Reopen();
  CrawlTwoOnA();
  // An indexer reported once, then fell silent for the drain feed timeout: it no longer counts
  // (silent for less, a paused or restarting indexer, it would).
  ASSERT_TRUE(Indexed("ix", 10).ok());
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(Status().active_indexers_size(), 1) << i;
    clock_.Advance(absl::Seconds(5));
    ASSERT_TRUE(Heartbeat("a", {}).ok());
    ASSERT_TRUE(Heartbeat("b", {}).ok());
  }
  EXPECT_EQ(Status().active_indexers_size(), 0);
  auto drained = Drain("a");
  ASSERT_TRUE(drained.ok());
  EXPECT_TRUE(drained->removed());
  EXPECT_TRUE(Acquire("b").empty()) << "moved without a crawl";
}

TEST_F(DrainedFeedTest, IndexProgressReportsAreValidated) {
  v1::ReportIndexProgressRequest req;
  req.set_indexer_id("bad id");
  auto status = core_->ReportIndexProgress(req).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("indexer_id"), absl::string_view::npos) << status;
  req.set_indexer_id("ix");
  req.add_positions()->set_seq(3);
  status = core_->ReportIndexProgress(req).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("positions[0].store_id"), absl::string_view::npos) << status;
  EXPECT_EQ(Status().active_indexers_size(), 0) << "a refused report counts for nothing";
}

TEST_F(MembershipTest, StatusListsEveryWorkersTokenBudgets) {
  Register("a");
  Register("b");
  const absl::Time reset = clock_.Now() + absl::Minutes(30);
  ASSERT_TRUE(Beat("a", {Budget("alice", "0123abcd", 3000, reset),
                         Budget("bob", "89abcdef", 10, reset)})
                  .ok());
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(Beat("b", {Budget("alice", "0123abcd", 2900, reset)}).ok());
  v1::GetStatusResponse status = Status();
  ASSERT_EQ(status.tokens_size(), 3);
  // Sorted by account, tracker, fingerprint, worker.
  EXPECT_EQ(status.tokens(0).worker_id(), "a");
  EXPECT_EQ(status.tokens(0).budget().account(), "alice");
  EXPECT_EQ(status.tokens(0).budget().remaining(), 3000);
  EXPECT_EQ(status.tokens(1).worker_id(), "b");
  EXPECT_EQ(status.tokens(1).budget().token_fingerprint(), "0123abcd");
  EXPECT_EQ(status.tokens(1).budget().remaining(), 2900);
  EXPECT_EQ(status.tokens(1).budget().limit(), 5000);
  EXPECT_EQ(FromProto(status.tokens(1).budget().reset()), reset);
  EXPECT_EQ(FromProto(status.tokens(1).reported_at()), clock_.Now());
  EXPECT_EQ(status.tokens(2).budget().account(), "bob");
  // A newer heartbeat replaces the worker's report; a worker that leaves takes its tokens along.
  ASSERT_TRUE(Beat("a", {Budget("alice", "0123abcd", 2800, reset)}).ok());
  ASSERT_TRUE(Drain("b").ok());
  status = Status();
  ASSERT_EQ(status.tokens_size(), 1);
  EXPECT_EQ(status.tokens(0).worker_id(), "a");
  EXPECT_EQ(status.tokens(0).budget().remaining(), 2800);
}

TEST(AccountBookTest, KeepsTheSmallestRemainingOfTheNewestWindow) {
  AccountBook book(100);
  const absl::Time t0 = absl::FromUnixSeconds(1700000000);
  auto report = [&](const std::string& worker, int64_t remaining, absl::Time reset) {
    google::protobuf::RepeatedPtrField<v1::TokenBudget> budgets;
    v1::TokenBudget* b = budgets.Add();
    b->set_account("alice");
    b->set_token_fingerprint(worker == "w1" ? "0123abcd" : "89abcdef");
    b->set_tracker(v1::TRACKER_GITHUB);
    b->set_remaining(remaining);
    b->set_limit(5000);
    *b->mutable_reset() = ToProto(reset);
    book.Report(worker, budgets);
  };
  report("w1", 3000, t0 + absl::Minutes(30));
  report("w2", 2500, t0 + absl::Minutes(30));
  report("w1", 2800, t0 + absl::Minutes(30));  // stale view of w1: the minimum stays
  report("w2", 4999, t0 - absl::Minutes(30));  // an older window: ignored
  AccountBook::LeaseCount leases = {{{"w1", v1::TRACKER_GITHUB}, 3}};
  auto view = book.View(t0, leases, nullptr);
  ASSERT_EQ(view.size(), 1u);
  EXPECT_EQ(view[0].remaining(), 2500);
  EXPECT_EQ(view[0].limit(), 5000);
  EXPECT_EQ(view[0].leases(), 3);
  EXPECT_EQ(view[0].token_fingerprints_size(), 2);
  EXPECT_EQ(view[0].workers_size(), 2);
  EXPECT_FALSE(view[0].held_back());
  // 2500 >= 100 * (3 + 1); with 25 leases running it is not.
  EXPECT_TRUE(book.MayGrant("w2", v1::TRACKER_GITHUB, t0, leases));
  leases[{"w1", v1::TRACKER_GITHUB}] = 25;
  EXPECT_FALSE(book.MayGrant("w2", v1::TRACKER_GITHUB, t0, leases));
  EXPECT_TRUE(book.MayGrant("w2", v1::TRACKER_GITLAB, t0, leases)) << "other tracker";
  EXPECT_TRUE(book.MayGrant("w3", v1::TRACKER_GITHUB, t0, leases)) << "no account reported";
  // After the reset the full limit is available again.
  EXPECT_TRUE(book.MayGrant("w2", v1::TRACKER_GITHUB, t0 + absl::Hours(1), leases));
  // A new window replaces the old figures.
  report("w1", 4900, t0 + absl::Minutes(90));
  EXPECT_EQ(book.View(t0 + absl::Hours(1), leases, nullptr)[0].remaining(), 4900);
}

TEST(AccountBookTest, GraphqlBudgetIsKeptApartAndNeverHoldsLeasesBack) {
  AccountBook book(100);
  const absl::Time t0 = absl::FromUnixSeconds(1700000000);
  google::protobuf::RepeatedPtrField<v1::TokenBudget> budgets;
  for (const char* resource : {"", "graphql"}) {
    v1::TokenBudget* b = budgets.Add();
    b->set_account("alice");
    b->set_token_fingerprint("0123abcd");
    b->set_tracker(v1::TRACKER_GITHUB);
    b->set_resource(resource);
    b->set_remaining(std::string(resource).empty() ? 4000 : 3);  // GraphQL nearly spent
    b->set_limit(5000);
    *b->mutable_reset() = ToProto(t0 + absl::Minutes(30));
  }
  book.Report("w1", budgets);
  auto view = book.View(t0, {}, nullptr);
  ASSERT_EQ(view.size(), 2u);
  EXPECT_EQ(view[0].resource(), "");
  EXPECT_EQ(view[0].remaining(), 4000);
  EXPECT_EQ(view[1].resource(), "graphql");
  EXPECT_EQ(view[1].remaining(), 3);
  EXPECT_FALSE(view[1].held_back()) << "a spent GraphQL budget means REST, not no crawl";
  EXPECT_TRUE(book.MayGrant("w1", v1::TRACKER_GITHUB, t0, {}));
  ASSERT_EQ(book.Tokens(nullptr).size(), 2u);
  v1::TokenBudget bad = budgets[0];
  bad.set_resource("search");
  EXPECT_FALSE(ValidateTokenBudget(bad, "b").ok());
}

TEST(AccountBookTest, RejectsMalformedBudgetsWithoutEchoingThem) {
  v1::TokenBudget ok;
  ok.set_account("alice");
  ok.set_token_fingerprint("0123abcd");
  ok.set_remaining(-1);
  EXPECT_TRUE(ValidateTokenBudget(ok, "budgets[0]").ok());
  v1::TokenBudget token = ok;
  token.set_token_fingerprint("ghp_secretsecretsecretsecret");
  absl::Status s = ValidateTokenBudget(token, "budgets[0]");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(s.message()).find("secret"), std::string::npos) << s;
  EXPECT_NE(std::string(s.message()).find("budgets[0].token_fingerprint"), std::string::npos);
  v1::TokenBudget account = ok;
  account.set_account("has space");
  EXPECT_FALSE(ValidateTokenBudget(account, "b").ok());
  v1::TokenBudget negative = ok;
  negative.set_remaining(-5);
  EXPECT_FALSE(ValidateTokenBudget(negative, "b").ok());
}

TEST_F(MembershipTest, WorkersSharingAnAccountStopTakingLeasesBeforeItIsSpent) {
  std::vector<v1::RepositorySpec> specs;
  for (int i = 0; i < 40; ++i) specs.push_back(Spec("o", "r" + std::to_string(i)));
  Add(specs);
  Register("a", 100);
  Register("b", 100);
  const absl::Time reset = clock_.Now() + absl::Minutes(30);
  // Both use account "shared"; b's view is the lower one: 350 left, reserve 100 per crawl.
  ASSERT_TRUE(Beat("a", {Budget("shared", "0123abcd", 4000, reset)}).ok());
  ASSERT_TRUE(Beat("b", {Budget("shared", "89abcdef", 350, reset)}).ok());
  const size_t granted = Acquire("a").size() + Acquire("b").size();
  EXPECT_EQ(granted, 3u) << "350 left covers three crawls with 100 each in reserve";
  auto beat = Beat("a", {Budget("shared", "0123abcd", 4000, reset)});
  ASSERT_TRUE(beat.ok());
  ASSERT_EQ(beat->accounts_size(), 1);
  EXPECT_EQ(beat->accounts(0).remaining(), 350);
  EXPECT_EQ(beat->accounts(0).leases(), 3);
  EXPECT_TRUE(beat->accounts(0).held_back());
  const v1::GetStatusResponse status = Status();
  ASSERT_EQ(status.accounts_size(), 1);
  EXPECT_EQ(status.accounts(0).account(), "shared");
  EXPECT_EQ(status.accounts(0).workers_size(), 2);
  for (const auto& w : status.workers()) {
    ASSERT_EQ(w.accounts_size(), 1);
    EXPECT_EQ(w.accounts(0), "shared");
  }
  // After the reset the budget is whole again and the rest is granted.
  clock_.Advance(absl::Minutes(31));
  Register("a", 100);
  Register("b", 100);
  ASSERT_TRUE(Beat("a", {Budget("shared", "0123abcd", 5000, reset + absl::Hours(1))}).ok());
  ASSERT_TRUE(Beat("b", {Budget("shared", "89abcdef", 5000, reset + absl::Hours(1))}).ok());
  EXPECT_EQ(Acquire("a").size() + Acquire("b").size(), 40u);

  v1::HeartbeatRequest bad;
  bad.set_worker_id("a");
  *bad.add_budgets() = Budget("shared", "not-hex!", 1, reset);
  EXPECT_EQ(core_->Heartbeat(bad).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace issuescope::coordinator::testing

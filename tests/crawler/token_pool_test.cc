// TokenPool on a FakeClock: choice of token, serial use per token, never lending a spent token
// before its reset, benching on secondary limits (Retry-After or exponential backoff), the
// assumed budget of trackers without rate headers, the visible state (never the token), and
// token-list parsing.
#include "crawler/token_pool.h"

#include <atomic>
#include <thread>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace issuescope::crawler {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1700000000);

RateLimit Rate(int64_t remaining, absl::Time reset, int64_t limit = 5000) {
  RateLimit r;
  r.limit = limit;
  r.remaining = remaining;
  r.reset = reset;
  return r;
}

TEST(TokenFingerprintTest, IsTheFirstEightHexDigitsOfSha256) {
  // SHA-256("abc") = ba7816bf...
  EXPECT_EQ(TokenFingerprint("abc"), "ba7816bf");
  EXPECT_EQ(TokenFingerprint(""), "anonymous");
}

TEST(ParseTokenListTest, Cases) {
  struct Case {
    std::string list;
    std::vector<std::pair<std::string, std::string>> want;  // account, token
    bool ok = true;
  };
  const std::vector<Case> cases = {
      {"tok1", {{"GH", "tok1"}}},
      {"tok1, tok2", {{"GH-1", "tok1"}, {"GH-2", "tok2"}}},
      {"alice=tok1,bob=tok2", {{"alice", "tok1"}, {"bob", "tok2"}}},
      {"alice=tok1,tok2", {{"alice", "tok1"}, {"GH", "tok2"}}},
      {"dG9rZW4=", {{"GH", "dG9rZW4="}}},  // base64 padding is part of the token
      {"tok1,,tok2", {}, false},
      {"", {}, false},
  };
  for (const Case& c : cases) {
    auto got = ParseTokenList(c.list, "GH");
    ASSERT_EQ(got.ok(), c.ok) << c.list << ": " << got.status();
    if (!c.ok) {
      EXPECT_FALSE(absl::StrContains(got.status().message(), "tok1")) << got.status();
      continue;
    }
    ASSERT_EQ(got->size(), c.want.size()) << c.list;
    for (size_t i = 0; i < c.want.size(); ++i) {
      EXPECT_EQ((*got)[i].account, c.want[i].first) << c.list;
      EXPECT_EQ((*got)[i].token, c.want[i].second) << c.list;
    }
  }
}

TEST(TokensFromEnvTest, ReadsAccountsAndNeverQuotesTheValue) {
  setenv("TP_TEST_TOKENS", "a=t1,t2,t3", 1);
  auto got = TokensFromEnv({"ops=TP_TEST_TOKENS"}, "--github-token-env");
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 3u);
  EXPECT_EQ((*got)[0].account, "a");
  EXPECT_EQ((*got)[1].account, "ops-1");
  EXPECT_EQ((*got)[2].account, "ops-2");
  auto missing = TokensFromEnv({"TP_TEST_UNSET_VAR"}, "--github-token-env");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "TP_TEST_UNSET_VAR"));
  setenv("TP_TEST_BAD", "t1,,t2", 1);
  auto bad = TokensFromEnv({"TP_TEST_BAD"}, "--github-token-env");
  EXPECT_FALSE(bad.ok());
  EXPECT_FALSE(absl::StrContains(bad.status().message(), "t1"));
}

class TokenPoolTest : public ::testing::Test {
 protected:
  std::unique_ptr<TokenPool> Pool(int n, TokenPoolOptions options = {}) {
    std::vector<PoolToken> tokens;
    for (int i = 0; i < n; ++i) {
      tokens.push_back({"acct" + std::to_string(i), "secret-token-" + std::to_string(i)});
    }
    return std::make_unique<TokenPool>(v1::TRACKER_GITHUB, tokens, &clock_, options);
  }
  FakeClock clock_{kStart};
};

TEST_F(TokenPoolTest, PrefersTheTokenWithMostBudgetAndLendsEachTokenOnce) {
  auto pool = Pool(3);
  auto a = pool->Acquire();
  ASSERT_TRUE(a.ok());
  pool->Release(*a, Rate(10, kStart + absl::Hours(1)), TokenOutcome::kOk);
  // Token 0 has 10 left; the unknown ones count as full.
  auto b = pool->Acquire();
  auto c = pool->Acquire();
  ASSERT_TRUE(b.ok() && c.ok());
  EXPECT_NE(b->index, 0);
  EXPECT_NE(c->index, 0);
  EXPECT_NE(b->index, c->index);  // serial per token: a lent token is not lent again
  auto d = pool->Acquire();
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->index, 0);
  EXPECT_EQ(d->token, "secret-token-0");
  for (const auto& l : {*b, *c, *d}) pool->Release(l, RateLimit{}, TokenOutcome::kOk);
  EXPECT_EQ(clock_.TotalSlept(), absl::ZeroDuration());
}

TEST_F(TokenPoolTest, WaitsForAReleaseWhenEveryTokenIsBusy) {
  auto pool = Pool(1);
  auto held = pool->Acquire();
  ASSERT_TRUE(held.ok());
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    auto l = pool->Acquire();
    ASSERT_TRUE(l.ok());
    got.store(true);
    pool->Release(*l, RateLimit{}, TokenOutcome::kOk);
  });
  // The waiter blocks on the busy token (it waits on the pool, not on the clock).
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  while (pool->busy_waiters() == 0 && absl::Now() < give_up) std::this_thread::yield();
  EXPECT_EQ(pool->busy_waiters(), 1);
  EXPECT_FALSE(got.load());
  pool->Release(*held, RateLimit{}, TokenOutcome::kOk);
  waiter.join();
  EXPECT_TRUE(got.load());
}

TEST_F(TokenPoolTest, NeverLendsASpentTokenBeforeItsReset) {
  auto pool = Pool(2);
  const absl::Time reset0 = kStart + absl::Minutes(10), reset1 = kStart + absl::Minutes(20);
  auto a = pool->Acquire();
  auto b = pool->Acquire();
  pool->Release(*a, Rate(0, reset0), TokenOutcome::kOk);
  pool->Release(*b, Rate(0, reset1), TokenOutcome::kOk);
  auto c = pool->Acquire();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->index, a->index);
  EXPECT_GT(clock_.Now(), reset0);  // slept past the earlier reset, not before
  EXPECT_LE(clock_.Now(), reset0 + absl::Seconds(2));
}

TEST_F(TokenPoolTest, TakesTheRequestOffTheBudgetWhenLending) {
  auto pool = Pool(1);
  auto a = pool->Acquire();
  pool->Release(*a, Rate(1, kStart + absl::Hours(1)), TokenOutcome::kOk);
  auto b = pool->Acquire();  // spends the last request
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(pool->Snapshot()[0].remaining, 0);
  pool->Release(*b, RateLimit{}, TokenOutcome::kOk);  // an answer without rate headers
  auto c = pool->Acquire();
  ASSERT_TRUE(c.ok());
  EXPECT_GT(clock_.Now(), kStart + absl::Hours(1));
}

TEST_F(TokenPoolTest, SecondaryLimitsBenchTheToken) {
  struct Case {
    std::string name;
    std::optional<absl::Duration> retry_after;
    int limits;  // consecutive limits before the probe
    absl::Duration want_bench;
  };
  TokenPoolOptions options;
  options.secondary_backoff = absl::Seconds(60);
  options.max_secondary_backoff = absl::Seconds(200);
  const std::vector<Case> cases = {
      {"retry_after", absl::Seconds(7), 1, absl::Seconds(7)},
      {"no_hint_first", std::nullopt, 1, absl::Seconds(60)},
      {"no_hint_second", std::nullopt, 2, absl::Seconds(120)},
      {"no_hint_capped", std::nullopt, 4, absl::Seconds(200)},
  };
  for (const Case& c : cases) {
    FakeClock clock(kStart);
    TokenPool pool(v1::TRACKER_GITHUB, {{"a", "t"}}, &clock, options);
    for (int i = 0; i < c.limits; ++i) {
      auto l = pool.Acquire();
      ASSERT_TRUE(l.ok()) << c.name;
      pool.Release(*l, Rate(100, kStart + absl::Hours(1)), TokenOutcome::kSecondaryLimit,
                   c.retry_after);
    }
    const absl::Time limited_at = clock.Now();
    EXPECT_EQ(pool.Snapshot()[0].benched_until, limited_at + c.want_bench) << c.name;
    auto l = pool.Acquire();
    ASSERT_TRUE(l.ok()) << c.name;
    EXPECT_EQ(clock.Now(), limited_at + c.want_bench) << c.name;
    pool.Release(*l, Rate(99, kStart + absl::Hours(1)), TokenOutcome::kOk);
    EXPECT_EQ(pool.Snapshot()[0].secondary_limits, c.limits) << c.name;
  }
}

TEST_F(TokenPoolTest, ABenchedTokenLeavesTheOthersWorking) {
  auto pool = Pool(2);
  auto a = pool->Acquire();
  pool->Release(*a, Rate(100, kStart + absl::Hours(1)), TokenOutcome::kSecondaryLimit,
                absl::Seconds(30));
  for (int i = 0; i < 5; ++i) {
    auto l = pool->Acquire();
    ASSERT_TRUE(l.ok());
    EXPECT_NE(l->index, a->index);
    pool->Release(*l, Rate(50 - i, kStart + absl::Hours(1)), TokenOutcome::kOk);
  }
  EXPECT_EQ(clock_.TotalSlept(), absl::ZeroDuration());
}

TEST_F(TokenPoolTest, BudgetSpentWithoutResetBenchesForRetryAfter) {
  auto pool = Pool(1);
  auto a = pool->Acquire();
  pool->Release(*a, RateLimit{}, TokenOutcome::kBudgetSpent, absl::Seconds(90));  // Gitee style
  auto b = pool->Acquire();
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(clock_.Now(), kStart + absl::Seconds(90));
}

TEST_F(TokenPoolTest, CountsAnAssumedBudgetWhenTheTrackerSendsNoHeaders) {
  TokenPoolOptions options;
  options.assumed_limit = 3;
  options.assumed_window = absl::Minutes(10);
  auto pool = Pool(1, options);
  for (int i = 0; i < 3; ++i) {
    auto l = pool->Acquire();
    ASSERT_TRUE(l.ok());
    pool->Release(*l, RateLimit{}, TokenOutcome::kOk);
  }
  EXPECT_EQ(pool->Snapshot()[0].remaining, 0);
  EXPECT_EQ(pool->Snapshot()[0].limit, 3);
  auto l = pool->Acquire();
  ASSERT_TRUE(l.ok());
  EXPECT_GE(clock_.Now(), kStart + absl::Minutes(10));
}

TEST_F(TokenPoolTest, GivesUpPastTheLongestWait) {
  TokenPoolOptions options;
  options.max_wait = absl::Minutes(5);
  auto pool = Pool(1, options);
  auto a = pool->Acquire();
  pool->Release(*a, Rate(0, kStart + absl::Hours(1)), TokenOutcome::kBudgetSpent);
  auto b = pool->Acquire();
  EXPECT_EQ(b.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(clock_.TotalSlept(), absl::ZeroDuration());
}

TEST_F(TokenPoolTest, CancelStopsAWait) {
  auto pool = Pool(1);
  auto a = pool->Acquire();
  pool->Release(*a, Rate(0, kStart + absl::Minutes(30)), TokenOutcome::kBudgetSpent);
  auto b = pool->Acquire([] { return true; });
  EXPECT_EQ(b.status().code(), absl::StatusCode::kCancelled);
}

TEST_F(TokenPoolTest, SnapshotAndBudgetsShowStateButNeverTheToken) {
  auto pool = Pool(2);
  auto a = pool->Acquire();
  pool->Release(*a, Rate(42, kStart + absl::Hours(1)), TokenOutcome::kOk);
  const auto snap = pool->Snapshot();
  ASSERT_EQ(snap.size(), 2u);
  EXPECT_EQ(snap[a->index].account, "acct" + std::to_string(a->index));
  EXPECT_EQ(snap[a->index].fingerprint, TokenFingerprint("secret-token-" + std::to_string(a->index)));
  EXPECT_EQ(snap[a->index].remaining, 42);
  EXPECT_EQ(snap[a->index].reset, kStart + absl::Hours(1));
  const auto budgets = pool->Budgets();
  ASSERT_EQ(budgets.size(), 2u);  // the unused token too, its budget unknown
  const v1::TokenBudget& used = budgets[a->index];
  const v1::TokenBudget& unused = budgets[1 - a->index];
  EXPECT_EQ(used.remaining(), 42);
  EXPECT_EQ(used.limit(), 5000);
  EXPECT_EQ(used.tracker(), v1::TRACKER_GITHUB);
  EXPECT_EQ(unused.remaining(), -1);
  EXPECT_EQ(unused.limit(), 0);
  EXPECT_EQ(unused.token_fingerprint(), TokenFingerprint("secret-token-" + std::to_string(1 - a->index)));
  for (const auto& b : budgets) {
    EXPECT_FALSE(absl::StrContains(b.DebugString(), "secret-token"));
  }
  EXPECT_EQ(pool->Combined().remaining, 42);
}

TEST_F(TokenPoolTest, AnonymousBudgetsAreReportedUnderTheHostsAccount) {
  // Two workers on one host crawling anonymously spend one address's budget: their pools report
  // it under one account, so the coordinator shares it (issue 16, item 12).
  EXPECT_EQ(AnonymousAccount("worker-1.example"), "anonymous@worker-1.example");
  EXPECT_EQ(AnonymousAccount("bad host/!"), "anonymous@bad-host--");
  EXPECT_EQ(AnonymousAccount(""), "anonymous@localhost");
  EXPECT_EQ(AnonymousAccount(std::string(300, 'h')).size(), 10u + 64u);
  TokenPool pool(v1::TRACKER_GITHUB, {{AnonymousAccount("h1"), ""}}, &clock_);
  ASSERT_EQ(pool.Budgets().size(), 1u);
  EXPECT_EQ(pool.Budgets()[0].remaining(), -1) << "no answer yet: the budget is unknown";
  EXPECT_EQ(pool.Budgets()[0].token_fingerprint(), kAnonymousBudgetFingerprint);
  auto a = pool.Acquire();
  ASSERT_TRUE(a.ok());
  pool.Release(*a, Rate(57, kStart + absl::Minutes(30), 60), TokenOutcome::kOk);
  const auto budgets = pool.Budgets();
  ASSERT_EQ(budgets.size(), 1u);
  EXPECT_EQ(budgets[0].account(), "anonymous@h1");
  EXPECT_EQ(budgets[0].token_fingerprint(), kAnonymousBudgetFingerprint);
  EXPECT_EQ(budgets[0].remaining(), 57);
  EXPECT_EQ(budgets[0].limit(), 60);
}

TEST_F(TokenPoolTest, SharedAllowanceCapsLendingOnTheAccountUntilItsReset) {
  // Two tokens of one account (the cap is per account) and one of another.
  std::vector<PoolToken> tokens = {{"shared", "secret-a"}, {"shared", "secret-b"},
                                   {"own", "secret-c"}};
  TokenPool pool(v1::TRACKER_GITHUB, tokens, &clock_);
  const absl::Time reset = kStart + absl::Minutes(10);
  // The tracker says 4000 left on every token; the coordinator allows this pool 3 more
  // requests on "shared" before the reset (other workers spend the rest).
  for (int i = 0; i < 3; ++i) {
    auto l = pool.Acquire();
    ASSERT_TRUE(l.ok());
    pool.Release(*l, Rate(4000, reset), TokenOutcome::kOk);
  }
  pool.SetSharedAllowance("shared", 3, reset);
  pool.SetSharedAllowance("nobody-here", 0, reset);  // an account the pool lacks: ignored
  EXPECT_EQ(pool.Snapshot()[0].allowance, 3);
  EXPECT_EQ(pool.Snapshot()[2].allowance, -1);
  int shared = 0, own = 0;
  for (int i = 0; i < 10; ++i) {
    auto l = pool.Acquire();
    ASSERT_TRUE(l.ok());
    (l->index == 2 ? own : shared) += 1;
    pool.Release(*l, Rate(4000 - i, reset), TokenOutcome::kOk);
    if (clock_.Now() > kStart) break;  // had to wait
  }
  // 3 requests on "shared" (whatever its tokens said), the others on "own", no waiting.
  EXPECT_EQ(shared, 3);
  EXPECT_EQ(own, 7);
  EXPECT_EQ(clock_.TotalSlept(), absl::ZeroDuration());
  EXPECT_EQ(pool.Snapshot()[0].allowance, 0);

  // With "own" spent, the next request waits for the shared account's reset, then the cap lapses.
  auto c = pool.Acquire();
  ASSERT_TRUE(c.ok());
  pool.Release(*c, Rate(0, kStart + absl::Hours(1)), TokenOutcome::kOk);
  ASSERT_EQ(c->index, 2);
  auto next = pool.Acquire();
  ASSERT_TRUE(next.ok());
  EXPECT_NE(next->index, 2);
  EXPECT_GT(clock_.Now(), reset);
  EXPECT_LE(clock_.Now(), reset + absl::Seconds(2));
  pool.Release(*next, Rate(5000, reset + absl::Hours(1)), TokenOutcome::kOk);
  EXPECT_EQ(pool.Snapshot()[0].allowance, -1);

  // A new allowance replaces the old one; a negative one or a past reset removes the cap.
  pool.SetSharedAllowance("shared", 0, clock_.Now() + absl::Minutes(5));
  EXPECT_EQ(pool.Snapshot()[1].allowance, 0);
  pool.SetSharedAllowance("shared", -1, clock_.Now() + absl::Minutes(5));
  EXPECT_EQ(pool.Snapshot()[1].allowance, -1);
  pool.SetSharedAllowance("shared", 0, clock_.Now() - absl::Minutes(5));
  EXPECT_EQ(pool.Snapshot()[1].allowance, -1);
  EXPECT_TRUE(pool.Acquire().ok());
}

TEST_F(TokenPoolTest, SharersSplitWhatTheLastAnswerAnnounced) {
  TokenPool pool(v1::TRACKER_GITHUB, {{"shared", "secret-a"}}, &clock_);
  const absl::Time reset = kStart + absl::Minutes(10);
  auto a = pool.Acquire();
  ASSERT_TRUE(a.ok());
  pool.Release(*a, Rate(5, reset), TokenOutcome::kOk);
  // Two processes share the account and the tracker said 5 are left: this one lends 2 (5 / 2)
  // until the tracker answers again, however large the coordinator's allowance.
  pool.SetSharedAllowance("shared", 100, reset, 2);
  auto b = pool.Acquire();
  ASSERT_TRUE(b.ok());
  pool.Release(*b, RateLimit{}, TokenOutcome::kOk);  // an answer without rate headers
  auto c = pool.Acquire();
  ASSERT_TRUE(c.ok());
  pool.Release(*c, RateLimit{}, TokenOutcome::kOk);
  EXPECT_EQ(clock_.TotalSlept(), absl::ZeroDuration());
  auto d = pool.Acquire();  // the share is spent: waits for the reset
  ASSERT_TRUE(d.ok());
  EXPECT_GT(clock_.Now(), reset);
  // A fresh answer gives a fresh share: 1 left between two sharers is nobody's.
  pool.Release(*d, Rate(1, reset + absl::Hours(1)), TokenOutcome::kOk);
  const absl::Time before = clock_.Now();
  pool.SetSharedAllowance("shared", 100, reset + absl::Hours(1), 2);
  auto e = pool.Acquire();
  ASSERT_TRUE(e.ok());
  EXPECT_GT(clock_.Now(), reset + absl::Hours(1));
  EXPECT_GT(clock_.Now() - before, absl::Minutes(59));
  EXPECT_EQ(pool.LentOn("shared"), 5);
  EXPECT_EQ(pool.LentOn("other"), 0);
}

// The tracker's reset has whole seconds and its clock may lag ours by under a second: in the
// second after the announced reset the old window may still be open, so the pool keeps counting
// it. (CI caught two workers each lending one "first request of the new window" there: the
// simulator, whose clock lagged by a fraction of a second, answered the second with 403.)
TEST_F(TokenPoolTest, AWindowEndsOneSecondAfterItsReset) {
  TokenPool pool(v1::TRACKER_GITHUB, {{"solo", "secret-a"}}, &clock_);
  const absl::Time reset = kStart + absl::Minutes(10);
  auto a = pool.Acquire();
  ASSERT_TRUE(a.ok());
  pool.Release(*a, Rate(1, reset, 45), TokenOutcome::kOk);
  clock_.Advance(reset + absl::Milliseconds(500) - clock_.Now());
  auto b = pool.Acquire();  // the last request of the old window
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(pool.Snapshot()[0].remaining, 0);
  pool.Release(*b, RateLimit{}, TokenOutcome::kOk);  // no rate headers (a network error)
  const absl::Time before = clock_.Now();
  auto c = pool.Acquire();  // nothing left in it: waits until the old window is surely over
  ASSERT_TRUE(c.ok());
  EXPECT_GE(clock_.Now(), reset + absl::Seconds(1));
  EXPECT_GT(clock_.Now(), before);
  pool.Release(*c, Rate(44, reset + absl::Minutes(10), 45), TokenOutcome::kOk);
  EXPECT_EQ(pool.Snapshot()[0].remaining, 44);
}

// The request loop measures a reset from the answer's Date, which has whole seconds: two answers
// of one window, either side of a second's tick, give resets up to a second apart, the later
// answer's the earlier one. Requests on a token are serial, so the later answer is still the
// newest word. (CI caught the pool keeping the older figure and lending a share of it while the
// other sharer spent the rest: the simulator answered 403.)
TEST_F(TokenPoolTest, TheNewestAnswerCountsEvenWhenItsResetRoundsEarlier) {
  TokenPool pool(v1::TRACKER_GITHUB, {{"shared", "secret-a"}}, &clock_);
  const absl::Time reset = kStart + absl::Minutes(10);
  pool.SetSharedAllowance("shared", -1, reset, 2);
  auto a = pool.Acquire();
  ASSERT_TRUE(a.ok());
  pool.Release(*a, Rate(10, reset + absl::Milliseconds(970), 45), TokenOutcome::kOk);
  auto b = pool.Acquire();
  ASSERT_TRUE(b.ok());
  // The other sharer spent 8 meanwhile; this answer's Date ticked over a second.
  pool.Release(*b, Rate(1, reset + absl::Milliseconds(30), 45), TokenOutcome::kOk);
  EXPECT_EQ(pool.Snapshot()[0].remaining, 1);
  EXPECT_EQ(clock_.TotalSlept(), absl::ZeroDuration());
  auto c = pool.Acquire();  // 1 left between two sharers is nobody's: waits for the window's end
  ASSERT_TRUE(c.ok());
  EXPECT_GE(clock_.Now(), reset + absl::Seconds(1));
}

}  // namespace
}  // namespace issuescope::crawler

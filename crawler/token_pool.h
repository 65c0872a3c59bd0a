// TokenPool: the tokens of one tracker (several accounts), shared by every crawl of a process.
// A request takes a token from the pool (Acquire), sends with it, and gives it back with what
// the response said (Release). The pool enforces the rate rules of the issue:
//
//  * serial per token: a token is lent to one request at a time (GitHub asks for this), so
//    concurrent crawls (several repositories, or the listings of one) use different tokens in
//    parallel and N tokens give about N times the pages per second of one;
//  * never over budget: a token whose X-RateLimit-Remaining is 0 is not lent before its reset
//    (+1 s, the header has whole seconds); a token is lent with the count it will spend already
//    taken off, so even a stale view never overspends; a window counts as over only a second
//    after its reset (the tracker's clock may lag ours), so no request is lent as the "first of
//    a new window" into the old one. Trackers that send no rate headers (Gitee)
//    can be given a configured budget per window, which the pool counts itself;
//  * secondary limits (403/429 with or without Retry-After): the token is benched until
//    Retry-After, or for an exponential backoff (initial doubling per consecutive limit, capped)
//    when the tracker gives no hint; other tokens keep working meanwhile;
//  * the pool's state is visible: Snapshot lists account, fingerprint (first 8 hex digits of
//    the token's SHA-256), remaining, limit, reset and benched-until — never the token;
//  * shared accounts: other processes may spend the same account's budget. SetSharedAllowance
//    (fed from the coordinator's heartbeat answer) caps how many more requests this pool lends
//    on an account's tokens before the account's reset; past the cap they wait for the reset
//    like a spent token.
//
// Acquire picks, among the free tokens with budget, the one with the most remaining requests
// (unknown budgets count as full), so load spreads over accounts. When none is usable it waits:
// on a condition variable while another request holds a token (its Release wakes the waiter), or
// on the Clock (FakeClock in tests) until the earliest reset or end of a bench.
//
// Ownership: owns the tokens; borrows the Clock. Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "crawler/github_parse.h"
#include "issuescope/v1/coordinator.pb.h"

namespace issuescope::crawler {

// PoolToken is one credential of the pool.
struct PoolToken {
  // Account the token belongs to, [A-Za-z0-9._@-]{1,100} (reported in heartbeats and status).
  std::string account;
  // The secret; never logged, stored or printed. Empty = anonymous requests.
  std::string token;
};

// HasSecrets says whether any of `tokens` is a secret (not anonymous).
inline bool HasSecrets(const std::vector<PoolToken>& tokens) {
  for (const PoolToken& t : tokens) {
    if (!t.token.empty()) return true;
  }
  return false;
}

// TokenPoolOptions configure a TokenPool. Every field documents its Default.
struct TokenPoolOptions {
  // First bench after a secondary limit without Retry-After; doubles per consecutive limit of
  // the same token. Default: 60 s (GitHub asks for at least a minute).
  absl::Duration secondary_backoff = absl::Seconds(60);
  // Longest such bench. Default: 15 min.
  absl::Duration max_secondary_backoff = absl::Minutes(15);
  // Longest a single Acquire waits for a token before RESOURCE_EXHAUSTED. Default: 2 h.
  absl::Duration max_wait = absl::Hours(2);
  // For trackers without rate headers: requests per token per `assumed_window`, counted by the
  // pool from a token's first request in a window (0 = not counted). Default: 0.
  int64_t assumed_limit = 0;
  // Length of that window; the pool waits 1 s past its end. Default: 1 h.
  absl::Duration assumed_window = absl::Hours(1);
};

// TokenStatus is the visible state of one token.
struct TokenStatus {
  std::string account;
  // First 8 lower-case hex digits of SHA-256(token); "anonymous" for the empty token.
  std::string fingerprint;
  // Last X-RateLimit-Remaining (minus requests in flight); -1 when unknown.
  int64_t remaining = -1;
  // X-RateLimit-Limit; -1 when unknown.
  int64_t limit = -1;
  // When the budget resets; InfinitePast when unknown.
  absl::Time reset = absl::InfinitePast();
  // Benched by a secondary limit until then; InfinitePast when not benched.
  absl::Time benched_until = absl::InfinitePast();
  // A request is using the token now.
  bool in_use = false;
  // Requests sent with the token, and secondary limits it received.
  int64_t requests = 0;
  int64_t secondary_limits = 0;
  // Requests the pool may still lend on the token's account under its shared allowance
  // (SetSharedAllowance); -1 when the account has no cap now.
  int64_t allowance = -1;
};

// TokenOutcome is what a response said about its token.
enum class TokenOutcome {
  // Anything that is not a rate limit (including 5xx and transport errors).
  kOk,
  // A secondary limit (403/429 while budget remains): bench the token.
  kSecondaryLimit,
  // The primary budget is spent (remaining 0): the rate headers say until when.
  kBudgetSpent,
};

// TokenFingerprint returns the first 8 lower-case hex digits of SHA-256(token) ("anonymous" for
// an empty token).
std::string TokenFingerprint(absl::string_view token);

// kAnonymousBudgetFingerprint stands for the anonymous "token" in budget reports (the
// coordinator takes 8 hex digits; no SHA-256 prefix of a real token is reported for it).
inline constexpr char kAnonymousBudgetFingerprint[] = "00000000";

// AnonymousAccount names the budget of anonymous requests from `host`: trackers limit them per
// client address, so every worker on one host spends one budget ("anonymous@<host>", the host
// reduced to [A-Za-z0-9._-], at most 64 characters; "anonymous@localhost" when empty). Workers
// on different hosts behind one NAT share an address but not this name: give them tokens.
std::string AnonymousAccount(absl::string_view host);

// ParseTokenList parses "TOKEN[,TOKEN...]" where each item is a token or "account=TOKEN"
// (whitespace around items ignored); tokens without an account are named `default_account`
// ("-1", "-2", ... appended when several). INVALID_ARGUMENT (never quoting a token) for an
// empty item or a bad account name.
absl::StatusOr<std::vector<PoolToken>> ParseTokenList(absl::string_view list,
                                                      absl::string_view default_account);

// TokensFromEnv reads the tokens named by `specs`, each "ENVVAR" or "account=ENVVAR"; the
// variable holds a ParseTokenList list (its items' account defaults to the spec's account, else
// to the variable's name). INVALID_ARGUMENT naming the variable (never its value) when it is
// unset or empty or its list is malformed. `flag` names the option in errors.
absl::StatusOr<std::vector<PoolToken>> TokensFromEnv(const std::vector<std::string>& specs,
                                                     absl::string_view flag);

// ValidAccountName reports whether `name` matches [A-Za-z0-9._@-]{1,100}.
bool ValidAccountName(absl::string_view name);

// TokenPool: see the file comment.
class TokenPool {
 public:
  // Lease is one token lent to one request; give it back with Release.
  struct Lease {
    // Index of the token in the pool; -1 for an empty lease.
    int index = -1;
    // The secret to send (empty: anonymous).
    std::string token;
  };

  // TokenPool over `tokens` (at least one; an empty list becomes one anonymous token).
  TokenPool(v1::Tracker tracker, std::vector<PoolToken> tokens, Clock* clock,
            TokenPoolOptions options = {});
  TokenPool(const TokenPool&) = delete;
  TokenPool& operator=(const TokenPool&) = delete;

  // tracker names the tracker the tokens are for.
  v1::Tracker tracker() const { return tracker_; }
  // size is the number of tokens.
  int size() const { return static_cast<int>(tokens_.size()); }
  // HasSecret says whether any token of the pool is a secret (not anonymous).
  bool HasSecret() const {
    for (const Entry& e : tokens_) {
      if (!e.cred.token.empty()) return true;
    }
    return false;
  }

  // Acquire lends a token with budget that no other request holds, waiting as the file comment
  // says. `cancelled` (may be empty) is polled while waiting: CANCELLED when it returns true.
  // RESOURCE_EXHAUSTED when no token becomes usable within max_wait.
  absl::StatusOr<Lease> Acquire(const std::function<bool()>& cancelled = {});

  // busy_waiters is the number of Acquire calls waiting now for a token another request holds.
  int busy_waiters() const {
    std::lock_guard<std::mutex> lock(mu_);
    return busy_waiters_;
  }

  // Release gives a lease back with the response's rate headers (`seen`, fields -1 when
  // absent), its outcome and, for a secondary limit, the Retry-After delay.
  void Release(const Lease& lease, const RateLimit& seen, TokenOutcome outcome,
               std::optional<absl::Duration> retry_after = std::nullopt);

  // SetSharedAllowance caps the requests this pool lends on the tokens of `account` at
  // `allowance` more until `reset` (+1 s, the trackers' resets have whole seconds); requests
  // beyond it wait for the reset like a spent token, then the cap lapses. Each call replaces the
  // account's cap (counting from now). A negative allowance, or a reset that is unknown
  // (InfinitePast) or already past, removes the cap. Accounts the pool does not hold are ignored.
  // `sharers` (>= 1) is how many processes spend the account: between two answers of the
  // tracker, a token of the account is lent at most remaining / sharers times (the remaining
  // that answer announced), so processes that each saw the same last requests of a window do not
  // all spend them. It stays in force after the cap lapses, until the next call.
  void SetSharedAllowance(const std::string& account, int64_t allowance, absl::Time reset,
                          int sharers = 1);
  // LentOn counts the requests lent on `account`'s tokens since the pool was made.
  int64_t LentOn(const std::string& account) const;

  // Snapshot returns every token's state, in pool order.
  std::vector<TokenStatus> Snapshot() const;
  // Budgets returns the snapshot as heartbeat TokenBudget messages, one per token: remaining -1
  // and limit 0 while its budget is unknown (not used yet); anonymous tokens under
  // kAnonymousBudgetFingerprint.
  std::vector<v1::TokenBudget> Budgets() const;
  // Combined returns the best budget over all tokens (most remaining; the earliest reset among
  // spent ones when all are spent), for progress reports that carry one budget.
  RateLimit Combined() const;

 private:
  struct Entry {
    PoolToken cred;
    std::string fingerprint;
    RateLimit rate;              // newest window seen; remaining lowered by requests in flight
    absl::Time benched_until = absl::InfinitePast();
    int consecutive_limits = 0;
    bool in_use = false;
    int64_t requests = 0;
    int64_t secondary_limits = 0;
    absl::Time window_start = absl::InfinitePast();  // assumed budget: counted window
    int64_t window_used = 0;
    int64_t observed = -1;  // remaining announced by the newest answer of the window; -1: none
  };

  // Allowance is the shared cap of one account (SetSharedAllowance).
  struct Allowance {
    int64_t left = 0;                          // < 0: no cap
    absl::Time reset = absl::InfinitePast();
    int sharers = 1;
  };

  // UsableAt returns when entry `e` may next be lent (InfinitePast: now), ignoring in_use.
  absl::Time UsableAt(const Entry& e, absl::Time now) const;
  // Remaining returns the entry's remaining budget for ranking (unknown = large).
  int64_t Remaining(const Entry& e, absl::Time now) const;

  const v1::Tracker tracker_;
  Clock* const clock_;
  const TokenPoolOptions options_;

  mutable std::mutex mu_;
  std::condition_variable released_;
  int busy_waiters_ = 0;       // guarded by mu_
  std::vector<Entry> tokens_;  // guarded by mu_
  std::map<std::string, Allowance> allowances_;  // guarded by mu_; by account
  std::map<std::string, int64_t> lent_;           // guarded by mu_; requests lent, by account
};

}  // namespace issuescope::crawler

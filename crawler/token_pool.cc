#include "crawler/token_pool.h"

#include <openssl/sha.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/env_token.h"
#include "common/status_macros.h"
#include "common/repo_slug.h"
#include "common/time_util.h"

namespace issuescope::crawler {
namespace {

// How long an Acquire waiting for a busy token sleeps between looks at the clock (a Release
// wakes it earlier). Real time: the holder is another thread doing real work.
constexpr std::chrono::milliseconds kBusyPoll(50);

constexpr int64_t kUnknownRemaining = std::numeric_limits<int64_t>::max() / 4;

// A tracker's reset has whole seconds, and its clock may run up to a second behind ours: its
// window is over only one second after the reset it announced. Until then a request may still
// land in the old window, so nothing is lent on the assumption of a new one.
constexpr absl::Duration kResetSlack = absl::Seconds(1);

// How far apart the resets of one window may be when measured from different answers: the
// Date each is measured from has whole seconds, and the answers' transit times differ.
constexpr absl::Duration kResetJitter = absl::Seconds(2);

bool WindowOver(absl::Time reset, absl::Time now) {
  return reset != absl::InfinitePast() && now >= reset + kResetSlack;
}

}  // namespace

std::string TokenFingerprint(absl::string_view token) {
  if (token.empty()) return "anonymous";
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 4; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 15]);
  }
  return out;
}

bool ValidAccountName(absl::string_view name) {
  if (name.empty() || name.size() > 100) return false;
  for (char c : name) {
    if (!(absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
          c == '@' || c == '-')) {
      return false;
    }
  }
  return true;
}

std::string AnonymousAccount(absl::string_view host) {
  std::string out = "anonymous@";
  for (char c : host.substr(0, 64)) {
    const bool ok = absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
                    c == '-';
    out.push_back(ok ? c : '-');
  }
  if (host.empty()) out += "localhost";
  return out;
}

absl::StatusOr<std::vector<PoolToken>> ParseTokenList(absl::string_view list,
                                                      absl::string_view default_account) {
  std::vector<PoolToken> out;
  std::vector<absl::string_view> items = absl::StrSplit(list, ',');
  int unnamed = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const absl::string_view item = absl::StripAsciiWhitespace(items[i]);
    if (item.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("token list item ", i + 1, " of ", items.size(), " is empty"));
    }
    PoolToken t;
    const size_t eq = item.find('=');
    // "account=TOKEN" when the part before '=' is an account name and a token follows; else the
    // whole item is the token (base64 tokens may end in '=').
    if (eq != absl::string_view::npos && eq + 1 < item.size() &&
        ValidAccountName(item.substr(0, eq))) {
      t.account = std::string(item.substr(0, eq));
      t.token = std::string(item.substr(eq + 1));
    } else {
      t.token = std::string(item);
      ++unnamed;
    }
    out.push_back(std::move(t));
  }
  int n = 0;
  for (PoolToken& t : out) {
    if (!t.account.empty()) continue;
    ++n;
    t.account = unnamed > 1 ? absl::StrCat(default_account, "-", n) : std::string(default_account);
    if (!ValidAccountName(t.account)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "account name '", t.account.substr(0, 100), "' must match [A-Za-z0-9._@-]{1,100}"));
    }
  }
  return out;
}

absl::StatusOr<std::vector<PoolToken>> TokensFromEnv(const std::vector<std::string>& specs,
                                                     absl::string_view flag) {
  std::vector<PoolToken> out;
  for (const std::string& spec : specs) {
    std::string account, var = spec;
    const size_t eq = spec.find('=');
    if (eq != std::string::npos) {
      account = spec.substr(0, eq);
      var = spec.substr(eq + 1);
      if (!ValidAccountName(account)) {
        return absl::InvalidArgumentError(absl::StrCat(
            flag, " '", spec.substr(0, 120), "': account must match [A-Za-z0-9._@-]{1,100}"));
      }
    }
    if (var.empty()) return absl::InvalidArgumentError(absl::StrCat(flag, " names no variable"));
    ASSIGN_OR_RETURN(std::string value, TokenFromEnvironment(std::string(var), std::string(flag)));
    auto tokens = ParseTokenList(value, account.empty() ? var : account);
    if (!tokens.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("environment variable ", var, ": ", tokens.status().message()));
    }
    for (PoolToken& t : *tokens) out.push_back(std::move(t));
  }
  return out;
}

TokenPool::TokenPool(v1::Tracker tracker, std::vector<PoolToken> tokens, Clock* clock,
                     TokenPoolOptions options)
    : tracker_(tracker), clock_(clock), options_(options) {
  if (tokens.empty()) tokens.push_back(PoolToken{"anonymous", ""});
  for (PoolToken& t : tokens) {
    Entry e;
    e.fingerprint = TokenFingerprint(t.token);
    if (t.account.empty()) t.account = t.token.empty() ? "anonymous" : e.fingerprint;
    e.cred = std::move(t);
    tokens_.push_back(std::move(e));
  }
}

absl::Time TokenPool::UsableAt(const Entry& e, absl::Time now) const {
  absl::Time t = absl::InfinitePast();
  if (e.benched_until > now) t = e.benched_until;
  if (e.rate.remaining == 0 && e.rate.reset != absl::InfinitePast()) {
    // The tracker's reset has whole seconds; one more keeps us past it.
    const absl::Time spent_until = e.rate.reset + kResetSlack;
    if (spent_until > now) t = std::max(t, spent_until);
  }
  if (auto cap = allowances_.find(e.cred.account); cap != allowances_.end()) {
    const Allowance& a = cap->second;
    if (a.left == 0 && a.reset != absl::InfinitePast()) {
      const absl::Time cap_until = a.reset + kResetSlack;
      if (cap_until > now) t = std::max(t, cap_until);
    }
    // This process's share of what the tracker's last answer announced is lent.
    if (a.sharers > 1 && e.observed >= 0 && e.rate.remaining >= 0 &&
        e.rate.reset != absl::InfinitePast() &&
        e.observed - e.rate.remaining >= e.observed / a.sharers) {
      const absl::Time spent_until = e.rate.reset + kResetSlack;
      if (spent_until > now) t = std::max(t, spent_until);
    }
  }
  if (options_.assumed_limit > 0 && e.rate.remaining < 0 &&
      e.window_start != absl::InfinitePast()) {
    const absl::Time window_end = e.window_start + options_.assumed_window + absl::Seconds(1);
    if (now < window_end && e.window_used >= options_.assumed_limit) t = std::max(t, window_end);
  }
  return t;
}

int64_t TokenPool::Remaining(const Entry& e, absl::Time now) const {
  if (e.rate.remaining >= 0) {
    if (WindowOver(e.rate.reset, now)) {
      return e.rate.limit >= 0 ? e.rate.limit : kUnknownRemaining;  // a new window
    }
    return e.rate.remaining;
  }
  if (options_.assumed_limit > 0) {
    if (e.window_start == absl::InfinitePast() ||
        now >= e.window_start + options_.assumed_window + absl::Seconds(1)) {
      return options_.assumed_limit;
    }
    return options_.assumed_limit - e.window_used;
  }
  return kUnknownRemaining;
}

absl::StatusOr<TokenPool::Lease> TokenPool::Acquire(const std::function<bool()>& cancelled) {
  const absl::Time deadline = clock_->Now() + options_.max_wait;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (cancelled && cancelled()) return absl::CancelledError("cancelled while waiting for a token");
    const absl::Time now = clock_->Now();
    int best = -1;
    int64_t best_remaining = -1;
    bool any_busy = false;
    absl::Time earliest = absl::InfiniteFuture();
    for (size_t i = 0; i < tokens_.size(); ++i) {
      const Entry& e = tokens_[i];
      if (e.in_use) {
        any_busy = true;
        continue;
      }
      const absl::Time usable = UsableAt(e, now);
      if (usable > now) {
        earliest = std::min(earliest, usable);
        continue;
      }
      const int64_t r = Remaining(e, now);
      if (r > best_remaining) {
        best = static_cast<int>(i);
        best_remaining = r;
      }
    }
    if (best >= 0) {
      Entry& e = tokens_[best];
      e.in_use = true;
      ++e.requests;
      ++lent_[e.cred.account];
      if (auto cap = allowances_.find(e.cred.account); cap != allowances_.end()) {
        if (cap->second.left >= 0 && now >= cap->second.reset + kResetSlack) {
          cap->second.left = -1;  // the account's window ended: the cap lapses
        } else if (cap->second.left > 0) {
          --cap->second.left;
        }
      }
      if (e.rate.remaining >= 0 && WindowOver(e.rate.reset, now)) {
        // The window ended: the tracker's next answer tells the new one.
        e.rate.remaining = e.rate.limit >= 0 ? e.rate.limit : -1;
        e.rate.reset = absl::InfinitePast();
        e.observed = -1;
      }
      if (e.rate.remaining > 0) --e.rate.remaining;  // this request spends one
      if (options_.assumed_limit > 0) {
        if (e.window_start == absl::InfinitePast() ||
            now >= e.window_start + options_.assumed_window + absl::Seconds(1)) {
          e.window_start = now;
          e.window_used = 0;
        }
        ++e.window_used;
      }
      return Lease{best, e.cred.token};
    }
    if (any_busy) {
      ++busy_waiters_;
      released_.wait_for(lock, kBusyPoll);
      --busy_waiters_;
      continue;
    }
    if (earliest > deadline) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "all ", tokens_.size(), " ", TrackerName(tracker_),
          " tokens are spent or rate limited until ", FormatRfc3339(earliest),
          ", past the longest wait of ", absl::FormatDuration(options_.max_wait)));
    }
    lock.unlock();
    clock_->SleepFor(std::min(earliest - now, absl::Seconds(1)));
    lock.lock();
  }
}

void TokenPool::Release(const Lease& lease, const RateLimit& seen, TokenOutcome outcome,
                        std::optional<absl::Duration> retry_after) {
  if (lease.index < 0) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (lease.index >= static_cast<int>(tokens_.size())) return;
    Entry& e = tokens_[lease.index];
    const absl::Time now = clock_->Now();
    e.in_use = false;
    // Requests on a token are serial: this answer is the tracker's newest word, unless its reset
    // lies well before the window already seen (a stale copy, e.g. from a cache). Resets of one
    // window measured from different answers differ by up to a second or so (the Date header
    // has whole seconds), and a later answer's may be the earlier one: it still counts.
    if (seen.remaining >= 0 &&
        (e.rate.remaining < 0 || e.rate.reset == absl::InfinitePast() ||
         seen.reset + kResetJitter >= e.rate.reset)) {
      e.rate = seen;
      e.observed = seen.remaining;
    }
    auto bench = [&](absl::Duration d) { e.benched_until = std::max(e.benched_until, now + d); };
    switch (outcome) {
      case TokenOutcome::kOk:
        e.consecutive_limits = 0;
        break;
      case TokenOutcome::kSecondaryLimit: {
        ++e.secondary_limits;
        ++e.consecutive_limits;
        if (retry_after) {
          bench(*retry_after);
        } else {
          absl::Duration d = options_.secondary_backoff;
          for (int i = 1; i < e.consecutive_limits && d < options_.max_secondary_backoff; ++i) {
            d *= 2;
          }
          bench(std::min(d, options_.max_secondary_backoff));
        }
        break;
      }
      case TokenOutcome::kBudgetSpent:
        if (seen.remaining >= 0 && seen.reset != absl::InfinitePast() && seen.reset >= now) {
          e.rate.remaining = 0;
        } else if (retry_after) {
          bench(*retry_after);
        } else {
          bench(options_.secondary_backoff);
        }
        if (options_.assumed_limit > 0) e.window_used = options_.assumed_limit;
        break;
    }
  }
  released_.notify_all();
}

void TokenPool::SetSharedAllowance(const std::string& account, int64_t allowance,
                                   absl::Time reset, int sharers) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    bool held = false;
    for (const Entry& e : tokens_) held = held || e.cred.account == account;
    if (!held) return;
    Allowance a;
    a.sharers = std::max(1, sharers);
    a.reset = reset;
    a.left = allowance;
    if (allowance < 0 || reset == absl::InfinitePast() ||
        clock_->Now() >= reset + kResetSlack) {
      a.left = -1;
    }
    allowances_[account] = a;
  }
  released_.notify_all();  // a larger cap may let a waiter go
}

int64_t TokenPool::LentOn(const std::string& account) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = lent_.find(account);
  return it == lent_.end() ? 0 : it->second;
}

std::vector<TokenStatus> TokenPool::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  const absl::Time now = clock_->Now();
  std::vector<TokenStatus> out;
  for (const Entry& e : tokens_) {
    TokenStatus s;
    s.account = e.cred.account;
    s.fingerprint = e.fingerprint;
    s.remaining = e.rate.remaining;
    s.limit = e.rate.limit;
    s.reset = e.rate.reset;
    if (e.rate.remaining < 0 && options_.assumed_limit > 0) {
      s.remaining = Remaining(e, now);
      s.limit = options_.assumed_limit;
      if (e.window_start != absl::InfinitePast()) {
        s.reset = e.window_start + options_.assumed_window;
      }
    }
    s.benched_until = e.benched_until > now ? e.benched_until : absl::InfinitePast();
    s.in_use = e.in_use;
    s.requests = e.requests;
    s.secondary_limits = e.secondary_limits;
    if (auto cap = allowances_.find(e.cred.account); cap != allowances_.end() &&
                                                     cap->second.left >= 0 &&
                                                     now < cap->second.reset + kResetSlack) {
      s.allowance = cap->second.left;
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<v1::TokenBudget> TokenPool::Budgets() const {
  std::vector<v1::TokenBudget> out;
  for (const TokenStatus& s : Snapshot()) {
    // The coordinator takes 8-hex fingerprints; a token not used yet is reported with
    // remaining -1 (unknown), so the coordinator counts this worker among the account's sharers
    // and answers with its share of what others know is left; anonymous requests are reported
    // under kAnonymousBudgetFingerprint, so workers on one host share their address's budget.
    const bool anonymous = s.fingerprint == TokenFingerprint("");
    if (!anonymous && s.fingerprint.size() != 8) continue;
    v1::TokenBudget b;
    b.set_account(s.account);
    b.set_token_fingerprint(anonymous ? kAnonymousBudgetFingerprint : s.fingerprint);
    b.set_tracker(tracker_);
    b.set_remaining(std::max<int64_t>(s.remaining, -1));
    b.set_limit(std::max<int64_t>(s.limit, 0));
    if (s.reset != absl::InfinitePast()) *b.mutable_reset() = ToProto(s.reset);
    out.push_back(std::move(b));
  }
  return out;
}

RateLimit TokenPool::Combined() const {
  std::lock_guard<std::mutex> lock(mu_);
  const absl::Time now = clock_->Now();
  const Entry* best = nullptr;
  for (const Entry& e : tokens_) {
    if (e.rate.remaining < 0) continue;
    if (best == nullptr) {
      best = &e;
      continue;
    }
    const int64_t r = Remaining(e, now), b = Remaining(*best, now);
    if (r > b || (r == 0 && b == 0 && e.rate.reset < best->rate.reset)) best = &e;
  }
  return best != nullptr ? best->rate : RateLimit{};
}

}  // namespace issuescope::crawler

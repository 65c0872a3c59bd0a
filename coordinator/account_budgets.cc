#include "coordinator/account_budgets.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/time_util.h"

namespace issuescope::coordinator {
namespace {

// Resets of one window reported by different responses differ by clock skew at most.
constexpr absl::Duration kSameWindow = absl::Seconds(2);

bool Matches(v1::Tracker account_tracker, v1::Tracker tracker) {
  return account_tracker == v1::TRACKER_UNSPECIFIED || tracker == v1::TRACKER_UNSPECIFIED ||
         account_tracker == tracker;
}

}  // namespace

absl::Status ValidateTokenBudget(const v1::TokenBudget& b, const std::string& field) {
  const std::string& account = b.account();
  bool ok = !account.empty() && account.size() <= 100;
  for (char c : account) {
    if (!(absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
          c == '@' || c == '-')) {
      ok = false;
    }
  }
  if (!ok) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".account must match [A-Za-z0-9._@-]{1,100}"));
  }
  const std::string& fp = b.token_fingerprint();
  bool hex = fp.size() == 8;
  for (char c : fp) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) hex = false;
  }
  if (!hex) {
    // Never echo the value: a misconfigured worker might have put the token itself here.
    return absl::InvalidArgumentError(absl::StrCat(
        field, ".token_fingerprint must be 8 lower-case hex digits (the first 8 of the "
               "token's SHA-256), got ",
        fp.size(), " characters"));
  }
  if (!v1::Tracker_IsValid(b.tracker())) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".tracker ", static_cast<int>(b.tracker()), " is not a tracker"));
  }
  if (!b.resource().empty() && b.resource() != "core" && b.resource() != "graphql") {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ".resource must be \"\", \"core\" or \"graphql\" (got ",
        b.resource().size(), " characters)"));
  }
  if (b.remaining() < -1 || b.limit() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": remaining must be >= -1 and limit ",
                                                   ">= 0 (got ", b.remaining(), ", ", b.limit(),
                                                   ")"));
  }
  return absl::OkStatus();
}

void AccountBook::Report(const std::string& worker,
                         const google::protobuf::RepeatedPtrField<v1::TokenBudget>& budgets,
                         absl::Time now) {
  std::set<Key>& keys = worker_accounts_[worker];
  keys.clear();
  std::vector<v1::WorkerTokenBudget>& tokens = worker_tokens_[worker];
  tokens.clear();
  for (const v1::TokenBudget& b : budgets) {
    v1::WorkerTokenBudget& token = tokens.emplace_back();
    token.set_worker_id(worker);
    *token.mutable_budget() = b;
    if (now != absl::InfinitePast()) *token.mutable_reported_at() = ToProto(now);
    Key key{b.account(), b.tracker(), b.resource() == "graphql" ? "graphql" : ""};
    keys.insert(key);
    Account& account = accounts_[key];
    account.fingerprints.insert(b.token_fingerprint());
    account.limit = std::max(account.limit, b.limit());
    if (b.remaining() < 0) continue;
    const absl::Time reset = b.has_reset() ? FromProto(b.reset()) : absl::InfinitePast();
    if (account.remaining < 0 || reset > account.reset + kSameWindow) {
      account.remaining = b.remaining();  // the first figure, or a newer window
      account.reset = reset;
    } else if (reset >= account.reset - kSameWindow) {
      account.remaining = std::min(account.remaining, b.remaining());  // the same window
      account.reset = std::max(account.reset, reset);
    }
    // Otherwise the figure belongs to an older window: ignored.
  }
  if (keys.empty()) worker_accounts_.erase(worker);
  if (tokens.empty()) worker_tokens_.erase(worker);
}

void AccountBook::ForgetWorker(const std::string& worker) {
  worker_accounts_.erase(worker);
  worker_tokens_.erase(worker);
}

std::vector<v1::WorkerTokenBudget> AccountBook::Tokens(const std::set<std::string>* workers) const {
  std::vector<v1::WorkerTokenBudget> out;
  for (const auto& [worker, tokens] : worker_tokens_) {
    if (workers != nullptr && workers->count(worker) == 0) continue;
    out.insert(out.end(), tokens.begin(), tokens.end());
  }
  std::sort(out.begin(), out.end(),
            [](const v1::WorkerTokenBudget& a, const v1::WorkerTokenBudget& b) {
              return std::make_tuple(a.budget().account(), static_cast<int>(a.budget().tracker()),
                                     a.budget().token_fingerprint(), a.budget().resource(),
                                     a.worker_id()) <
                     std::make_tuple(b.budget().account(), static_cast<int>(b.budget().tracker()),
                                     b.budget().token_fingerprint(), b.budget().resource(),
                                     b.worker_id());
            });
  return out;
}

int64_t AccountBook::Effective(const Account& account, absl::Time now) {
  if (account.remaining < 0) return -1;
  if (account.reset != absl::InfinitePast() && now >= account.reset) {
    return account.limit > 0 ? account.limit : -1;
  }
  return account.remaining;
}

std::set<std::string> AccountBook::WorkersOf(const Key& key) const {
  std::set<std::string> workers;
  for (const auto& [worker, keys] : worker_accounts_) {
    if (keys.count(key) > 0) workers.insert(worker);
  }
  return workers;
}

int AccountBook::LeasesOf(const Key& key, const LeaseCount& leases) const {
  int n = 0;
  for (const std::string& worker : WorkersOf(key)) {
    for (const auto& [wt, count] : leases) {
      if (wt.first == worker && Matches(std::get<1>(key), wt.second)) n += count;
    }
  }
  return n;
}

bool AccountBook::MayGrant(const std::string& worker, v1::Tracker tracker, absl::Time now,
                           const LeaseCount& leases) const {
  auto it = worker_accounts_.find(worker);
  if (it == worker_accounts_.end()) return true;
  for (const Key& key : it->second) {
    if (!Matches(std::get<1>(key), tracker) || !std::get<2>(key).empty()) continue;
    auto account = accounts_.find(key);
    if (account == accounts_.end()) continue;
    const int64_t remaining = Effective(account->second, now);
    if (remaining < 0) continue;  // unknown: nothing to hold back on
    if (remaining < reserve_ * (LeasesOf(key, leases) + 1)) return false;
  }
  return true;
}

v1::AccountBudget AccountBook::ViewOf(const Key& key, const Account& account, absl::Time now,
                                      const LeaseCount& leases) const {
  v1::AccountBudget view;
  view.set_account(std::get<0>(key));
  view.set_tracker(std::get<1>(key));
  view.set_resource(std::get<2>(key));
  view.set_remaining(Effective(account, now));
  view.set_limit(account.limit);
  if (account.reset != absl::InfinitePast()) *view.mutable_reset() = ToProto(account.reset);
  for (const std::string& fp : account.fingerprints) view.add_token_fingerprints(fp);
  for (const std::string& worker : WorkersOf(key)) view.add_workers(worker);
  const int held = LeasesOf(key, leases);
  view.set_leases(held);
  view.set_reserve(reserve_);
  view.set_held_back(std::get<2>(key).empty() && view.remaining() >= 0 &&
                     view.remaining() < reserve_ * (held + 1));
  return view;
}

std::vector<v1::AccountBudget> AccountBook::View(absl::Time now, const LeaseCount& leases,
                                                 const std::set<std::string>* workers) const {
  std::vector<v1::AccountBudget> out;
  for (const auto& [key, account] : accounts_) {
    std::set<std::string> reporters = WorkersOf(key);
    bool shown = workers == nullptr ? !reporters.empty() : false;
    if (workers != nullptr) {
      for (const std::string& w : reporters) shown = shown || workers->count(w) > 0;
    }
    if (shown) out.push_back(ViewOf(key, account, now, leases));
  }
  return out;
}

std::vector<std::string> AccountBook::AccountsOf(const std::string& worker) const {
  std::set<std::string> names;
  auto it = worker_accounts_.find(worker);
  if (it != worker_accounts_.end()) {
    for (const Key& key : it->second) names.insert(std::get<0>(key));
  }
  return {names.begin(), names.end()};
}

}  // namespace issuescope::coordinator

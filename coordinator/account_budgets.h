// AccountBook: the coordinator's view of the shared rate budgets of tracker accounts. Tokens
// belong to accounts and a tracker's rate limit is per account, so workers whose tokens share an
// account spend one budget. Workers report, in every heartbeat, what the tracker last told them
// about each token (remaining, limit, reset; identified by account and a fingerprint, never the
// token). Per account the book keeps the newest window (latest reset) and the smallest remaining
// count reported in it: any one worker's figure is an upper bound on what is left.
//
// A new lease on a repository of tracker T goes to a worker only while every account it uses for
// T has remaining >= reserve * (leases held on T by the account's workers + 1): each running crawl
// keeps `reserve` requests of headroom, so the workers together stop before the budget is spent.
// Once an account's reset has passed its budget counts as the full limit again until a new report.
//
// GitHub's GraphQL budget (points, TokenBudget.resource "graphql") is kept per account beside the
// REST budget and shown in status, but never holds a lease back: a crawl whose GraphQL budget is
// spent lists over REST.
//
// Memory only: after a coordinator restart the book fills again from the next heartbeats.
// Thread-compatible: CoordinatorCore calls it under its mutex.
#pragma once

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "google/protobuf/repeated_field.h"
#include "issuescope/v1/coordinator.pb.h"

namespace issuescope::coordinator {

// ValidateTokenBudget checks one reported budget: account [A-Za-z0-9._@-]{1,100}, fingerprint of
// exactly 8 lower-case hex digits (a raw token never fits, and it is never echoed in the error),
// known tracker, remaining >= -1, limit >= 0. `field` prefixes errors.
absl::Status ValidateTokenBudget(const v1::TokenBudget& budget, const std::string& field);

// AccountBook keeps per-account budgets; see the file comment.
class AccountBook {
 public:
  // LeaseCount answers how many leases `worker` holds on repositories of `tracker`
  // (TRACKER_UNSPECIFIED: on any tracker).
  using LeaseCount = std::map<std::pair<std::string, v1::Tracker>, int>;

  // `reserve` is the headroom per running crawl (>= 0).
  explicit AccountBook(int64_t reserve) : reserve_(reserve) {}

  // Report replaces what `worker` uses with `budgets` (already validated), received at `now`,
  // and folds each figure into its account's window.
  void Report(const std::string& worker,
              const google::protobuf::RepeatedPtrField<v1::TokenBudget>& budgets,
              absl::Time now = absl::InfinitePast());
  // ForgetWorker drops a worker that left or died (its accounts keep their figures; its
  // per-token reports go).
  void ForgetWorker(const std::string& worker);
  // MayGrant says whether `worker` may take one more lease on `tracker` at `now`.
  bool MayGrant(const std::string& worker, v1::Tracker tracker, absl::Time now,
                const LeaseCount& leases) const;
  // View returns the accounts reported by any of `workers` (all when null), sorted by
  // account then tracker.
  std::vector<v1::AccountBudget> View(absl::Time now, const LeaseCount& leases,
                                      const std::set<std::string>* workers) const;
  // Tokens returns the latest per-token report of each of `workers` (all when null), sorted by
  // account, tracker, fingerprint, then worker.
  std::vector<v1::WorkerTokenBudget> Tokens(const std::set<std::string>* workers) const;
  // AccountsOf returns the account names `worker` reported, sorted.
  std::vector<std::string> AccountsOf(const std::string& worker) const;

 private:
  using Key = std::tuple<std::string, v1::Tracker, std::string>;  // account, tracker, resource
  struct Account {
    int64_t remaining = -1;
    int64_t limit = -1;
    absl::Time reset = absl::InfinitePast();
    std::set<std::string> fingerprints;
  };
  // Effective remaining at `now` (-1: unknown).
  static int64_t Effective(const Account& account, absl::Time now);
  // Workers of `key` and the leases they hold on its tracker.
  std::set<std::string> WorkersOf(const Key& key) const;
  int LeasesOf(const Key& key, const LeaseCount& leases) const;
  v1::AccountBudget ViewOf(const Key& key, const Account& account, absl::Time now,
                           const LeaseCount& leases) const;

  int64_t reserve_;
  std::map<Key, Account> accounts_;
  std::map<std::string, std::set<Key>> worker_accounts_;
  std::map<std::string, std::vector<v1::WorkerTokenBudget>> worker_tokens_;  // by worker
};

}  // namespace issuescope::coordinator

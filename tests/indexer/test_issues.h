// Builders of issues, change events and batches for the indexer tests, plus WaitUntil, which
// waits on a condition with a deadline (no fixed sleeps).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "issuescope/v1/store.pb.h"

namespace issuescope::indexer::testing {

// MakeIssue returns issue `number` of github:owner/name with a title and an updated_at of
// `updated_s` unix seconds.
inline v1::IssueWithComments MakeIssue(const std::string& repo, int64_t number,
                                       const std::string& title, int64_t updated_s) {
  v1::IssueWithComments iwc;
  v1::Issue* issue = iwc.mutable_issue();
  const size_t slash = repo.find('/');
  issue->mutable_repo()->set_tracker(v1::TRACKER_GITHUB);
  issue->mutable_repo()->set_owner(repo.substr(0, slash));
  issue->mutable_repo()->set_name(repo.substr(slash + 1));
  issue->set_number(number);
  issue->set_key(std::to_string(number));
  issue->set_title(title);
  issue->set_body("body of " + title);
  issue->set_state(v1::ISSUE_STATE_OPEN);
  issue->mutable_created_at()->set_seconds(1600000000);
  issue->mutable_updated_at()->set_seconds(updated_s);
  return iwc;
}

// Slug returns the repository slug of an issue made by MakeIssue ("github:owner/name").
inline std::string Slug(const std::string& repo) { return "github:" + repo; }

// Upsert returns an UPSERT event at `seq` carrying `iwc`.
inline v1::ChangeEvent Upsert(uint64_t seq, const v1::IssueWithComments& iwc) {
  v1::ChangeEvent event;
  event.set_seq(seq);
  event.set_kind(v1::CHANGE_KIND_UPSERT);
  event.set_repo_slug("github:" + iwc.issue().repo().owner() + "/" + iwc.issue().repo().name());
  event.set_number(iwc.issue().number());
  *event.mutable_current() = iwc;
  return event;
}

// Delete returns a DELETE event at `seq` for issue `number` of `repo` (owner/name), without
// issue state.
inline v1::ChangeEvent Delete(uint64_t seq, const std::string& repo, int64_t number) {
  v1::ChangeEvent event;
  event.set_seq(seq);
  event.set_kind(v1::CHANGE_KIND_DELETE);
  event.set_repo_slug(Slug(repo));
  event.set_number(number);
  return event;
}

// Batch returns a batch of `store_id` covering up to `last_seq`.
inline v1::ChangeBatch Batch(const std::string& store_id, uint64_t last_seq,
                             const std::vector<v1::ChangeEvent>& events) {
  v1::ChangeBatch batch;
  batch.set_store_id(store_id);
  batch.set_last_seq(last_seq);
  for (const v1::ChangeEvent& e : events) *batch.add_events() = e;
  return batch;
}

// WaitUntil polls `condition` until it holds or `timeout` passes; returns whether it held.
inline bool WaitUntil(const std::function<bool()>& condition,
                      absl::Duration timeout = absl::Seconds(20)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return condition();
}

}  // namespace issuescope::indexer::testing

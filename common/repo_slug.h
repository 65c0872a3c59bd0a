// Repository slugs: the one textual name of a repository across the system,
// "<tracker>:<owner>/<name>", e.g. "github:pytorch/pytorch" or "gitee:mindspore/mindspore".
// Owners and names are compared case-insensitively by trackers, so slugs are lower-cased.
#pragma once

#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "issuescope/v1/model.pb.h"

namespace issuescope {

// TrackerName returns "github", "gitlab", "gitee" (or "unknown").
std::string TrackerName(v1::Tracker tracker);

// IssueStateName returns "open", "closed", "progressing", "rejected" (or "unknown"): the names
// used in the index and printed by the CLI.
std::string IssueStateName(v1::IssueState state);

// ParseTrackerName maps "github"/"gitlab"/"gitee"/"gitcode" to a Tracker.
absl::StatusOr<v1::Tracker> ParseTrackerName(absl::string_view name);

// DefaultApiUrl returns the public API base URL of a tracker.
std::string DefaultApiUrl(v1::Tracker tracker);

// ParseRepoSpec parses "github:owner/name" (the tracker prefix is required) into a RepositoryRef;
// a GitLab owner may be a nested group path ("gitlab:group/subgroup/name": owner "group/subgroup").
// INVALID_ARGUMENT names what is wrong: unknown tracker prefix, missing owner or name, bad chars.
absl::StatusOr<v1::RepositoryRef> ParseRepoSpec(absl::string_view spec);

// RepoSlug returns the canonical slug of a repository ("github:owner/name", lower-cased).
std::string RepoSlug(const v1::RepositoryRef& repo);

// RepoFullName returns "owner/name" with the tracker's own casing.
std::string RepoFullName(const v1::RepositoryRef& repo);

// IssueKey returns "github:owner/name#123".
std::string IssueKey(absl::string_view repo_slug, int64_t number);

// ParseIssueRef parses "github:owner/name#123" or "owner/name#123" (GitHub assumed).
absl::Status ParseIssueRef(absl::string_view ref, std::string* repo_slug, int64_t* number);

}  // namespace issuescope

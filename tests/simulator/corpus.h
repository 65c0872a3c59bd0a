// Corpus: the simulator's in-memory model of issue trackers — repositories (each served in one
// tracker dialect: GitHub, GitLab or Gitee), their issues (pull requests included, as on GitHub)
// and comments (GitLab notes, system notes flagged) — plus the sorted indexes that make listing
// fast for large corpora, the old names of transferred repositories and the numbers of deleted
// issues. Timestamps are whole Unix seconds.
//
// Ownership: a Corpus owns everything it holds; issues refer to their comments by index into
// their repository's comment vector. Thread-safety: none; TrackerSimulator guards its Corpus
// with a shared mutex (readers list, Mutate writes).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace issuescope::sim {

// Label is one label of a repository's label catalog.
struct Label {
  std::string name;         // e.g. "module: cuda"
  std::string color;        // six hex digits, no '#'
  std::string description;  // may be empty
  bool is_default = false;  // GitHub's "default" flag (bug, enhancement, ...)
};

// Tracker is the forge dialect a repository is served in: GitHub REST v3 (/repos/...), GitLab v4
// (/api/v4/projects/...) or Gitee v5 (/api/v5/repos/...).
enum class Tracker { kGithub, kGitlab, kGitee };

// TrackerName returns "github", "gitlab" or "gitee".
const char* TrackerName(Tracker tracker);

// ParseTracker parses a TrackerName; false for anything else.
bool ParseTracker(absl::string_view text, Tracker* tracker);

// kGiteeKeyBase is 36^4: Gitee issue numbers are stored as kGiteeKeyBase + n (n = 1, 2, ...),
// so their key "I" + base-36 always has 5+ digits (see contracts: Gitee issue keys).
constexpr int64_t kGiteeKeyBase = 1679616;

// GiteeKey returns "I" + uppercase base-36 of `number` (a stored Gitee issue number).
std::string GiteeKey(int64_t number);

// ParseGiteeKey decodes "I" + [0-9A-Z]+ into the stored number; false for anything else.
bool ParseGiteeKey(absl::string_view key, int64_t* number);

// Comment is one issue comment (a GitLab note). `id` is unique across the whole corpus.
struct Comment {
  int64_t id = 0;
  int64_t issue_number = 0;  // the issue it belongs to, in the same repository
  std::string user;          // author login
  std::string body;
  int64_t created_at = 0;    // Unix seconds
  int64_t updated_at = 0;    // >= created_at
  bool system = false;       // a GitLab system note ("closed", "added ~bug label"); GitLab only
};

// Issue is one issue or pull request. `id` is unique across the whole corpus.
struct Issue {
  int64_t id = 0;
  int64_t number = 0;  // unique within its repository
  std::string title;
  std::string body;
  std::string user;  // author login
  bool open = true;
  // GitHub: "" (null), "completed", "not_planned" or "reopened". Gitee repositories use it for
  // their extra states: "progressing" (open) and "rejected" (closed); "" otherwise.
  std::string state_reason;
  bool locked = false;
  std::vector<std::string> labels;     // names from the repository's label catalog
  std::vector<std::string> assignees;  // logins
  int64_t created_at = 0;
  int64_t updated_at = 0;  // >= created_at
  int64_t closed_at = 0;   // 0 = null
  bool is_pull_request = false;
  bool planted = false;  // carries the planted phrase (generator ground truth)
  std::array<int32_t, 8> reactions{};  // +1, -1, laugh, hooray, confused, heart, rocket, eyes
  std::vector<uint32_t> comments;      // indexes into Repository::comments, oldest first
};

// Repository is one repository with its issues, comments, labels and sorted indexes.
// GitLab owners may contain '/' (subgroups: owner "group/sub", name "project").
struct Repository {
  Tracker tracker = Tracker::kGithub;
  std::string owner;
  std::string name;
  int64_t id = 0;
  int64_t created_at = 0;
  std::vector<Label> labels;
  std::vector<Issue> issues;
  std::vector<Comment> comments;
  // Indexes (positions in `issues` / `comments`), kept sorted by (key, number) / (key, id).
  std::vector<uint32_t> issues_by_created;
  std::vector<uint32_t> issues_by_updated;
  std::vector<uint32_t> comments_by_created;
  std::vector<uint32_t> comments_by_updated;
  std::unordered_map<int64_t, uint32_t> issue_index;  // number -> position in `issues`
  std::vector<int64_t> deleted_numbers;  // issues deleted by fault injection (GET answers 410)
  // IssueMove is an issue transferred to another repository (GET answers 301 to its new place).
  struct IssueMove {
    int64_t number = 0;      // its number here
    int64_t to_repo_id = 0;  // the repository it went to
    int64_t to_number = 0;   // its number there
  };
  std::vector<IssueMove> moved_out;

  // FullName returns "owner/name".
  std::string FullName() const { return owner + "/" + name; }
  // FindIssue returns the issue numbered `number`, or nullptr.
  const Issue* FindIssue(int64_t number) const;
  Issue* FindIssue(int64_t number);
  // FindLabel returns the catalog entry named `name`, or nullptr.
  const Label* FindLabel(absl::string_view name) const;
  // FindMove returns where issue `number` was transferred to, or nullptr.
  const IssueMove* FindMove(int64_t number) const;
  // NextNumber is the number a new issue gets: above every number used so far (deleted and
  // transferred numbers are never reused).
  int64_t NextNumber() const;
  // IsDeleted reports whether issue `number` was deleted.
  bool IsDeleted(int64_t number) const;
  // DeleteIssue removes issue `number` and its comments and remembers it as deleted; false when
  // there is no such issue.
  bool DeleteIssue(int64_t number);
  // StateName returns the issue's state as the repository's tracker spells it: GitHub
  // open/closed, GitLab opened/closed, Gitee open/progressing/closed/rejected.
  std::string StateName(const Issue& issue) const;
  // Key returns the issue's external key: Gitee "I..." (GiteeKey), otherwise the decimal number.
  std::string Key(const Issue& issue) const;
  // OpenIssuesCount counts open issues and pull requests (GitHub's open_issues_count).
  int64_t OpenIssuesCount() const;
  // RebuildIndexes recomputes every index from `issues` and `comments`.
  void RebuildIndexes();
  // ReindexIssueUpdated moves issue at `pos` in issues_by_updated after its updated_at changed
  // from `old_updated_at`.
  void ReindexIssueUpdated(uint32_t pos, int64_t old_updated_at);
  // AddIssue appends an issue (number must be new) and indexes it.
  uint32_t AddIssue(Issue issue);
  // AddComment appends a comment to the issue it names and indexes it; returns its position.
  uint32_t AddComment(Comment comment);
};

// CorpusEntry is the ground truth about one issue, as /_sim/corpus reports it.
struct CorpusEntry {
  std::string repo;  // "owner/name"
  int64_t number = 0;  // GitHub number, GitLab iid, Gitee decoded key (kGiteeKeyBase + n)
  std::string updated_at;  // RFC 3339
  bool is_pull_request = false;
  int64_t comments = 0;
  bool planted = false;
  std::string title;
  std::string tracker = "github";  // TrackerName
  std::string key;                 // Gitee "I..." key; the decimal number elsewhere
  std::string state;               // Repository::StateName
  int64_t system_notes = 0;        // GitLab system notes among `comments`
};

// DeletedEntry names an issue deleted by fault injection.
struct DeletedEntry {
  std::string tracker;
  std::string repo;  // "owner/name"
  int64_t number = 0;
  std::string key;
};

// Redirect is a repository's old name after a transfer: requests for it answer 301.
struct Redirect {
  Tracker tracker = Tracker::kGithub;
  std::string owner;
  std::string name;
  int64_t repo_id = 0;  // the repository now serving it
};

// Corpus is the whole simulated tracker.
struct Corpus {
  std::vector<Repository> repos;
  std::vector<Redirect> redirects;  // old names of transferred repositories
  int64_t next_issue_id = 1;    // next global issue id
  int64_t next_comment_id = 1;  // next global comment id

  // FindRepo returns the repository "owner/name" (case-insensitive, like GitHub) of `tracker`,
  // or nullptr. The two-argument form finds a GitHub repository.
  const Repository* FindRepo(Tracker tracker, absl::string_view owner,
                             absl::string_view name) const;
  Repository* FindRepo(Tracker tracker, absl::string_view owner, absl::string_view name);
  const Repository* FindRepo(absl::string_view owner, absl::string_view name) const {
    return FindRepo(Tracker::kGithub, owner, name);
  }
  Repository* FindRepo(absl::string_view owner, absl::string_view name) {
    return FindRepo(Tracker::kGithub, owner, name);
  }
  // FindRepoById returns the repository of `tracker` with id `id`, or nullptr.
  const Repository* FindRepoById(Tracker tracker, int64_t id) const;
  // FindRedirect returns the redirect of an old name, or nullptr.
  const Redirect* FindRedirect(Tracker tracker, absl::string_view owner,
                               absl::string_view name) const;
  // FindRepoSpec finds "[tracker:]owner/name" (owner may contain '/'); without a tracker prefix
  // the first repository of that name in any tracker. nullptr when none.
  Repository* FindRepoSpec(absl::string_view spec);
  // TransferIssue moves issue `number` of `from` (with its comments, id and dates) to `to` (same
  // tracker) under to.NextNumber(), which it returns; `from` remembers the move. NOT_FOUND when
  // there is no such issue, INVALID_ARGUMENT for another tracker or the same repository.
  absl::StatusOr<int64_t> TransferIssue(Repository& from, int64_t number, Repository& to);
  // Transfer renames repository "[tracker:]from" to "to" ("owner/name", same tracker) and
  // remembers the old name as a redirect. NOT_FOUND / ALREADY_EXISTS / INVALID_ARGUMENT.
  absl::Status Transfer(absl::string_view from, absl::string_view to);
  // Deleted lists the issues deleted by fault injection.
  std::vector<DeletedEntry> Deleted() const;
  // NewestTimestamp returns the largest timestamp anywhere in the corpus (0 when empty).
  int64_t NewestTimestamp() const;
  // IssueCount / CommentCount count across all repositories.
  int64_t IssueCount() const;
  int64_t CommentCount() const;
  // Entries lists every issue, repository by repository, by number.
  std::vector<CorpusEntry> Entries() const;
  // RebuildIndexes rebuilds every repository's indexes.
  void RebuildIndexes();
};

// FormatTimestamp formats Unix seconds as "YYYY-MM-DDTHH:MM:SSZ".
std::string FormatTimestamp(int64_t unix_seconds);

// StableHash is FNV-1a (64-bit): the same value on every platform and run.
uint64_t StableHash(absl::string_view text, uint64_t seed = 0);

}  // namespace issuescope::sim

// Corpus: the simulator's in-memory model of an issue tracker — repositories, their issues
// (pull requests included, as on GitHub) and comments — plus the sorted indexes that make listing
// fast for large corpora. Timestamps are whole Unix seconds (GitHub's resolution).
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

#include "absl/strings/string_view.h"

namespace issuescope::sim {

// Label is one label of a repository's label catalog.
struct Label {
  std::string name;         // e.g. "module: cuda"
  std::string color;        // six hex digits, no '#'
  std::string description;  // may be empty
  bool is_default = false;  // GitHub's "default" flag (bug, enhancement, ...)
};

// Comment is one issue comment. `id` is unique across the whole corpus.
struct Comment {
  int64_t id = 0;
  int64_t issue_number = 0;  // the issue it belongs to, in the same repository
  std::string user;          // author login
  std::string body;
  int64_t created_at = 0;    // Unix seconds
  int64_t updated_at = 0;    // >= created_at
};

// Issue is one issue or pull request. `id` is unique across the whole corpus.
struct Issue {
  int64_t id = 0;
  int64_t number = 0;  // unique within its repository
  std::string title;
  std::string body;
  std::string user;  // author login
  bool open = true;
  std::string state_reason;  // "" (null), "completed", "not_planned" or "reopened"
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
struct Repository {
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

  // FullName returns "owner/name".
  std::string FullName() const { return owner + "/" + name; }
  // FindIssue returns the issue numbered `number`, or nullptr.
  const Issue* FindIssue(int64_t number) const;
  Issue* FindIssue(int64_t number);
  // FindLabel returns the catalog entry named `name`, or nullptr.
  const Label* FindLabel(absl::string_view name) const;
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
  int64_t number = 0;
  std::string updated_at;  // RFC 3339
  bool is_pull_request = false;
  int64_t comments = 0;
  bool planted = false;
  std::string title;
};

// Corpus is the whole simulated tracker.
struct Corpus {
  std::vector<Repository> repos;
  int64_t next_issue_id = 1;    // next global issue id
  int64_t next_comment_id = 1;  // next global comment id

  // FindRepo returns the repository "owner/name" (case-insensitive, like GitHub), or nullptr.
  const Repository* FindRepo(absl::string_view owner, absl::string_view name) const;
  Repository* FindRepo(absl::string_view owner, absl::string_view name);
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

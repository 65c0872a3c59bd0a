#include "tests/simulator/corpus.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/time_util.h"

namespace issuescope::sim {

std::string FormatTimestamp(int64_t unix_seconds) {
  return FormatRfc3339(absl::FromUnixSeconds(unix_seconds));
}

uint64_t StableHash(absl::string_view text, uint64_t seed) {
  uint64_t h = 14695981039346656037ULL ^ (seed * 1099511628211ULL);
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

const char* TrackerName(Tracker tracker) {
  switch (tracker) {
    case Tracker::kGitlab: return "gitlab";
    case Tracker::kGitee: return "gitee";
    case Tracker::kGithub: break;
  }
  return "github";
}

bool ParseTracker(absl::string_view text, Tracker* tracker) {
  for (Tracker t : {Tracker::kGithub, Tracker::kGitlab, Tracker::kGitee}) {
    if (text == TrackerName(t)) {
      *tracker = t;
      return true;
    }
  }
  return false;
}

std::string GiteeKey(int64_t number) {
  static const char kDigits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  std::string digits;
  uint64_t n = static_cast<uint64_t>(number);
  do {
    digits.insert(digits.begin(), kDigits[n % 36]);
    n /= 36;
  } while (n > 0);
  return "I" + digits;
}

bool ParseGiteeKey(absl::string_view key, int64_t* number) {
  if (key.size() < 2 || key.size() > 13 || key[0] != 'I') return false;
  int64_t n = 0;
  for (char c : key.substr(1)) {
    int d = 0;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'A' && c <= 'Z') {
      d = c - 'A' + 10;
    } else {
      return false;
    }
    n = n * 36 + d;
  }
  *number = n;
  return true;
}

bool Repository::IsDeleted(int64_t number) const {
  return std::find(deleted_numbers.begin(), deleted_numbers.end(), number) !=
         deleted_numbers.end();
}

const Repository::IssueMove* Repository::FindMove(int64_t number) const {
  for (const IssueMove& m : moved_out) {
    if (m.number == number) return &m;
  }
  return nullptr;
}

int64_t Repository::NextNumber() const {
  int64_t number = tracker == Tracker::kGitee ? kGiteeKeyBase : 0;
  for (const Issue& i : issues) number = std::max(number, i.number);
  for (int64_t d : deleted_numbers) number = std::max(number, d);
  for (const IssueMove& m : moved_out) number = std::max(number, m.number);
  return number + 1;
}

absl::StatusOr<int64_t> Corpus::TransferIssue(Repository& from, int64_t number, Repository& to) {
  if (&from == &to || from.tracker != to.tracker) {
    return absl::InvalidArgumentError("an issue moves to another repository of the same tracker");
  }
  auto it = from.issue_index.find(number);
  if (it == from.issue_index.end()) {
    return absl::NotFoundError(absl::StrCat(from.FullName(), "#", number, " not found"));
  }
  Issue issue = from.issues[it->second];
  const int64_t to_number = to.NextNumber();
  std::vector<Comment> comments;
  for (const Comment& c : from.comments) {
    if (c.issue_number == number) comments.push_back(c);
  }
  from.issues.erase(from.issues.begin() + it->second);
  from.comments.erase(std::remove_if(from.comments.begin(), from.comments.end(),
                                     [&](const Comment& c) { return c.issue_number == number; }),
                      from.comments.end());
  from.moved_out.push_back(Repository::IssueMove{number, to.id, to_number});
  from.RebuildIndexes();
  issue.number = to_number;
  issue.comments.clear();
  to.AddIssue(std::move(issue));
  for (Comment& c : comments) {
    c.issue_number = to_number;
    to.AddComment(std::move(c));
  }
  return to_number;
}

bool Repository::DeleteIssue(int64_t number) {
  auto it = issue_index.find(number);
  if (it == issue_index.end()) return false;
  issues.erase(issues.begin() + it->second);
  comments.erase(std::remove_if(comments.begin(), comments.end(),
                                [&](const Comment& c) { return c.issue_number == number; }),
                 comments.end());
  deleted_numbers.push_back(number);
  RebuildIndexes();
  return true;
}

std::string Repository::StateName(const Issue& issue) const {
  if (tracker == Tracker::kGitlab) return issue.open ? "opened" : "closed";
  if (tracker == Tracker::kGitee) {
    if (issue.open) return issue.state_reason == "progressing" ? "progressing" : "open";
    return issue.state_reason == "rejected" ? "rejected" : "closed";
  }
  return issue.open ? "open" : "closed";
}

std::string Repository::Key(const Issue& issue) const {
  return tracker == Tracker::kGitee ? GiteeKey(issue.number) : std::to_string(issue.number);
}

const Issue* Repository::FindIssue(int64_t number) const {
  auto it = issue_index.find(number);
  return it == issue_index.end() ? nullptr : &issues[it->second];
}

Issue* Repository::FindIssue(int64_t number) {
  auto it = issue_index.find(number);
  return it == issue_index.end() ? nullptr : &issues[it->second];
}

const Label* Repository::FindLabel(absl::string_view label_name) const {
  for (const Label& l : labels) {
    if (l.name == label_name) return &l;
  }
  return nullptr;
}

int64_t Repository::OpenIssuesCount() const {
  return std::count_if(issues.begin(), issues.end(), [](const Issue& i) { return i.open; });
}

namespace {

// IssueLess orders issue positions by (key, number).
template <int64_t Issue::*Key>
struct IssueLess {
  const std::vector<Issue>* issues;
  bool operator()(uint32_t a, uint32_t b) const {
    const Issue& x = (*issues)[a];
    const Issue& y = (*issues)[b];
    if (x.*Key != y.*Key) return x.*Key < y.*Key;
    return x.number < y.number;
  }
};

template <int64_t Comment::*Key>
struct CommentLess {
  const std::vector<Comment>* comments;
  bool operator()(uint32_t a, uint32_t b) const {
    const Comment& x = (*comments)[a];
    const Comment& y = (*comments)[b];
    if (x.*Key != y.*Key) return x.*Key < y.*Key;
    return x.id < y.id;
  }
};

std::vector<uint32_t> Iota(size_t n) {
  std::vector<uint32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint32_t>(i);
  return v;
}

}  // namespace

void Repository::RebuildIndexes() {
  issue_index.clear();
  for (uint32_t i = 0; i < issues.size(); ++i) {
    issue_index[issues[i].number] = i;
    issues[i].comments.clear();
  }
  for (uint32_t c = 0; c < comments.size(); ++c) {
    Issue* issue = FindIssue(comments[c].issue_number);
    if (issue != nullptr) issue->comments.push_back(c);
  }
  for (Issue& issue : issues) {
    std::sort(issue.comments.begin(), issue.comments.end(),
              CommentLess<&Comment::created_at>{&comments});
  }
  issues_by_created = Iota(issues.size());
  std::sort(issues_by_created.begin(), issues_by_created.end(),
            IssueLess<&Issue::created_at>{&issues});
  issues_by_updated = Iota(issues.size());
  std::sort(issues_by_updated.begin(), issues_by_updated.end(),
            IssueLess<&Issue::updated_at>{&issues});
  comments_by_created = Iota(comments.size());
  std::sort(comments_by_created.begin(), comments_by_created.end(),
            CommentLess<&Comment::created_at>{&comments});
  comments_by_updated = Iota(comments.size());
  std::sort(comments_by_updated.begin(), comments_by_updated.end(),
            CommentLess<&Comment::updated_at>{&comments});
}

void Repository::ReindexIssueUpdated(uint32_t pos, int64_t old_updated_at) {
  const int64_t number = issues[pos].number;
  auto old_key_less = [&](uint32_t a, std::pair<int64_t, int64_t> key) {
    const Issue& x = issues[a];
    const int64_t xu = (a == pos) ? old_updated_at : x.updated_at;
    return std::make_pair(xu, x.number) < key;
  };
  auto it = std::lower_bound(issues_by_updated.begin(), issues_by_updated.end(),
                             std::make_pair(old_updated_at, number), old_key_less);
  if (it != issues_by_updated.end() && *it == pos) issues_by_updated.erase(it);
  auto at = std::lower_bound(issues_by_updated.begin(), issues_by_updated.end(), pos,
                             IssueLess<&Issue::updated_at>{&issues});
  issues_by_updated.insert(at, pos);
}

uint32_t Repository::AddIssue(Issue issue) {
  const uint32_t pos = static_cast<uint32_t>(issues.size());
  issues.push_back(std::move(issue));
  issue_index[issues[pos].number] = pos;
  auto c = std::lower_bound(issues_by_created.begin(), issues_by_created.end(), pos,
                            IssueLess<&Issue::created_at>{&issues});
  issues_by_created.insert(c, pos);
  auto u = std::lower_bound(issues_by_updated.begin(), issues_by_updated.end(), pos,
                            IssueLess<&Issue::updated_at>{&issues});
  issues_by_updated.insert(u, pos);
  return pos;
}

uint32_t Repository::AddComment(Comment comment) {
  const uint32_t pos = static_cast<uint32_t>(comments.size());
  comments.push_back(std::move(comment));
  Issue* issue = FindIssue(comments[pos].issue_number);
  if (issue != nullptr) issue->comments.push_back(pos);
  auto c = std::lower_bound(comments_by_created.begin(), comments_by_created.end(), pos,
                            CommentLess<&Comment::created_at>{&comments});
  comments_by_created.insert(c, pos);
  auto u = std::lower_bound(comments_by_updated.begin(), comments_by_updated.end(), pos,
                            CommentLess<&Comment::updated_at>{&comments});
  comments_by_updated.insert(u, pos);
  return pos;
}

const Repository* Corpus::FindRepo(Tracker tracker, absl::string_view owner,
                                   absl::string_view name) const {
  for (const Repository& r : repos) {
    if (r.tracker == tracker && absl::EqualsIgnoreCase(r.owner, owner) &&
        absl::EqualsIgnoreCase(r.name, name)) {
      return &r;
    }
  }
  return nullptr;
}

Repository* Corpus::FindRepo(Tracker tracker, absl::string_view owner, absl::string_view name) {
  const Corpus* self = this;
  return const_cast<Repository*>(self->FindRepo(tracker, owner, name));
}

const Repository* Corpus::FindRepoById(Tracker tracker, int64_t id) const {
  for (const Repository& r : repos) {
    if (r.tracker == tracker && r.id == id) return &r;
  }
  return nullptr;
}

const Redirect* Corpus::FindRedirect(Tracker tracker, absl::string_view owner,
                                     absl::string_view name) const {
  // The newest redirect of a name wins (a name can be transferred away more than once).
  for (auto it = redirects.rbegin(); it != redirects.rend(); ++it) {
    if (it->tracker == tracker && absl::EqualsIgnoreCase(it->owner, owner) &&
        absl::EqualsIgnoreCase(it->name, name)) {
      return &*it;
    }
  }
  return nullptr;
}

namespace {

// SplitSpec splits "[tracker:]owner/name" at the tracker prefix and the last '/'.
bool SplitSpec(absl::string_view spec, bool* has_tracker, Tracker* tracker, std::string* owner,
               std::string* name) {
  *has_tracker = false;
  const size_t colon = spec.find(':');
  if (colon != absl::string_view::npos) {
    if (!ParseTracker(spec.substr(0, colon), tracker)) return false;
    *has_tracker = true;
    spec = spec.substr(colon + 1);
  }
  const size_t slash = spec.rfind('/');
  if (slash == absl::string_view::npos || slash == 0 || slash + 1 == spec.size()) return false;
  *owner = std::string(spec.substr(0, slash));
  *name = std::string(spec.substr(slash + 1));
  return true;
}

}  // namespace

Repository* Corpus::FindRepoSpec(absl::string_view spec) {
  bool has_tracker = false;
  Tracker tracker = Tracker::kGithub;
  std::string owner, name;
  if (!SplitSpec(spec, &has_tracker, &tracker, &owner, &name)) return nullptr;
  for (Repository& r : repos) {
    if ((!has_tracker || r.tracker == tracker) && absl::EqualsIgnoreCase(r.owner, owner) &&
        absl::EqualsIgnoreCase(r.name, name)) {
      return &r;
    }
  }
  return nullptr;
}

absl::Status Corpus::Transfer(absl::string_view from, absl::string_view to) {
  Repository* repo = FindRepoSpec(from);
  if (repo == nullptr) {
    return absl::NotFoundError(absl::StrCat("transfer: repository '", from, "' not found"));
  }
  bool has_tracker = false;
  Tracker ignored = Tracker::kGithub;
  std::string owner, name;
  if (!SplitSpec(to, &has_tracker, &ignored, &owner, &name) || has_tracker) {
    return absl::InvalidArgumentError(
        absl::StrCat("transfer: target '", to, "' is not owner/name"));
  }
  if (FindRepo(repo->tracker, owner, name) != nullptr) {
    return absl::AlreadyExistsError(absl::StrCat("transfer: '", to, "' already exists"));
  }
  redirects.push_back(Redirect{repo->tracker, repo->owner, repo->name, repo->id});
  repo->owner = owner;
  repo->name = name;
  return absl::OkStatus();
}

std::vector<DeletedEntry> Corpus::Deleted() const {
  std::vector<DeletedEntry> out;
  for (const Repository& r : repos) {
    for (int64_t n : r.deleted_numbers) {
      out.push_back(DeletedEntry{TrackerName(r.tracker), r.FullName(), n,
                                 r.tracker == Tracker::kGitee ? GiteeKey(n) : std::to_string(n)});
    }
  }
  return out;
}

int64_t Corpus::NewestTimestamp() const {
  int64_t newest = 0;
  for (const Repository& r : repos) {
    newest = std::max(newest, r.created_at);
    for (const Issue& i : r.issues) {
      newest = std::max({newest, i.created_at, i.updated_at, i.closed_at});
    }
    for (const Comment& c : r.comments) newest = std::max({newest, c.created_at, c.updated_at});
  }
  return newest;
}

int64_t Corpus::IssueCount() const {
  int64_t n = 0;
  for (const Repository& r : repos) n += static_cast<int64_t>(r.issues.size());
  return n;
}

int64_t Corpus::CommentCount() const {
  int64_t n = 0;
  for (const Repository& r : repos) n += static_cast<int64_t>(r.comments.size());
  return n;
}

std::vector<CorpusEntry> Corpus::Entries() const {
  std::vector<CorpusEntry> out;
  out.reserve(static_cast<size_t>(IssueCount()));
  for (const Repository& r : repos) {
    std::vector<const Issue*> sorted;
    sorted.reserve(r.issues.size());
    for (const Issue& i : r.issues) sorted.push_back(&i);
    std::sort(sorted.begin(), sorted.end(),
              [](const Issue* a, const Issue* b) { return a->number < b->number; });
    const std::string full = r.FullName();
    for (const Issue* i : sorted) {
      CorpusEntry e{full, i->number, FormatTimestamp(i->updated_at),
                    i->is_pull_request, static_cast<int64_t>(i->comments.size()),
                    i->planted, i->title};
      e.tracker = TrackerName(r.tracker);
      e.key = r.Key(*i);
      e.state = r.StateName(*i);
      for (uint32_t c : i->comments) e.system_notes += r.comments[c].system ? 1 : 0;
      out.push_back(std::move(e));
    }
  }
  return out;
}

void Corpus::RebuildIndexes() {
  for (Repository& r : repos) r.RebuildIndexes();
}

}  // namespace issuescope::sim

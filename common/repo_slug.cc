#include "common/repo_slug.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace issuescope {
namespace {

bool ValidPart(absl::string_view s) {
  if (s.empty() || s.size() > 100) return false;
  for (char c : s) {
    if (!(absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ||
          c == '.')) {
      return false;
    }
  }
  return s != "." && s != "..";
}

}  // namespace

std::string TrackerName(v1::Tracker tracker) {
  switch (tracker) {
    case v1::TRACKER_GITHUB: return "github";
    case v1::TRACKER_GITLAB: return "gitlab";
    case v1::TRACKER_GITEE: return "gitee";
    default: return "unknown";
  }
}

std::string IssueStateName(v1::IssueState state) {
  switch (state) {
    case v1::ISSUE_STATE_OPEN: return "open";
    case v1::ISSUE_STATE_CLOSED: return "closed";
    case v1::ISSUE_STATE_PROGRESSING: return "progressing";
    case v1::ISSUE_STATE_REJECTED: return "rejected";
    default: return "unknown";
  }
}

absl::StatusOr<v1::Tracker> ParseTrackerName(absl::string_view name) {
  std::string n = absl::AsciiStrToLower(name);
  if (n == "github") return v1::TRACKER_GITHUB;
  if (n == "gitlab") return v1::TRACKER_GITLAB;
  if (n == "gitee" || n == "gitcode") return v1::TRACKER_GITEE;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown tracker '", name, "' (expected github, gitlab or gitee)"));
}

std::string DefaultApiUrl(v1::Tracker tracker) {
  switch (tracker) {
    case v1::TRACKER_GITHUB: return "https://api.github.com";
    case v1::TRACKER_GITLAB: return "https://gitlab.com/api/v4";
    case v1::TRACKER_GITEE: return "https://gitee.com/api/v5";
    default: return "";
  }
}

absl::StatusOr<v1::RepositoryRef> ParseRepoSpec(absl::string_view spec) {
  size_t colon = spec.find(':');
  if (colon == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "repository '", spec, "' has no tracker prefix (write github:OWNER/NAME)"));
  }
  auto tracker = ParseTrackerName(spec.substr(0, colon));
  if (!tracker.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("repository '", spec, "': ", tracker.status().message()));
  }
  absl::string_view rest = spec.substr(colon + 1);
  std::vector<absl::string_view> parts = absl::StrSplit(rest, '/');
  // GitLab namespaces nest (group/subgroup/project, at most 20 levels of groups); GitHub and
  // Gitee have one owner.
  const size_t max_parts = *tracker == v1::TRACKER_GITLAB ? 21 : 2;
  bool valid = parts.size() >= 2 && parts.size() <= max_parts;
  for (absl::string_view part : parts) valid = valid && ValidPart(part);
  if (!valid) {
    return absl::InvalidArgumentError(absl::StrCat(
        "repository '", spec, "' is not of the form ", TrackerName(*tracker),
        *tracker == v1::TRACKER_GITLAB ? ":GROUP[/SUBGROUP...]/NAME" : ":OWNER/NAME"));
  }
  v1::RepositoryRef ref;
  ref.set_tracker(*tracker);
  const size_t slash = rest.rfind('/');
  ref.set_owner(std::string(rest.substr(0, slash)));
  ref.set_name(std::string(rest.substr(slash + 1)));
  return ref;
}

std::string RepoSlug(const v1::RepositoryRef& repo) {
  return absl::AsciiStrToLower(
      absl::StrCat(TrackerName(repo.tracker()), ":", repo.owner(), "/", repo.name()));
}

std::string RepoFullName(const v1::RepositoryRef& repo) {
  return absl::StrCat(repo.owner(), "/", repo.name());
}

std::string IssueKey(absl::string_view repo_slug, int64_t number) {
  return absl::StrCat(repo_slug, "#", number);
}

absl::Status ParseIssueRef(absl::string_view ref, std::string* repo_slug, int64_t* number) {
  size_t hash = ref.rfind('#');
  if (hash == absl::string_view::npos || !absl::SimpleAtoi(ref.substr(hash + 1), number) ||
      *number <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("issue '", ref, "' is not of the form OWNER/NAME#NUMBER"));
  }
  std::string spec(ref.substr(0, hash));
  if (spec.find(':') == std::string::npos) spec = "github:" + spec;
  auto repo = ParseRepoSpec(spec);
  if (!repo.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("issue '", ref, "': ", repo.status().message()));
  }
  *repo_slug = RepoSlug(*repo);
  return absl::OkStatus();
}

}  // namespace issuescope

#include "tests/simulator/forge_json.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"

namespace issuescope::sim {
namespace {

int64_t UserId(const std::string& login) {
  return static_cast<int64_t>(StableHash(login) % 90000000) + 1000000;
}

Json GitlabNullableTime(int64_t t) { return t == 0 ? Json() : Json(GitlabTime(t)); }
Json GiteeNullableTime(int64_t t) { return t == 0 ? Json() : Json(GiteeTime(t)); }

Json GitlabUser(const std::string& login, const std::string& base) {
  Json j;
  j["id"] = UserId(login);
  j["username"] = login;
  j["name"] = login;
  j["state"] = "active";
  j["locked"] = false;
  j["avatar_url"] = absl::StrCat(base, "/uploads/-/system/user/avatar/", UserId(login),
                                 "/avatar.png");
  j["web_url"] = absl::StrCat(base, "/", login);
  return j;
}

Json GiteeUser(const std::string& login, const std::string& base) {
  const std::string api = absl::StrCat(base, "/api/v5/users/", login);
  Json j;
  j["id"] = UserId(login);
  j["login"] = login;
  j["name"] = login;
  j["avatar_url"] = absl::StrCat(base, "/assets/no_portrait.png");
  j["url"] = api;
  j["html_url"] = absl::StrCat(base, "/", login);
  j["followers_url"] = api + "/followers";
  j["following_url"] = api + "/following_url{/other_user}";
  j["gists_url"] = api + "/gists{/gist_id}";
  j["starred_url"] = api + "/starred{/owner}{/repo}";
  j["subscriptions_url"] = api + "/subscriptions";
  j["organizations_url"] = api + "/orgs";
  j["repos_url"] = api + "/repos";
  j["events_url"] = api + "/events{/privacy}";
  j["received_events_url"] = api + "/received_events";
  j["type"] = "User";
  j["site_admin"] = false;
  return j;
}

int64_t UpdatedAt(const Repository& repo) {
  int64_t updated = repo.created_at;
  if (!repo.issues_by_updated.empty()) {
    updated = std::max(updated, repo.issues[repo.issues_by_updated.back()].updated_at);
  }
  return updated;
}

std::string LastSegment(const std::string& path) { return path.substr(path.rfind('/') + 1); }

}  // namespace

std::string GitlabTime(int64_t unix_seconds) {
  return absl::StrReplaceAll(FormatTimestamp(unix_seconds), {{"Z", ".000Z"}});
}

std::string GiteeTime(int64_t unix_seconds) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%S+08:00", absl::FromUnixSeconds(unix_seconds),
                          absl::FixedTimeZone(8 * 3600));
}

Json GitlabProjectJson(const Repository& repo, const std::string& base) {
  const std::string full = repo.FullName();
  const std::string api = absl::StrCat(base, "/api/v4/projects/", repo.id);
  Json ns;
  ns["id"] = UserId(repo.owner);
  ns["name"] = LastSegment(repo.owner);
  ns["path"] = LastSegment(repo.owner);
  ns["kind"] = "group";
  ns["full_path"] = repo.owner;
  ns["parent_id"] = nullptr;
  ns["avatar_url"] = nullptr;
  ns["web_url"] = absl::StrCat(base, "/groups/", repo.owner);
  Json links;
  links["self"] = api;
  links["issues"] = api + "/issues";
  links["merge_requests"] = api + "/merge_requests";
  links["repo_branches"] = api + "/repository/branches";
  links["labels"] = api + "/labels";
  links["events"] = api + "/events";
  links["members"] = api + "/members";
  Json j;
  j["id"] = repo.id;
  j["description"] = absl::StrCat("Simulated issue tracker of ", full);
  j["name"] = repo.name;
  j["name_with_namespace"] = absl::StrCat(absl::StrReplaceAll(repo.owner, {{"/", " / "}}),
                                          " / ", repo.name);
  j["path"] = repo.name;
  j["path_with_namespace"] = full;
  j["created_at"] = GitlabTime(repo.created_at);
  j["default_branch"] = "main";
  j["tag_list"] = Json::array();
  j["topics"] = Json::array();
  j["http_url_to_repo"] = absl::StrCat(base, "/", full, ".git");
  j["web_url"] = absl::StrCat(base, "/", full);
  j["forks_count"] = 0;
  j["avatar_url"] = nullptr;
  j["star_count"] = 0;
  j["last_activity_at"] = GitlabTime(UpdatedAt(repo));
  j["namespace"] = std::move(ns);
  j["_links"] = std::move(links);
  j["empty_repo"] = false;
  j["archived"] = false;
  j["visibility"] = "public";
  j["issues_enabled"] = true;
  j["open_issues_count"] = repo.OpenIssuesCount();
  j["updated_at"] = GitlabTime(UpdatedAt(repo));
  return j;
}

Json GitlabIssueJson(const Repository& repo, const Issue& issue, const std::string& base) {
  const std::string full = repo.FullName();
  const std::string api = absl::StrCat(base, "/api/v4/projects/", repo.id);
  const std::string self = absl::StrCat(api, "/issues/", issue.number);
  int64_t user_notes = 0;
  for (uint32_t c : issue.comments) user_notes += repo.comments[c].system ? 0 : 1;
  Json j;
  j["id"] = issue.id;
  j["iid"] = issue.number;
  j["project_id"] = repo.id;
  j["title"] = issue.title;
  j["description"] = issue.body.empty() ? Json() : Json(issue.body);
  j["state"] = repo.StateName(issue);
  j["created_at"] = GitlabTime(issue.created_at);
  j["updated_at"] = GitlabTime(issue.updated_at);
  j["closed_at"] = issue.open ? Json() : GitlabNullableTime(issue.closed_at);
  j["closed_by"] = issue.open ? Json() : GitlabUser(issue.user, base);
  j["labels"] = issue.labels;
  j["milestone"] = nullptr;
  Json assignees = Json::array();
  for (const std::string& a : issue.assignees) assignees.push_back(GitlabUser(a, base));
  j["assignees"] = std::move(assignees);
  j["author"] = GitlabUser(issue.user, base);
  j["type"] = "ISSUE";
  j["assignee"] = issue.assignees.empty() ? Json() : GitlabUser(issue.assignees[0], base);
  j["user_notes_count"] = user_notes;
  j["merge_requests_count"] = 0;
  j["upvotes"] = issue.reactions[0];
  j["downvotes"] = issue.reactions[1];
  j["due_date"] = nullptr;
  j["confidential"] = false;
  j["discussion_locked"] = issue.locked ? Json(true) : Json();
  j["issue_type"] = "issue";
  j["web_url"] = absl::StrCat(base, "/", full, "/-/issues/", issue.number);
  Json links;
  links["self"] = self;
  links["notes"] = self + "/notes";
  links["award_emoji"] = self + "/award_emoji";
  links["project"] = api;
  links["closed_as_duplicate_of"] = nullptr;
  j["_links"] = std::move(links);
  Json refs;
  refs["short"] = absl::StrCat("#", issue.number);
  refs["relative"] = absl::StrCat("#", issue.number);
  refs["full"] = absl::StrCat(full, "#", issue.number);
  j["references"] = std::move(refs);
  j["severity"] = "UNKNOWN";
  j["moved_to_id"] = nullptr;
  j["service_desk_reply_to"] = nullptr;
  return j;
}

Json GitlabNoteJson(const Repository& repo, const Comment& note, const std::string& base) {
  const Issue* issue = repo.FindIssue(note.issue_number);
  Json j;
  j["id"] = note.id;
  j["type"] = nullptr;
  j["body"] = note.body;
  j["attachment"] = nullptr;
  j["author"] = GitlabUser(note.user, base);
  j["created_at"] = GitlabTime(note.created_at);
  j["updated_at"] = GitlabTime(note.updated_at);
  j["system"] = note.system;
  j["noteable_id"] = issue != nullptr ? issue->id : 0;
  j["noteable_type"] = "Issue";
  j["project_id"] = repo.id;
  j["resolvable"] = false;
  j["confidential"] = false;
  j["internal"] = false;
  j["noteable_iid"] = note.issue_number;
  j["commands_changes"] = Json::object();
  return j;
}

Json GiteeRepoJson(const Repository& repo, const std::string& base) {
  const std::string full = repo.FullName();
  const std::string api = absl::StrCat(base, "/api/v5/repos/", full);
  Json ns;
  ns["id"] = UserId(repo.owner);
  ns["type"] = "group";
  ns["name"] = repo.owner;
  ns["path"] = repo.owner;
  ns["html_url"] = absl::StrCat(base, "/", repo.owner);
  Json j;
  j["id"] = repo.id;
  j["full_name"] = full;
  j["human_name"] = full;
  j["url"] = api;
  j["namespace"] = std::move(ns);
  j["path"] = repo.name;
  j["name"] = repo.name;
  j["owner"] = GiteeUser(repo.owner, base);
  j["description"] = absl::StrCat("Simulated issue tracker of ", full);
  j["private"] = false;
  j["public"] = true;
  j["internal"] = false;
  j["fork"] = false;
  j["html_url"] = absl::StrCat(base, "/", full, ".git");
  j["issue_comment_url"] = api + "/issues/comments{/number}";
  j["issues_url"] = api + "/issues{/number}";
  j["labels_url"] = api + "/labels{/name}";
  j["default_branch"] = "master";
  j["open_issues_count"] = repo.OpenIssuesCount();
  j["has_issues"] = true;
  j["pushed_at"] = GiteeTime(UpdatedAt(repo));
  j["created_at"] = GiteeTime(repo.created_at);
  j["updated_at"] = GiteeTime(UpdatedAt(repo));
  return j;
}

Json GiteeIssueJson(const Repository& repo, const Issue& issue, const std::string& base) {
  const std::string full = repo.FullName();
  const std::string api = absl::StrCat(base, "/api/v5/repos/", full);
  const std::string key = GiteeKey(issue.number);
  const std::string url = absl::StrCat(api, "/issues/", key);
  Json j;
  j["id"] = issue.id;
  j["url"] = url;
  j["repository_url"] = api;
  j["labels_url"] = url + "/labels";
  j["comments_url"] = url + "/comments";
  j["html_url"] = absl::StrCat(base, "/", full, "/issues/", key);
  j["parent_url"] = nullptr;
  j["number"] = key;
  j["state"] = repo.StateName(issue);
  j["title"] = issue.title;
  j["body"] = issue.body.empty() ? Json() : Json(issue.body);
  j["user"] = GiteeUser(issue.user, base);
  Json labels = Json::array();
  for (const std::string& name : issue.labels) {
    const Label* l = repo.FindLabel(name);
    Json lj;
    lj["id"] = static_cast<int64_t>(StableHash(name, static_cast<uint64_t>(repo.id)) % 90000000);
    lj["name"] = name;
    lj["color"] = l != nullptr ? l->color : "ededed";
    lj["repository_id"] = repo.id;
    lj["url"] = absl::StrCat(api, "/labels/", name);
    lj["created_at"] = GiteeTime(repo.created_at);
    lj["updated_at"] = GiteeTime(repo.created_at);
    labels.push_back(std::move(lj));
  }
  j["labels"] = std::move(labels);
  j["assignee"] = issue.assignees.empty() ? Json() : GiteeUser(issue.assignees[0], base);
  Json collaborators = Json::array();
  for (size_t k = 1; k < issue.assignees.size(); ++k) {
    collaborators.push_back(GiteeUser(issue.assignees[k], base));
  }
  j["collaborators"] = std::move(collaborators);
  j["repository"] = GiteeRepoJson(repo, base);
  j["milestone"] = nullptr;
  j["created_at"] = GiteeTime(issue.created_at);
  j["updated_at"] = GiteeTime(issue.updated_at);
  j["plan_started_at"] = nullptr;
  j["deadline"] = nullptr;
  j["finished_at"] = issue.open ? Json() : GiteeNullableTime(issue.closed_at);
  j["scheduled_time"] = 0.0;
  j["comments"] = issue.comments.size();
  j["issue_type"] = "任务";
  j["program"] = nullptr;
  j["security_hole"] = false;
  return j;
}

Json GiteeCommentJson(const Repository& repo, const Comment& c, const std::string& base) {
  const Issue* issue = repo.FindIssue(c.issue_number);
  Json target_issue;
  target_issue["id"] = issue != nullptr ? issue->id : 0;
  target_issue["number"] = GiteeKey(c.issue_number);
  target_issue["title"] = issue != nullptr ? issue->title : "";
  Json target;
  target["issue"] = std::move(target_issue);
  target["pull_request"] = nullptr;
  Json j;
  j["id"] = c.id;
  j["body"] = c.body;
  j["user"] = GiteeUser(c.user, base);
  j["source"] = nullptr;
  j["target"] = std::move(target);
  j["created_at"] = GiteeTime(c.created_at);
  j["updated_at"] = GiteeTime(c.updated_at);
  return j;
}

}  // namespace issuescope::sim

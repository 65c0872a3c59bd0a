#include "tests/simulator/github_json.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace issuescope::sim {
namespace {

std::string NodeId(absl::string_view prefix, int64_t id) {
  return absl::StrCat(prefix, absl::WebSafeBase64Escape(absl::StrCat("0:", id)));
}

int64_t UserId(const std::string& login) {
  return static_cast<int64_t>(StableHash(login) % 90000000) + 1000000;
}

std::string PercentEncode(absl::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      snprintf(buf, sizeof(buf), "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

// AuthorAssociation derives a stable association of a login with a repository.
const char* AuthorAssociation(const Repository& repo, const std::string& login) {
  switch (StableHash(login, static_cast<uint64_t>(repo.id)) % 10) {
    case 0: return "MEMBER";
    case 1: return "COLLABORATOR";
    case 2:
    case 3:
    case 4: return "CONTRIBUTOR";
    default: return "NONE";
  }
}

Json Reactions(const std::string& url, const std::array<int32_t, 8>& r) {
  Json j;
  j["url"] = url;
  int64_t total = 0;
  for (int32_t v : r) total += v;
  j["total_count"] = total;
  const char* names[] = {"+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes"};
  for (int k = 0; k < 8; ++k) j[names[k]] = r[static_cast<size_t>(k)];
  return j;
}

Json NullableTime(int64_t t) { return t == 0 ? Json(nullptr) : Json(FormatTimestamp(t)); }

}  // namespace

Json UserJson(const std::string& login, const std::string& base) {
  const int64_t id = UserId(login);
  Json j;
  j["login"] = login;
  j["id"] = id;
  j["node_id"] = NodeId("U_", id);
  j["avatar_url"] = absl::StrCat(base, "/avatars/u/", id, "?v=4");
  j["gravatar_id"] = "";
  j["url"] = absl::StrCat(base, "/users/", login);
  j["html_url"] = absl::StrCat(base, "/", login);
  j["type"] = "User";
  j["site_admin"] = false;
  return j;
}

Json RepositoryJson(const Repository& repo, const std::string& base) {
  const std::string full = repo.FullName();
  const std::string api = absl::StrCat(base, "/repos/", full);
  int64_t updated = repo.created_at;
  if (!repo.issues_by_updated.empty()) {
    updated = std::max(updated, repo.issues[repo.issues_by_updated.back()].updated_at);
  }
  Json owner;
  owner["login"] = repo.owner;
  owner["id"] = UserId(repo.owner);
  owner["node_id"] = NodeId("O_", UserId(repo.owner));
  owner["url"] = absl::StrCat(base, "/users/", repo.owner);
  owner["html_url"] = absl::StrCat(base, "/", repo.owner);
  owner["type"] = "Organization";
  owner["site_admin"] = false;
  Json j;
  j["id"] = repo.id;
  j["node_id"] = NodeId("R_", repo.id);
  j["name"] = repo.name;
  j["full_name"] = full;
  j["private"] = false;
  j["owner"] = std::move(owner);
  j["html_url"] = absl::StrCat(base, "/", full);
  j["description"] = absl::StrCat("Simulated issue tracker of ", full);
  j["fork"] = false;
  j["url"] = api;
  j["issues_url"] = api + "/issues{/number}";
  j["issue_comment_url"] = api + "/issues/comments{/number}";
  j["labels_url"] = api + "/labels{/name}";
  j["created_at"] = FormatTimestamp(repo.created_at);
  j["updated_at"] = FormatTimestamp(updated);
  j["pushed_at"] = FormatTimestamp(updated);
  j["has_issues"] = true;
  j["has_projects"] = true;
  j["has_wiki"] = true;
  j["archived"] = false;
  j["disabled"] = false;
  j["open_issues_count"] = repo.OpenIssuesCount();
  j["visibility"] = "public";
  j["default_branch"] = "main";
  j["open_issues"] = repo.OpenIssuesCount();
  return j;
}

Json IssueJson(const Repository& repo, const Issue& issue, const std::string& base) {
  const std::string full = repo.FullName();
  const std::string api = absl::StrCat(base, "/repos/", full);
  const std::string url = absl::StrCat(api, "/issues/", issue.number);
  const std::string html =
      absl::StrCat(base, "/", full, issue.is_pull_request ? "/pull/" : "/issues/", issue.number);
  Json j;
  j["url"] = url;
  j["repository_url"] = api;
  j["labels_url"] = url + "/labels{/name}";
  j["comments_url"] = url + "/comments";
  j["events_url"] = url + "/events";
  j["html_url"] = html;
  j["id"] = issue.id;
  j["node_id"] = NodeId(issue.is_pull_request ? "PR_" : "I_", issue.id);
  j["number"] = issue.number;
  j["title"] = issue.title;
  j["user"] = UserJson(issue.user, base);
  Json labels = Json::array();
  for (const std::string& name : issue.labels) {
    const Label* l = repo.FindLabel(name);
    const int64_t id = static_cast<int64_t>(StableHash(name, static_cast<uint64_t>(repo.id)) %
                                            9000000000LL) + 1000000000LL;
    Json lj;
    lj["id"] = id;
    lj["node_id"] = NodeId("LA_", id);
    lj["url"] = absl::StrCat(api, "/labels/", PercentEncode(name));
    lj["name"] = name;
    lj["color"] = l != nullptr ? l->color : "ededed";
    lj["default"] = l != nullptr && l->is_default;
    lj["description"] = l != nullptr && !l->description.empty() ? Json(l->description) : Json();
    labels.push_back(std::move(lj));
  }
  j["labels"] = std::move(labels);
  j["state"] = issue.open ? "open" : "closed";
  j["locked"] = issue.locked;
  j["assignee"] = issue.assignees.empty() ? Json() : UserJson(issue.assignees[0], base);
  Json assignees = Json::array();
  for (const std::string& a : issue.assignees) assignees.push_back(UserJson(a, base));
  j["assignees"] = std::move(assignees);
  j["milestone"] = nullptr;
  j["comments"] = issue.comments.size();
  j["created_at"] = FormatTimestamp(issue.created_at);
  j["updated_at"] = FormatTimestamp(issue.updated_at);
  j["closed_at"] = NullableTime(issue.closed_at);
  j["author_association"] = AuthorAssociation(repo, issue.user);
  j["active_lock_reason"] = issue.locked ? Json("resolved") : Json();
  if (issue.is_pull_request) {
    j["draft"] = false;
    Json pr;
    pr["url"] = absl::StrCat(api, "/pulls/", issue.number);
    pr["html_url"] = html;
    pr["diff_url"] = html + ".diff";
    pr["patch_url"] = html + ".patch";
    pr["merged_at"] = issue.open ? Json() : NullableTime(issue.closed_at);
    j["pull_request"] = std::move(pr);
  }
  j["body"] = issue.body.empty() ? Json() : Json(issue.body);
  j["reactions"] = Reactions(url + "/reactions", issue.reactions);
  j["timeline_url"] = url + "/timeline";
  j["performed_via_github_app"] = nullptr;
  j["state_reason"] = issue.state_reason.empty() ? Json() : Json(issue.state_reason);
  return j;
}

Json CommentJson(const Repository& repo, const Comment& c, const std::string& base) {
  const std::string full = repo.FullName();
  const std::string api = absl::StrCat(base, "/repos/", full);
  const Issue* issue = repo.FindIssue(c.issue_number);
  const bool pr = issue != nullptr && issue->is_pull_request;
  Json j;
  j["url"] = absl::StrCat(api, "/issues/comments/", c.id);
  j["html_url"] = absl::StrCat(base, "/", full, pr ? "/pull/" : "/issues/", c.issue_number,
                               "#issuecomment-", c.id);
  j["issue_url"] = absl::StrCat(api, "/issues/", c.issue_number);
  j["id"] = c.id;
  j["node_id"] = NodeId("IC_", c.id);
  j["user"] = UserJson(c.user, base);
  j["created_at"] = FormatTimestamp(c.created_at);
  j["updated_at"] = FormatTimestamp(c.updated_at);
  j["author_association"] = AuthorAssociation(repo, c.user);
  j["body"] = c.body;
  j["reactions"] = Reactions(absl::StrCat(api, "/issues/comments/", c.id, "/reactions"), {});
  j["performed_via_github_app"] = nullptr;
  return j;
}

Json ErrorJson(const std::string& message, const std::string& doc_url) {
  Json j;
  j["message"] = message;
  j["documentation_url"] = doc_url;
  return j;
}

std::string Dump(const Json& value) {
  return value.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace issuescope::sim

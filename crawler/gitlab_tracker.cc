#include "gitlab_tracker.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "json_fields.h"

namespace issuescope::crawler {
namespace {

using namespace json_fields;  // NOLINT: the field readers

absl::Status ParseIssueInto(const json& obj, v1::Issue* issue) {
  if (!obj.is_object()) return absl::InvalidArgumentError("issue is not a JSON object");
  ASSIGN_OR_RETURN(int64_t iid, RequiredInt(obj, "iid"));
  if (iid <= 0) return FieldError("iid", absl::StrCat("is not positive: ", iid));
  issue->set_number(iid);
  issue->set_key(absl::StrCat(iid));
  ASSIGN_OR_RETURN(int64_t id, RequiredInt(obj, "id"));
  issue->set_id(id);
  // A null (or missing) updated_at, created_at, title or state makes the item bad.
  RETURN_IF_ERROR(SetTime(obj, "updated_at", true, issue->mutable_updated_at()));
  RETURN_IF_ERROR(SetTime(obj, "created_at", true, issue->mutable_created_at()));
  if (Member(obj, "closed_at") != nullptr) {  // null while open
    RETURN_IF_ERROR(SetTime(obj, "closed_at", false, issue->mutable_closed_at()));
  }
  ASSIGN_OR_RETURN(*issue->mutable_title(), RequiredString(obj, "title"));
  ASSIGN_OR_RETURN(*issue->mutable_body(), OptionalString(obj, "description"));
  ASSIGN_OR_RETURN(std::string state, RequiredString(obj, "state"));
  state = absl::AsciiStrToLower(state);
  if (state == "opened" || state == "open" || state == "locked") {
    issue->set_state(v1::ISSUE_STATE_OPEN);
  } else if (state == "closed") {
    issue->set_state(v1::ISSUE_STATE_CLOSED);
  } else {
    return FieldError("state", absl::StrCat("has unknown value '", state.substr(0, 40), "'"));
  }
  if (issue->state() != v1::ISSUE_STATE_CLOSED) issue->clear_closed_at();
  if (const json* labels = Member(obj, "labels")) {
    if (!labels->is_array()) return FieldError("labels", "is not an array");
    for (size_t i = 0; i < labels->size(); ++i) {
      const json& l = (*labels)[i];
      const json* name = l.is_object() ? Member(l, "name") : nullptr;
      if (l.is_string()) {
        issue->add_labels(l.get<std::string>());
      } else if (name != nullptr && name->is_string()) {
        issue->add_labels(name->get<std::string>());
      } else {
        return FieldError(absl::StrCat("labels[", i, "]"), "has no name");
      }
    }
  }
  ASSIGN_OR_RETURN(*issue->mutable_author(), UserName(obj, "author", "username"));
  if (const json* assignees = Member(obj, "assignees")) {
    if (!assignees->is_array()) return FieldError("assignees", "is not an array");
    for (size_t i = 0; i < assignees->size(); ++i) {
      const json* name = Member((*assignees)[i], "username");
      if (name == nullptr || !name->is_string()) {
        return FieldError(absl::StrCat("assignees[", i, "]"), "has no username");
      }
      issue->add_assignees(name->get<std::string>());
    }
  } else {
    ASSIGN_OR_RETURN(std::string assignee, UserName(obj, "assignee", "username"));
    if (!assignee.empty()) issue->add_assignees(assignee);
  }
  ASSIGN_OR_RETURN(int64_t notes, OptionalInt(obj, "user_notes_count"));
  issue->set_comment_count(static_cast<int32_t>(notes));
  ASSIGN_OR_RETURN(int64_t up, OptionalInt(obj, "upvotes"));
  ASSIGN_OR_RETURN(int64_t down, OptionalInt(obj, "downvotes"));
  issue->set_reactions(static_cast<int32_t>(up + down));
  ASSIGN_OR_RETURN(*issue->mutable_url(), OptionalString(obj, "web_url"));
  return absl::OkStatus();
}

absl::Status ParseNoteInto(const json& obj, const v1::Issue& issue, v1::Comment* note) {
  if (!obj.is_object()) return absl::InvalidArgumentError("note is not a JSON object");
  ASSIGN_OR_RETURN(int64_t id, RequiredInt(obj, "id"));
  if (id <= 0) return FieldError("id", absl::StrCat("is not positive: ", id));
  note->set_id(id);
  note->set_issue_number(issue.number());
  RETURN_IF_ERROR(SetTime(obj, "updated_at", true, note->mutable_updated_at()));
  if (Member(obj, "created_at") != nullptr) {
    RETURN_IF_ERROR(SetTime(obj, "created_at", false, note->mutable_created_at()));
  }
  ASSIGN_OR_RETURN(*note->mutable_body(), OptionalString(obj, "body"));
  ASSIGN_OR_RETURN(*note->mutable_author(), UserName(obj, "author", "username"));
  ASSIGN_OR_RETURN(bool system, OptionalBool(obj, "system"));
  note->set_system(system);
  if (!issue.url().empty()) note->set_url(absl::StrCat(issue.url(), "#note_", id));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<v1::Issue>> ParseGitlabIssuesPage(absl::string_view body,
                                                             const v1::RepositoryRef& repo,
                                                             std::vector<BadItem>* bad) {
  return ParseArrayPage<v1::Issue>(body, "iid", bad, [&](const json& item, std::vector<v1::Issue>* out) {
    v1::Issue issue;
    *issue.mutable_repo() = repo;
    RETURN_IF_ERROR(ParseIssueInto(item, &issue));
    out->push_back(std::move(issue));
    return absl::OkStatus();
  });
}

absl::StatusOr<std::vector<v1::Comment>> ParseGitlabNotesPage(absl::string_view body,
                                                              const v1::RepositoryRef& repo,
                                                              const v1::Issue& issue,
                                                              std::vector<BadItem>* bad) {
  return ParseArrayPage<v1::Comment>(body, "id", bad, [&](const json& item, std::vector<v1::Comment>* out) {
    v1::Comment note;
    *note.mutable_repo() = repo;
    RETURN_IF_ERROR(ParseNoteInto(item, issue, &note));
    out->push_back(std::move(note));
    return absl::OkStatus();
  });
}

absl::StatusOr<RepositoryInfo> ParseGitlabProject(absl::string_view body) {
  ASSIGN_OR_RETURN(json obj, ParseJson(body));
  if (!obj.is_object()) return absl::InvalidArgumentError("project is not a JSON object");
  RepositoryInfo info;
  try {
    ASSIGN_OR_RETURN(info.full_name, OptionalString(obj, "path_with_namespace"));
    if (Member(obj, "open_issues_count") != nullptr) {
      ASSIGN_OR_RETURN(info.open_issues_count, OptionalInt(obj, "open_issues_count"));
    }
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("malformed project: ", e.what()));
  }
  return info;
}

RateLimit ParseGitlabRateLimit(const HttpHeaders& headers) {
  if (!headers.Has("RateLimit-Remaining")) return crawler::ParseRateLimit(headers);
  RateLimit rl;
  rl.limit = HeaderInt(headers, "RateLimit-Limit");
  rl.remaining = HeaderInt(headers, "RateLimit-Remaining");
  rl.used = HeaderInt(headers, "RateLimit-Observed");
  const int64_t reset = HeaderInt(headers, "RateLimit-Reset");
  if (reset >= 0) rl.reset = absl::FromUnixSeconds(reset);
  return rl;
}

namespace {
std::string ProjectUrl(const TrackerRepo& repo) {
  return absl::StrCat(repo.base, "/projects/", PercentEncode(absl::StrCat(repo.owner, "/", repo.name)));
}
}  // namespace

void GitlabTracker::Authorize(absl::string_view token, HttpRequest* request) const {
  request->headers.Add("Accept", "application/json");
  if (!token.empty()) request->headers.Add("PRIVATE-TOKEN", std::string(token));
}

std::string GitlabTracker::RepositoryUrl(const TrackerRepo& repo) const { return ProjectUrl(repo); }

absl::StatusOr<RepositoryInfo> GitlabTracker::ParseRepository(absl::string_view body) const {
  return ParseGitlabProject(body);
}

std::string GitlabTracker::IssuesUrl(const TrackerRepo& repo,
                                     const std::optional<absl::Time>& since, int per_page) const {
  std::string url = absl::StrCat(ProjectUrl(repo),
                                 "/issues?scope=all&state=all&order_by=updated_at&sort=asc",
                                 "&per_page=", per_page);
  if (since) absl::StrAppend(&url, "&updated_after=", UrlEncodeTime(*since));
  return url;
}

absl::StatusOr<std::vector<v1::Issue>> GitlabTracker::ParseIssues(
    absl::string_view body, const v1::RepositoryRef& repo, std::vector<BadItem>* bad) const {
  return ParseGitlabIssuesPage(body, repo, bad);
}

std::string GitlabTracker::CommentsUrl(const TrackerRepo&, const std::optional<absl::Time>&,
                                       int) const {
  return "";
}

std::string GitlabTracker::IssueCommentsUrl(const TrackerRepo& repo, const v1::Issue& issue,
                                            int per_page) const {
  return absl::StrCat(ProjectUrl(repo), "/issues/", issue.number(),
                      "/notes?sort=asc&order_by=created_at&per_page=", per_page);
}

absl::StatusOr<std::vector<v1::Comment>> GitlabTracker::ParseComments(
    absl::string_view body, const v1::RepositoryRef& repo, const v1::Issue* issue,
    const TrackerRepo& /*where*/, std::vector<BadItem>* bad) const {
  if (issue == nullptr) {
    return absl::InvalidArgumentError("GitLab notes are listed per issue; no issue given");
  }
  return ParseGitlabNotesPage(body, repo, *issue, bad);
}

std::optional<std::string> GitlabTracker::NextPageUrl(absl::string_view url,
                                                      const HttpResponse& response) const {
  if (auto next = NextFromLink(response)) return next;
  const int64_t next_page = HeaderInt(response.headers, "X-Next-Page");
  if (next_page <= 0) return std::nullopt;
  return SetQueryParam(url, "page", absl::StrCat(next_page));
}

int64_t GitlabTracker::EstimatedTotal(const HttpResponse& first_page, int per_page) const {
  const int64_t total = HeaderInt(first_page.headers, "X-Total");
  if (total >= 0) return total;
  const int64_t pages = HeaderInt(first_page.headers, "X-Total-Pages");
  return ItemsInPages(pages, per_page);
}

RateLimit GitlabTracker::ParseRateLimit(const HttpHeaders& headers) const {
  return ParseGitlabRateLimit(headers);
}

}  // namespace issuescope::crawler

#include "gitee_tracker.h"

#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "json_fields.h"

namespace issuescope::crawler {
namespace {

using namespace json_fields;  // NOLINT: the field readers

// Key reads an issue key member: a string "I..." (decoded) or, leniently, a positive integer.
absl::Status SetKey(const json& obj, const char* name, int64_t* number, std::string* key) {
  const json* v = Member(obj, name);
  if (v == nullptr) return FieldError(name, "is missing");
  if (v->is_number_integer() && v->get<int64_t>() > 0) {
    *number = v->get<int64_t>();
    *key = absl::StrCat(*number);
    return absl::OkStatus();
  }
  if (!v->is_string()) return FieldError(name, absl::StrCat("is a ", v->type_name()));
  *key = v->get<std::string>();
  auto decoded = GiteeIssueNumber(*key);
  if (!decoded.ok()) return FieldError(name, decoded.status().message());
  *number = *decoded;
  return absl::OkStatus();
}

absl::Status ParseIssueInto(const json& obj, v1::Issue* issue) {
  if (!obj.is_object()) return absl::InvalidArgumentError("issue is not a JSON object");
  int64_t number = 0;
  RETURN_IF_ERROR(SetKey(obj, "number", &number, issue->mutable_key()));
  issue->set_number(number);
  ASSIGN_OR_RETURN(int64_t id, RequiredInt(obj, "id"));
  issue->set_id(id);
  // A null (or missing) updated_at, created_at, title or state makes the item bad.
  ASSIGN_OR_RETURN(const std::string state, ReadIssueBasics(obj, issue));
  if (state == "open") {
    issue->set_state(v1::ISSUE_STATE_OPEN);
  } else if (state == "progressing") {
    issue->set_state(v1::ISSUE_STATE_PROGRESSING);
  } else if (state == "closed") {
    issue->set_state(v1::ISSUE_STATE_CLOSED);
  } else if (state == "rejected") {
    issue->set_state(v1::ISSUE_STATE_REJECTED);
    issue->set_state_reason("rejected");
  } else {
    return FieldError("state", absl::StrCat("has unknown value '", state.substr(0, 40), "'"));
  }
  if ((issue->state() == v1::ISSUE_STATE_CLOSED || issue->state() == v1::ISSUE_STATE_REJECTED) &&
      Member(obj, "finished_at") != nullptr) {
    RETURN_IF_ERROR(SetTime(obj, "finished_at", false, issue->mutable_closed_at()));
  }
  if (const json* labels = Member(obj, "labels")) {
    if (!labels->is_array()) return FieldError("labels", "is not an array");
    for (size_t i = 0; i < labels->size(); ++i) {
      const json* name = Member((*labels)[i], "name");
      if (name == nullptr || !name->is_string()) {
        return FieldError(absl::StrCat("labels[", i, "]"), "has no name");
      }
      issue->add_labels(name->get<std::string>());
    }
  }
  ASSIGN_OR_RETURN(*issue->mutable_author(), UserName(obj, "user", "login"));
  ASSIGN_OR_RETURN(std::string assignee, UserName(obj, "assignee", "login"));
  if (!assignee.empty()) issue->add_assignees(assignee);
  if (const json* collaborators = Member(obj, "collaborators")) {
    if (!collaborators->is_array()) return FieldError("collaborators", "is not an array");
    for (size_t i = 0; i < collaborators->size(); ++i) {
      const json* login = Member((*collaborators)[i], "login");
      if (login == nullptr || !login->is_string()) {
        return FieldError(absl::StrCat("collaborators[", i, "]"), "has no login");
      }
      if (login->get<std::string>() != assignee) issue->add_assignees(login->get<std::string>());
    }
  }
  ASSIGN_OR_RETURN(int64_t comments, OptionalInt(obj, "comments"));
  issue->set_comment_count(static_cast<int32_t>(comments));
  ASSIGN_OR_RETURN(*issue->mutable_url(), OptionalString(obj, "html_url"));
  return absl::OkStatus();
}

// ParseCommentInto parses one comment; *keep is false for a pull-request comment.
absl::Status ParseCommentInto(const json& obj, const v1::Issue* issue, v1::Comment* comment,
                              bool* keep) {
  if (!obj.is_object()) return absl::InvalidArgumentError("comment is not a JSON object");
  ASSIGN_OR_RETURN(int64_t id, RequiredInt(obj, "id"));
  if (id <= 0) return FieldError("id", absl::StrCat("is not positive: ", id));
  comment->set_id(id);
  RETURN_IF_ERROR(SetTime(obj, "updated_at", true, comment->mutable_updated_at()));
  if (Member(obj, "created_at") != nullptr) {
    RETURN_IF_ERROR(SetTime(obj, "created_at", false, comment->mutable_created_at()));
  }
  ASSIGN_OR_RETURN(*comment->mutable_body(), OptionalString(obj, "body"));
  ASSIGN_OR_RETURN(*comment->mutable_author(), UserName(obj, "user", "login"));
  ASSIGN_OR_RETURN(*comment->mutable_url(), OptionalString(obj, "html_url"));
  const json* target = Member(obj, "target");
  if (target != nullptr && !target->is_object()) return FieldError("target", "is not an object");
  const json* target_issue = target ? Member(*target, "issue") : nullptr;
  if (target_issue == nullptr) {
    if (issue != nullptr) {
      comment->set_issue_number(issue->number());
    } else if (target != nullptr && Member(*target, "pull_request") != nullptr) {
      *keep = false;  // a pull-request comment
      return absl::OkStatus();
    } else {
      return FieldError("target.issue", "is missing");
    }
  } else {
    if (!target_issue->is_object()) return FieldError("target.issue", "is not an object");
    int64_t number = 0;
    std::string key;
    absl::Status s = SetKey(*target_issue, "number", &number, &key);
    if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat("target.issue: ", s.message()));
    comment->set_issue_number(number);
  }
  if (comment->url().empty() && issue != nullptr && !issue->url().empty()) {
    comment->set_url(absl::StrCat(issue->url(), "#note_", id));
  }
  *keep = true;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int64_t> GiteeIssueNumber(absl::string_view key) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("Gitee issue key '", key.substr(0, 40),
                                                   "' ", why));
  };
  if (key.size() < 2 || key[0] != 'I') return bad("is not \"I\" followed by [0-9A-Z]+");
  int64_t value = 0;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  for (char c : key.substr(1)) {
    int digit = 0;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'A' && c <= 'Z') {
      digit = c - 'A' + 10;
    } else {
      return bad("is not \"I\" followed by [0-9A-Z]+");
    }
    if (value > (kMax - digit) / 36) return bad("is too large");
    value = value * 36 + digit;
  }
  if (value <= 0) return bad("decodes to 0");
  return value;
}

absl::StatusOr<std::vector<v1::Issue>> ParseGiteeIssuesPage(absl::string_view body,
                                                            const v1::RepositoryRef& repo,
                                                            std::vector<BadItem>* bad) {
  return ParseArrayPage<v1::Issue>(body, "number", bad, [&](const json& item, std::vector<v1::Issue>* out) {
    v1::Issue issue;
    *issue.mutable_repo() = repo;
    RETURN_IF_ERROR(ParseIssueInto(item, &issue));
    out->push_back(std::move(issue));
    return absl::OkStatus();
  });
}

absl::StatusOr<std::vector<v1::Comment>> ParseGiteeCommentsPage(absl::string_view body,
                                                                const v1::RepositoryRef& repo,
                                                                const v1::Issue* issue,
                                                                std::vector<BadItem>* bad) {
  return ParseArrayPage<v1::Comment>(body, "id", bad, [&](const json& item, std::vector<v1::Comment>* out) {
    v1::Comment comment;
    *comment.mutable_repo() = repo;
    bool keep = true;
    RETURN_IF_ERROR(ParseCommentInto(item, issue, &comment, &keep));
    if (keep) out->push_back(std::move(comment));
    return absl::OkStatus();
  });
}

void GiteeTracker::Authorize(absl::string_view token, HttpRequest* request) const {
  request->headers.Add("Accept", "application/json");
  if (!token.empty()) request->url = SetQueryParam(request->url, "access_token", PercentEncode(token));
}

absl::StatusOr<std::vector<v1::Issue>> GiteeTracker::ParseIssues(
    absl::string_view body, const v1::RepositoryRef& repo, std::vector<BadItem>* bad) const {
  return ParseGiteeIssuesPage(body, repo, bad);
}

absl::StatusOr<std::vector<v1::Comment>> GiteeTracker::ParseComments(
    absl::string_view body, const v1::RepositoryRef& repo, const v1::Issue* issue,
    const TrackerRepo& /*where*/, std::vector<BadItem>* bad) const {
  return ParseGiteeCommentsPage(body, repo, issue, bad);
}

std::optional<std::string> GiteeTracker::NextPageUrl(absl::string_view url,
                                                     const HttpResponse& response) const {
  if (auto next = GithubStyleTracker::NextPageUrl(url, response)) return next;
  const int64_t total_pages = HeaderInt(response.headers, "total_page");
  if (total_pages <= 0) return std::nullopt;
  int64_t page = 1;
  const std::string current = QueryParam(url, "page");
  if (!current.empty() && !absl::SimpleAtoi(current, &page)) return std::nullopt;
  if (page >= total_pages) return std::nullopt;
  return SetQueryParam(url, "page", absl::StrCat(page + 1));
}

int64_t GiteeTracker::EstimatedTotal(const HttpResponse& first_page, int per_page) const {
  const int64_t total = HeaderInt(first_page.headers, "total_count");
  if (total >= 0) return total;
  const int64_t pages = HeaderInt(first_page.headers, "total_page");
  return ItemsInPages(pages, per_page);
}

}  // namespace issuescope::crawler

#include "crawler/github_parse.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "json_fields.h"
#include "nlohmann/json.hpp"

namespace issuescope::crawler {
namespace {

using namespace json_fields;  // NOLINT: the field readers shared by the forge parsers

// Login returns obj[name].login ("" when absent).
absl::StatusOr<std::string> Login(const json& obj, const char* name) {
  return UserName(obj, name, "login");
}

absl::Status ParseIssueInto(const json& obj, v1::Issue* issue) {
  if (!obj.is_object()) return absl::InvalidArgumentError("issue is not a JSON object");
  ASSIGN_OR_RETURN(int64_t number, RequiredInt(obj, "number"));
  if (number <= 0) return FieldError("number", absl::StrCat("is not positive: ", number));
  issue->set_number(number);
  issue->set_key(absl::StrCat(number));
  ASSIGN_OR_RETURN(int64_t id, RequiredInt(obj, "id"));
  issue->set_id(id);
  // updated_at, created_at, title and state are never null on GitHub.
  ASSIGN_OR_RETURN(const std::string state, ReadIssueBasics(obj, issue));
  if (Member(obj, "closed_at") != nullptr) {  // closed_at stays unset while open
    RETURN_IF_ERROR(SetTime(obj, "closed_at", false, issue->mutable_closed_at()));
  }
  if (state == "open") {
    issue->set_state(v1::ISSUE_STATE_OPEN);
  } else if (state == "closed") {
    issue->set_state(v1::ISSUE_STATE_CLOSED);
  } else {
    return FieldError("state", absl::StrCat("has unknown value '", state.substr(0, 40), "'"));
  }
  ASSIGN_OR_RETURN(*issue->mutable_state_reason(), OptionalString(obj, "state_reason"));
  if (const json* labels = Member(obj, "labels")) {
    if (!labels->is_array()) return FieldError("labels", "is not an array");
    for (size_t i = 0; i < labels->size(); ++i) {
      const json& l = (*labels)[i];
      if (l.is_string()) {
        issue->add_labels(l.get<std::string>());
      } else if (l.is_object() && Member(l, "name") && l["name"].is_string()) {
        issue->add_labels(l["name"].get<std::string>());
      } else {
        return FieldError(absl::StrCat("labels[", i, "]"), "has no name");
      }
    }
  }
  ASSIGN_OR_RETURN(*issue->mutable_author(), Login(obj, "user"));
  if (const json* assignees = Member(obj, "assignees")) {
    if (!assignees->is_array()) return FieldError("assignees", "is not an array");
    for (size_t i = 0; i < assignees->size(); ++i) {
      const json& a = (*assignees)[i];
      const json* login = a.is_object() ? Member(a, "login") : nullptr;
      if (login == nullptr || !login->is_string()) {
        return FieldError(absl::StrCat("assignees[", i, "]"), "has no login");
      }
      issue->add_assignees(login->get<std::string>());
    }
  } else {
    ASSIGN_OR_RETURN(std::string assignee, Login(obj, "assignee"));
    if (!assignee.empty()) issue->add_assignees(assignee);
  }
  ASSIGN_OR_RETURN(int64_t comments, OptionalInt(obj, "comments"));
  issue->set_comment_count(static_cast<int32_t>(comments));
  issue->set_is_pull_request(Member(obj, "pull_request") != nullptr);
  ASSIGN_OR_RETURN(*issue->mutable_url(), OptionalString(obj, "html_url"));
  if (const json* reactions = Member(obj, "reactions")) {
    if (!reactions->is_object()) return FieldError("reactions", "is not an object");
    auto total = OptionalInt(*reactions, "total_count");
    if (!total.ok()) return FieldError("reactions.total_count", "is not an integer");
    issue->set_reactions(static_cast<int32_t>(*total));
  }
  return absl::OkStatus();
}

// IssueNumberFromUrl reads the issue number of a comment's issue_url. With `issues_prefix`
// (the listed repository's ".../repos/OWNER/NAME/issues/"), the URL must be that prefix (host,
// owner and name compared without case) followed by the number: a comment of another host or
// repository is refused, not filed under its trailing number.
absl::StatusOr<int64_t> IssueNumberFromUrl(const std::string& issue_url,
                                           absl::string_view issues_prefix) {
  absl::string_view tail = issue_url;
  while (absl::ConsumeSuffix(&tail, "/")) {
  }
  if (!issues_prefix.empty()) {
    if (tail.size() <= issues_prefix.size() ||
        !absl::EqualsIgnoreCase(tail.substr(0, issues_prefix.size()), issues_prefix) ||
        tail.substr(issues_prefix.size()).find('/') != absl::string_view::npos) {
      return FieldError("issue_url", absl::StrCat("names another host or repository: '",
                                                  issue_url.substr(0, 200), "' (expected ",
                                                  issues_prefix, "<number>)"));
    }
  }
  tail = tail.substr(tail.rfind('/') + 1);
  int64_t number = 0;
  if (!absl::SimpleAtoi(tail, &number) || number <= 0) {
    return FieldError("issue_url", absl::StrCat("does not end in an issue number: '",
                                                issue_url.substr(0, 200), "'"));
  }
  return number;
}

absl::Status ParseCommentInto(const json& obj, absl::string_view issues_prefix,
                              v1::Comment* comment) {
  if (!obj.is_object()) return absl::InvalidArgumentError("comment is not a JSON object");
  ASSIGN_OR_RETURN(int64_t id, RequiredInt(obj, "id"));
  comment->set_id(id);
  RETURN_IF_ERROR(SetTime(obj, "updated_at", true, comment->mutable_updated_at()));
  RETURN_IF_ERROR(SetTime(obj, "created_at", false, comment->mutable_created_at()));
  ASSIGN_OR_RETURN(std::string issue_url, OptionalString(obj, "issue_url"));
  if (issue_url.empty()) return FieldError("issue_url", "is missing");
  ASSIGN_OR_RETURN(int64_t number, IssueNumberFromUrl(issue_url, issues_prefix));
  comment->set_issue_number(number);
  ASSIGN_OR_RETURN(*comment->mutable_author(), Login(obj, "user"));
  ASSIGN_OR_RETURN(*comment->mutable_body(), OptionalString(obj, "body"));
  ASSIGN_OR_RETURN(*comment->mutable_url(), OptionalString(obj, "html_url"));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::Issue> ParseIssue(const json& object, const v1::RepositoryRef& repo) {
  v1::Issue issue;
  *issue.mutable_repo() = repo;
  try {
    RETURN_IF_ERROR(ParseIssueInto(object, &issue));
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("malformed issue: ", e.what()));
  }
  return issue;
}

absl::StatusOr<std::vector<v1::Issue>> ParseIssuesPage(absl::string_view body,
                                                       const v1::RepositoryRef& repo,
                                                       std::vector<BadItem>* bad) {
  return ParseArrayPage<v1::Issue>(body, "number", bad,
                                   [&](const json& item, std::vector<v1::Issue>* out) {
                                     ASSIGN_OR_RETURN(v1::Issue issue, ParseIssue(item, repo));
                                     out->push_back(std::move(issue));
                                     return absl::OkStatus();
                                   });
}

absl::StatusOr<v1::Comment> ParseComment(const json& object, const v1::RepositoryRef& repo,
                                         absl::string_view issues_prefix) {
  v1::Comment comment;
  *comment.mutable_repo() = repo;
  try {
    RETURN_IF_ERROR(ParseCommentInto(object, issues_prefix, &comment));
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("malformed comment: ", e.what()));
  }
  return comment;
}

absl::StatusOr<std::vector<v1::Comment>> ParseCommentsPage(absl::string_view body,
                                                           const v1::RepositoryRef& repo,
                                                           absl::string_view issues_prefix,
                                                           std::vector<BadItem>* bad) {
  return ParseArrayPage<v1::Comment>(
      body, "id", bad, [&](const json& item, std::vector<v1::Comment>* out) {
        ASSIGN_OR_RETURN(v1::Comment comment, ParseComment(item, repo, issues_prefix));
        out->push_back(std::move(comment));
        return absl::OkStatus();
      });
}

bool IsPullRequestComment(const v1::Comment& comment) {
  return absl::StrContains(comment.url(), "/pull/");
}

absl::StatusOr<RepositoryInfo> ParseRepository(absl::string_view body) {
  ASSIGN_OR_RETURN(json obj, ParseJson(body));
  if (!obj.is_object()) return absl::InvalidArgumentError("repository is not a JSON object");
  RepositoryInfo info;
  try {
    ASSIGN_OR_RETURN(info.full_name, OptionalString(obj, "full_name"));
    if (Member(obj, "open_issues_count") != nullptr) {
      ASSIGN_OR_RETURN(info.open_issues_count, OptionalInt(obj, "open_issues_count"));
    }
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("malformed repository: ", e.what()));
  }
  return info;
}

std::map<std::string, std::string> ParseLinkHeader(absl::string_view header) {
  std::map<std::string, std::string> out;
  size_t pos = 0;
  while (pos < header.size()) {
    const size_t open = header.find('<', pos);
    if (open == absl::string_view::npos) break;
    const size_t close = header.find('>', open);
    if (close == absl::string_view::npos) break;
    const std::string url(absl::StripAsciiWhitespace(header.substr(open + 1, close - open - 1)));
    // Parameters run to the next link, which starts after a comma followed by '<'.
    size_t end = close + 1;
    while (end < header.size()) {
      const size_t comma = header.find(',', end);
      if (comma == absl::string_view::npos) {
        end = header.size();
        break;
      }
      absl::string_view rest = absl::StripLeadingAsciiWhitespace(header.substr(comma + 1));
      if (rest.empty() || rest[0] == '<') {
        end = comma;
        break;
      }
      end = comma + 1;
    }
    for (absl::string_view param : absl::StrSplit(header.substr(close + 1, end - close - 1), ';')) {
      param = absl::StripAsciiWhitespace(param);
      const size_t eq = param.find('=');
      if (eq == absl::string_view::npos) continue;
      if (!absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(param.substr(0, eq)), "rel")) {
        continue;
      }
      absl::string_view value = absl::StripAsciiWhitespace(param.substr(eq + 1));
      absl::ConsumePrefix(&value, "\"");
      absl::ConsumeSuffix(&value, "\"");
      for (absl::string_view rel : absl::StrSplit(value, ' ', absl::SkipEmpty())) {
        if (!url.empty()) out.emplace(absl::AsciiStrToLower(rel), url);
      }
    }
    pos = end + 1;
  }
  return out;
}

RateLimit ParseRateLimit(const HttpHeaders& headers) {
  RateLimit rl;
  auto read_int = [&](absl::string_view name, int64_t* out) {
    int64_t v = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(headers.Get(name)), &v)) *out = v;
  };
  read_int("X-RateLimit-Limit", &rl.limit);
  read_int("X-RateLimit-Remaining", &rl.remaining);
  read_int("X-RateLimit-Used", &rl.used);
  int64_t reset = -1;
  read_int("X-RateLimit-Reset", &reset);
  if (reset >= 0) rl.reset = absl::FromUnixSeconds(reset);
  rl.resource = headers.Get("X-RateLimit-Resource");
  return rl;
}

std::optional<absl::Time> ParseHttpDate(absl::string_view text) {
  absl::Time t;
  std::string err;
  const std::string s(absl::StripAsciiWhitespace(text));
  if (s.empty()) return std::nullopt;
  if (absl::ParseTime("%a, %d %b %Y %H:%M:%S GMT", s, absl::UTCTimeZone(), &t, &err)) return t;
  return std::nullopt;
}

std::optional<absl::Duration> ParseRetryAfter(const HttpHeaders& headers, absl::Time now) {
  const std::string value(absl::StripAsciiWhitespace(headers.Get("Retry-After")));
  if (value.empty()) return std::nullopt;
  int64_t seconds = 0;
  if (absl::SimpleAtoi(value, &seconds)) return absl::Seconds(std::max<int64_t>(seconds, 0));
  if (auto t = ParseHttpDate(value)) return std::max(*t - now, absl::ZeroDuration());
  return std::nullopt;
}

}  // namespace issuescope::crawler

#include "github_graphql.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "json_fields.h"
#include "nlohmann/json.hpp"

namespace issuescope::crawler {
namespace {

using namespace json_fields;  // NOLINT: the field readers shared by the forge parsers

// The selection of one comment, and of one issue (without its comments' page arguments).
constexpr char kCommentFields[] = "databaseId body url createdAt updatedAt author { login }";

constexpr char kRateFields[] = "rateLimit { cost remaining resetAt }";

absl::Status ReadRate(const json& data, GraphqlRate* rate) {
  const json* r = Member(data, "rateLimit");
  if (r == nullptr) return absl::OkStatus();
  ASSIGN_OR_RETURN(rate->cost, OptionalInt(*r, "cost"));
  ASSIGN_OR_RETURN(rate->remaining, OptionalInt(*r, "remaining"));
  if (const json* reset = Member(*r, "resetAt"); reset != nullptr && reset->is_string()) {
    if (auto t = ParseRfc3339(reset->get<std::string>()); t.ok()) rate->reset = *t;
  }
  return absl::OkStatus();
}

// Errors maps a GraphQL answer's `errors` (when it has no usable data) to a status.
absl::Status Errors(const json& doc, bool has_data) {
  const json* errors = Member(doc, "errors");
  if (errors == nullptr || !errors->is_array() || errors->empty()) return absl::OkStatus();
  for (const json& e : *errors) {
    const std::string type = e.is_object() ? e.value("type", "") : "";
    const std::string message =
        e.is_object() && e.contains("message") && e["message"].is_string()
            ? e["message"].get<std::string>().substr(0, 300)
            : "(no message)";
    if (type == "RATE_LIMITED") {
      return absl::ResourceExhaustedError(absl::StrCat("GraphQL budget spent: ", message));
    }
    if (type == "MAX_NODE_LIMIT_EXCEEDED") return absl::OutOfRangeError(message);
    if (type == "NOT_FOUND" && !has_data) return absl::NotFoundError(message);
    if (!has_data) return absl::InvalidArgumentError(absl::StrCat("GraphQL error: ", message));
  }
  return absl::OkStatus();
}

absl::StatusOr<json> Document(absl::string_view body) {
  ASSIGN_OR_RETURN(json doc, ParseJson(body));
  if (!doc.is_object()) return absl::InvalidArgumentError("GraphQL answer is not a JSON object");
  return doc;
}

// Login reads obj[name].login; "" for null (a deleted account).
absl::StatusOr<std::string> Login(const json& obj, const char* name) {
  return UserName(obj, name, "login");
}

absl::Status ReadComment(const json& c, const v1::RepositoryRef& repo, int64_t number,
                         v1::Comment* out) {
  if (!c.is_object()) return absl::InvalidArgumentError("comment is not a JSON object");
  *out->mutable_repo() = repo;
  out->set_issue_number(number);
  ASSIGN_OR_RETURN(int64_t id, RequiredInt(c, "databaseId"));
  out->set_id(id);
  RETURN_IF_ERROR(SetTime(c, "updatedAt", true, out->mutable_updated_at()));
  RETURN_IF_ERROR(SetTime(c, "createdAt", false, out->mutable_created_at()));
  ASSIGN_OR_RETURN(*out->mutable_author(), Login(c, "author"));
  ASSIGN_OR_RETURN(*out->mutable_body(), OptionalString(c, "body"));
  ASSIGN_OR_RETURN(*out->mutable_url(), OptionalString(c, "url"));
  return absl::OkStatus();
}

// ReadComments reads a comments connection of issue `number`: its nodes into `out` (bad ones
// into `bad`), and where it continues when it has a next page.
absl::Status ReadComments(const json& conn, const v1::RepositoryRef& repo, int64_t number,
                          std::vector<v1::Comment>* out, std::vector<ThreadCursor>* more,
                          std::vector<BadItem>* bad) {
  if (!conn.is_object()) return FieldError("comments", "is not an object");
  const json* nodes = Member(conn, "nodes");
  if (nodes == nullptr || !nodes->is_array()) return FieldError("comments.nodes", "is missing");
  for (size_t i = 0; i < nodes->size(); ++i) {
    v1::Comment c;
    absl::Status s = ReadComment((*nodes)[i], repo, number, &c);
    if (s.ok()) {
      out->push_back(std::move(c));
    } else {
      bad->push_back(BadItem{static_cast<int64_t>(i), ItemKey((*nodes)[i], "databaseId"),
                             absl::StrCat("issue ", number, " comment ", i, ": ", s.message()),
                             (*nodes)[i].dump()});
    }
  }
  const json* info = Member(conn, "pageInfo");
  if (info != nullptr && info->is_object() && info->value("hasNextPage", false)) {
    ASSIGN_OR_RETURN(std::string end, RequiredString(*info, "endCursor"));
    more->push_back(ThreadCursor{number, end});
  }
  return absl::OkStatus();
}

// RepositoryOf checks an answer for errors and returns its `data.repository`, reading its
// rateLimit object into `rate`.
absl::StatusOr<const json*> RepositoryOf(const json& doc, GraphqlRate* rate) {
  const json* data = Member(doc, "data");
  RETURN_IF_ERROR(Errors(doc, data != nullptr && Member(*data, "repository") != nullptr));
  if (data == nullptr) return absl::InvalidArgumentError("GraphQL answer has no data");
  RETURN_IF_ERROR(ReadRate(*data, rate));
  return RequiredMember(*data, "repository");
}

// IssueNodes reads `repository.issues`: where it continues (`has_next`, `end_cursor`, required
// when there is a next page) and its nodes (an array).
absl::StatusOr<const json*> IssueNodes(const json& repository, bool* has_next,
                                       std::string* end_cursor) {
  ASSIGN_OR_RETURN(const json* issues, RequiredMember(repository, "issues"));
  ASSIGN_OR_RETURN(const json* info, RequiredMember(*issues, "pageInfo"));
  *has_next = info->value("hasNextPage", false);
  if (*has_next) {
    ASSIGN_OR_RETURN(*end_cursor, RequiredString(*info, "endCursor"));
  }
  ASSIGN_OR_RETURN(const json* nodes, RequiredMember(*issues, "nodes"));
  if (!nodes->is_array()) return FieldError("issues.nodes", "is not an array");
  return nodes;
}

}  // namespace

std::string RateLimitBody() {
  return json{{"query", absl::StrCat("query RateLimit { ", kRateFields, " }")}}.dump();
}

absl::StatusOr<GraphqlRate> ParseGraphqlRate(absl::string_view body) {
  ASSIGN_OR_RETURN(json doc, Document(body));
  GraphqlRate rate;
  try {
    const json* data = Member(doc, "data");
    RETURN_IF_ERROR(Errors(doc, data != nullptr));
    if (data == nullptr || Member(*data, "rateLimit") == nullptr) {
      return absl::InvalidArgumentError("GraphQL answer has no rateLimit");
    }
    RETURN_IF_ERROR(ReadRate(*data, &rate));
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("malformed GraphQL rateLimit: ", e.what()));
  }
  return rate;
}

std::string IssueNumbersBody(absl::string_view owner, absl::string_view name,
                             const std::string& after) {
  json request;
  request["query"] = absl::StrCat(
      "query IssueNumbers($owner: String!, $name: String!, $after: String) { ", kRateFields,
      " repository(owner: $owner, name: $name) { issues(first: 100, after: $after, "
      "orderBy: {field: CREATED_AT, direction: ASC}) { pageInfo { hasNextPage endCursor } "
      "nodes { number } } } }");
  request["variables"] = {{"owner", std::string(owner)},
                          {"name", std::string(name)},
                          {"after", after.empty() ? json(nullptr) : json(after)}};
  return request.dump();
}

absl::StatusOr<GraphqlNumbersPage> ParseGraphqlNumbersPage(absl::string_view body) {
  ASSIGN_OR_RETURN(json doc, Document(body));
  GraphqlNumbersPage page;
  try {
    ASSIGN_OR_RETURN(const json* repository, RepositoryOf(doc, &page.rate));
    ASSIGN_OR_RETURN(const json* nodes, IssueNodes(*repository, &page.has_next, &page.end_cursor));
    for (size_t i = 0; i < nodes->size(); ++i) {
      absl::StatusOr<int64_t> number = RequiredInt((*nodes)[i], "number");
      if (!number.ok() || *number <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("item ", i, ": no positive issue number in the numbers listing"));
      }
      page.numbers.push_back(*number);
    }
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("malformed GraphQL numbers page: ", e.what()));
  }
  return page;
}

std::string CommentPagesBody(absl::string_view owner, absl::string_view name,
                             const std::vector<ThreadCursor>& threads) {
  std::string selections;
  json variables;
  variables["owner"] = std::string(owner);
  variables["name"] = std::string(name);
  std::string params = "$owner: String!, $name: String!";
  for (size_t i = 0; i < threads.size(); ++i) {
    absl::StrAppend(&params, ", $a", i, ": String");
    const ThreadCursor& t = threads[i];
    variables[absl::StrCat("a", i)] = t.after.empty() ? json(nullptr) : json(t.after);
    absl::StrAppend(&selections, " i", t.number, ": issue(number: ", t.number,
                    ") { comments(first: ", std::clamp(t.first, 1, kCommentsPerIssue),
                    ", after: $a", i,
                    ") { pageInfo { hasNextPage endCursor } nodes { ", kCommentFields, " } } }");
  }
  json request;
  request["query"] = absl::StrCat("query CommentPages(", params, ") { ", kRateFields,
                                  " repository(owner: $owner, name: $name) {", selections, " } }");
  request["variables"] = std::move(variables);
  return request.dump();
}

absl::StatusOr<GraphqlThreadsPage> ParseGraphqlThreadsPage(absl::string_view body,
                                                           const v1::RepositoryRef& repo) {
  ASSIGN_OR_RETURN(json doc, Document(body));
  GraphqlThreadsPage page;
  try {
    ASSIGN_OR_RETURN(const json* repository, RepositoryOf(doc, &page.rate));
    ASSIGN_OR_RETURN(const json* nodes, IssueNodes(*repository, &page.has_next, &page.end_cursor));
    for (size_t i = 0; i < nodes->size(); ++i) {
      const json& node = (*nodes)[i];
      absl::StatusOr<int64_t> number = RequiredInt(node, "number");
      google::protobuf::Timestamp updated;
      absl::Status s = number.ok() ? SetTime(node, "updatedAt", true, &updated) : number.status();
      if (s.ok() && *number <= 0) s = FieldError("number", "is not positive");
      if (!s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("item ", i, ": ", s.message()));
      }
      page.numbers.push_back(*number);
      page.updated.push_back(FromProto(updated));
      ASSIGN_OR_RETURN(const json* comments, RequiredMember(node, "comments"));
      RETURN_IF_ERROR(ReadComments(*comments, repo, *number, &page.comments, &page.more_comments,
                                   &page.bad));
    }
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("malformed GraphQL threads page: ", e.what()));
  }
  return page;
}

absl::StatusOr<GraphqlCommentPages> ParseGraphqlCommentPages(
    absl::string_view body, const v1::RepositoryRef& repo,
    const std::vector<ThreadCursor>& asked) {
  ASSIGN_OR_RETURN(json doc, Document(body));
  GraphqlCommentPages pages;
  try {
    ASSIGN_OR_RETURN(const json* repository, RepositoryOf(doc, &pages.rate));
    if (!repository->is_object()) return FieldError("repository", "is not an object");
    // Aliases GitHub says it could not resolve (NOT_FOUND with the alias in its path): the
    // issue is gone. A null for any other reason is an error, never a complete thread.
    std::set<std::string> not_found;
    if (const json* errors = Member(doc, "errors"); errors != nullptr && errors->is_array()) {
      for (const json& e : *errors) {
        if (!e.is_object() || e.value("type", json("")) != "NOT_FOUND") continue;
        const json* path = Member(e, "path");
        if (path == nullptr || !path->is_array()) continue;
        for (const json& step : *path) {
          if (step.is_string()) not_found.insert(step.get<std::string>());
        }
      }
    }
    for (auto it = repository->begin(); it != repository->end(); ++it) {
      int64_t number = 0;
      if (it.key().size() < 2 || it.key()[0] != 'i' ||
          !absl::SimpleAtoi(it.key().substr(1), &number) || number <= 0) {
        return FieldError(it.key(), "is not a thread this crawler asked for");
      }
      if (it->is_null()) {
        if (not_found.count(it.key()) == 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("thread ", it.key(), " is null without a NOT_FOUND error"));
        }
        pages.missing.push_back(number);  // deleted or transferred meanwhile
        continue;
      }
      ASSIGN_OR_RETURN(const json* comments, RequiredMember(*it, "comments"));
      RETURN_IF_ERROR(ReadComments(*comments, repo, number, &pages.comments,
                                   &pages.more_comments, &pages.bad));
    }
    for (const ThreadCursor& t : asked) {
      if (!repository->contains(absl::StrCat("i", t.number))) {
        return absl::InvalidArgumentError(
            absl::StrCat("thread i", t.number, " is missing from the answer"));
      }
    }
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("malformed GraphQL comment page: ", e.what()));
  }
  return pages;
}

bool IsGraphqlTimeout(int http_status, absl::string_view body) {
  if (http_status == 502 || http_status == 504) return true;
  constexpr absl::string_view kCutOff = "Something went wrong while executing your query";
  // Cheap test first; then only a top-level error of an answer without data counts (a comment
  // quoting GitHub's message is data, not a timeout).
  if (http_status != 200 || !absl::StrContains(body, kCutOff)) return false;
  const json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || Member(doc, "data") != nullptr) return false;
  const json* errors = Member(doc, "errors");
  if (errors == nullptr || !errors->is_array()) return false;
  for (const json& e : *errors) {
    if (e.is_object() && e.contains("message") && e["message"].is_string() &&
        absl::StrContains(e["message"].get<std::string>(), kCutOff)) {
      return true;
    }
  }
  return false;
}

}  // namespace issuescope::crawler

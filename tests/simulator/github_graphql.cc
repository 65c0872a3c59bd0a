#include "tests/simulator/github_graphql.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "tests/simulator/github_json.h"
#include "tests/simulator/graphql.h"

namespace issuescope::sim {
namespace {

using graphql::Field;

const std::set<std::string>& Connections() {
  static const auto* names =
      new std::set<std::string>{"issues", "comments", "labels", "assignees", "reactions"};
  return *names;
}

Json ErrorsBody(const std::string& message, const std::string& type = "") {
  Json error;
  if (!type.empty()) error["type"] = type;
  error["message"] = message;
  Json body;
  body["errors"] = Json::array({error});
  return body;
}

std::string Cursor(const Json& key) {
  return absl::Base64Escape(absl::StrCat("cursor:v2:", key.dump()));
}

// ParseCursor decodes a Cursor; false when it is not one of ours.
bool ParseCursor(const Json& value, Json* key) {
  if (!value.is_string()) return false;
  std::string raw;
  if (!absl::Base64Unescape(value.get<std::string>(), &raw)) return false;
  const std::string prefix = "cursor:v2:";
  if (raw.compare(0, prefix.size(), prefix) != 0) return false;
  *key = Json::parse(raw.substr(prefix.size()), nullptr, false);
  return !key->is_discarded() && key->is_array();
}

// Resolver walks the selections of one query over the corpus, collecting errors as GitHub
// reports them (a missing repository or issue is null with a NOT_FOUND error; an unknown field
// or a bad argument fails the whole query).
class Resolver {
 public:
  Resolver(const Corpus& corpus, const std::string& base, const Json& rate_limit)
      : corpus_(corpus), base_(base), rate_limit_(rate_limit) {}

  Json Root(const std::vector<Field>& fields) {
    Json data = Json::object();
    for (const Field& f : fields) {
      if (f.name == "rateLimit") {
        data[f.alias] = Pick(f, rate_limit_, "RateLimit");
      } else if (f.name == "repository") {
        data[f.alias] = Repository(f);
      } else if (f.name == "__typename") {
        data[f.alias] = "Query";
      } else {
        Undefined(f, "Query");
      }
    }
    return data;
  }

  bool invalid() const { return invalid_; }
  const Json& errors() const { return errors_; }

 private:
  void Undefined(const Field& f, const char* type) {
    Json e;
    e["path"] = Json::array({f.alias});
    e["extensions"] = {{"code", "undefinedField"}, {"typeName", type}, {"fieldName", f.name}};
    e["message"] = absl::StrCat("Field '", f.name, "' doesn't exist on type '", type, "'");
    errors_.push_back(e);
    invalid_ = true;
  }
  void BadArgument(const std::string& message) {
    Json e;
    e["message"] = message;
    errors_.push_back(e);
    invalid_ = true;
  }
  void NotFound(const Field& f, const std::string& message) {
    Json e;
    e["type"] = "NOT_FOUND";
    e["path"] = Json::array({f.alias});
    e["message"] = message;
    errors_.push_back(e);
  }

  // Pick selects the scalar members `f` asks for from a ready object.
  Json Pick(const Field& f, const Json& object, const char* type) {
    Json out = Json::object();
    for (const Field& s : f.selections) {
      if (s.name == "__typename") {
        out[s.alias] = type;
      } else if (object.contains(s.name)) {
        out[s.alias] = object[s.name];
      } else {
        Undefined(s, type);
      }
    }
    return out;
  }

  std::string StringArg(const Field& f, const char* name) {
    if (!f.args.contains(name) || !f.args[name].is_string()) {
      BadArgument(absl::StrCat("Argument '", name, "' on Field '", f.name,
                               "' has an invalid value or is missing. Expected type 'String!'."));
      return "";
    }
    return f.args[name].get<std::string>();
  }

  Json Repository(const Field& f) {
    const std::string owner = StringArg(f, "owner");
    const std::string name = StringArg(f, "name");
    if (invalid_) return nullptr;
    const sim::Repository* repo = corpus_.FindRepo(Tracker::kGithub, owner, name);
    if (repo == nullptr) {
      if (const Redirect* moved = corpus_.FindRedirect(Tracker::kGithub, owner, name)) {
        repo = corpus_.FindRepoById(Tracker::kGithub, moved->repo_id);
      }
    }
    if (repo == nullptr) {
      NotFound(f, absl::StrCat("Could not resolve to a Repository with the name '", owner, "/",
                               name, "'."));
      return nullptr;
    }
    repo_name_ = repo->FullName();
    Json out = Json::object();
    for (const Field& s : f.selections) {
      if (s.name == "nameWithOwner") {
        out[s.alias] = repo->FullName();
      } else if (s.name == "databaseId") {
        out[s.alias] = repo->id;
      } else if (s.name == "__typename") {
        out[s.alias] = "Repository";
      } else if (s.name == "issues") {
        out[s.alias] = Issues(*repo, s);
      } else if (s.name == "issue") {
        if (!s.args.contains("number") || !s.args["number"].is_number_integer()) {
          BadArgument("Argument 'number' on Field 'issue' has an invalid value. Expected type 'Int!'.");
          continue;
        }
        const int64_t number = s.args["number"].get<int64_t>();
        const sim::Issue* issue = repo->FindIssue(number);
        if (issue == nullptr || issue->is_pull_request) {
          NotFound(s, absl::StrCat("Could not resolve to an Issue with the number of ", number, "."));
          out[s.alias] = nullptr;
        } else {
          out[s.alias] = Issue(*repo, *issue, s);
        }
      } else {
        Undefined(s, "Repository");
      }
    }
    return out;
  }

  // PageSize reads first/last (validated by Analyse) and whether `last` was used.
  static int64_t PageSize(const Field& f, bool* last) {
    *last = false;
    if (f.args.contains("first") && f.args["first"].is_number_integer()) {
      return f.args["first"].get<int64_t>();
    }
    if (f.args.contains("last") && f.args["last"].is_number_integer()) {
      *last = true;
      return f.args["last"].get<int64_t>();
    }
    return 0;
  }

  // Page renders a connection over `count` items in order, `key(i)` giving item i's cursor key
  // (increasing in i) and `node(i, selection)` its node.
  template <typename KeyFn, typename NodeFn>
  Json Page(const Field& f, size_t count, const KeyFn& key, const NodeFn& node) {
    bool last = false;
    const int64_t size = PageSize(f, &last);
    size_t begin = 0, end = count;
    if (f.args.contains("after") && !f.args["after"].is_null()) {
      Json after;
      if (!ParseCursor(f.args["after"], &after)) {
        BadArgument(absl::StrCat("`", f.args["after"].is_string() ? f.args["after"].get<std::string>()
                                                                  : f.args["after"].dump(),
                                 "` does not appear to be a valid cursor."));
        return nullptr;
      }
      while (begin < count && !(after < key(begin))) ++begin;
    }
    if (f.args.contains("before") && !f.args["before"].is_null()) {
      Json before;
      if (!ParseCursor(f.args["before"], &before)) {
        BadArgument("`before` does not appear to be a valid cursor.");
        return nullptr;
      }
      while (end > begin && !(key(end - 1) < before)) --end;
    }
    size_t from = begin, to = end;
    if (last) {
      from = end - std::min<size_t>(end - begin, static_cast<size_t>(size));
    } else {
      to = begin + std::min<size_t>(end - begin, static_cast<size_t>(size));
    }
    Json out = Json::object();
    for (const Field& s : f.selections) {
      if (s.name == "totalCount") {
        out[s.alias] = count;
      } else if (s.name == "pageInfo") {
        Json info;
        info["hasNextPage"] = to < end;
        info["hasPreviousPage"] = from > begin;
        info["startCursor"] = from < to ? Json(Cursor(key(from))) : Json();
        info["endCursor"] = from < to ? Json(Cursor(key(to - 1))) : Json();
        out[s.alias] = Pick(s, info, "PageInfo");
      } else if (s.name == "nodes") {
        Json nodes = Json::array();
        for (size_t i = from; i < to; ++i) nodes.push_back(node(i, s));
        out[s.alias] = std::move(nodes);
      } else if (s.name == "__typename") {
        out[s.alias] = "Connection";
      } else {
        Undefined(s, "Connection");
      }
    }
    return out;
  }

  Json Issues(const sim::Repository& repo, const Field& f) {
    // Order and filters.
    bool by_created = true, descending = false;
    if (f.args.contains("orderBy") && f.args["orderBy"].is_object()) {
      const Json& order = f.args["orderBy"];
      const std::string field =
          order.contains("field") && order["field"].is_string() ? order["field"].get<std::string>()
                                                                : "";
      if (field == "UPDATED_AT") {
        by_created = false;
      } else if (field != "CREATED_AT") {
        BadArgument(absl::StrCat("Argument 'orderBy' on Field 'issues' has an invalid value: field '",
                                 field, "' (the simulator orders by CREATED_AT or UPDATED_AT)."));
        return nullptr;
      }
      descending = order.contains("direction") && order["direction"] == "DESC";
    }
    int64_t since = 0;
    std::set<std::string> states;
    auto read_states = [&](const Json& v) {
      if (v.is_array()) {
        for (const Json& s : v) {
          if (s.is_string()) states.insert(s.get<std::string>());
        }
      }
    };
    if (f.args.contains("states")) read_states(f.args["states"]);
    if (f.args.contains("filterBy") && f.args["filterBy"].is_object()) {
      const Json& filter = f.args["filterBy"];
      if (filter.contains("states")) read_states(filter["states"]);
      if (filter.contains("since") && filter["since"].is_string()) {
        absl::Time t;
        std::string err;
        if (!absl::ParseTime(absl::RFC3339_full, filter["since"].get<std::string>(), &t, &err)) {
          BadArgument(absl::StrCat("Argument 'since' has an invalid value: '",
                                   filter["since"].get<std::string>(), "' is not a DateTime."));
          return nullptr;
        }
        since = absl::ToUnixSeconds(t);
      }
    }
    std::vector<const sim::Issue*> listed;
    const std::vector<uint32_t>& index = by_created ? repo.issues_by_created : repo.issues_by_updated;
    listed.reserve(index.size());
    for (uint32_t pos : index) {
      const sim::Issue& issue = repo.issues[pos];
      if (issue.is_pull_request || issue.updated_at < since) continue;
      if (!states.empty() && states.count(issue.open ? "OPEN" : "CLOSED") == 0) continue;
      listed.push_back(&issue);
    }
    if (descending) std::reverse(listed.begin(), listed.end());
    auto key = [&](size_t i) {
      const sim::Issue& issue = *listed[i];
      const int64_t k = by_created ? issue.created_at : issue.updated_at;
      // Keys increase along the listing: negate them when descending.
      return descending ? Json::array({-k, -issue.number}) : Json::array({k, issue.number});
    };
    return Page(f, listed.size(), key,
                [&](size_t i, const Field& s) { return Issue(repo, *listed[i], s); });
  }

  Json Actor(const std::string& login, const Field& f) {
    if (login.empty()) return nullptr;  // a deleted account ("ghost") is null
    return Pick(f, Json{{"login", login}, {"url", absl::StrCat(base_, "/", login)}}, "User");
  }

  Json Issue(const sim::Repository& repo, const sim::Issue& issue, const Field& f) {
    Json out = Json::object();
    const std::string full = repo.FullName();
    for (const Field& s : f.selections) {
      const std::string& n = s.name;
      if (n == "number") {
        out[s.alias] = issue.number;
      } else if (n == "databaseId") {
        out[s.alias] = issue.id;
      } else if (n == "id") {
        out[s.alias] = absl::StrCat("I_", absl::WebSafeBase64Escape(absl::StrCat("0:", issue.id)));
      } else if (n == "title") {
        out[s.alias] = issue.title;
      } else if (n == "body") {
        out[s.alias] = issue.body;
      } else if (n == "state") {
        out[s.alias] = issue.open ? "OPEN" : "CLOSED";
      } else if (n == "stateReason") {
        std::string reason = issue.state_reason;
        std::transform(reason.begin(), reason.end(), reason.begin(), ::toupper);
        out[s.alias] = reason.empty() ? Json() : Json(reason);
      } else if (n == "locked") {
        out[s.alias] = issue.locked;
      } else if (n == "url") {
        out[s.alias] = absl::StrCat(base_, "/", full, "/issues/", issue.number);
      } else if (n == "createdAt") {
        out[s.alias] = FormatTimestamp(issue.created_at);
      } else if (n == "updatedAt") {
        out[s.alias] = FormatTimestamp(issue.updated_at);
      } else if (n == "closedAt") {
        out[s.alias] = issue.closed_at == 0 ? Json() : Json(FormatTimestamp(issue.closed_at));
      } else if (n == "author") {
        out[s.alias] = Actor(issue.user, s);
      } else if (n == "__typename") {
        out[s.alias] = "Issue";
      } else if (n == "labels") {
        out[s.alias] = Page(
            s, issue.labels.size(), [](size_t i) { return Json::array({static_cast<int64_t>(i)}); },
            [&](size_t i, const Field& sel) {
              return Pick(sel, Json{{"name", issue.labels[i]}}, "Label");
            });
      } else if (n == "assignees") {
        out[s.alias] = Page(
            s, issue.assignees.size(),
            [](size_t i) { return Json::array({static_cast<int64_t>(i)}); },
            [&](size_t i, const Field& sel) { return Actor(issue.assignees[i], sel); });
      } else if (n == "reactions") {
        int64_t total = 0;
        for (int32_t r : issue.reactions) total += r;
        Json out_r = Json::object();
        for (const Field& r : s.selections) {
          if (r.name == "totalCount") {
            out_r[r.alias] = total;
          } else {
            Undefined(r, "ReactionConnection");
          }
        }
        out[s.alias] = std::move(out_r);
      } else if (n == "comments") {
        out[s.alias] = Page(
            s, issue.comments.size(),
            [](size_t i) { return Json::array({static_cast<int64_t>(i)}); },
            [&](size_t i, const Field& sel) {
              return Comment(repo, repo.comments[issue.comments[i]], sel);
            });
      } else {
        Undefined(s, "Issue");
      }
    }
    return out;
  }

  Json Comment(const sim::Repository& repo, const sim::Comment& c, const Field& f) {
    Json out = Json::object();
    for (const Field& s : f.selections) {
      const std::string& n = s.name;
      if (n == "databaseId") {
        out[s.alias] = c.id;
      } else if (n == "id") {
        out[s.alias] = absl::StrCat("IC_", absl::WebSafeBase64Escape(absl::StrCat("0:", c.id)));
      } else if (n == "body") {
        out[s.alias] = c.body;
      } else if (n == "url") {
        out[s.alias] = absl::StrCat(base_, "/", repo.FullName(), "/issues/", c.issue_number,
                                    "#issuecomment-", c.id);
      } else if (n == "createdAt") {
        out[s.alias] = FormatTimestamp(c.created_at);
      } else if (n == "updatedAt") {
        out[s.alias] = FormatTimestamp(c.updated_at);
      } else if (n == "author") {
        out[s.alias] = Actor(c.user, s);
      } else if (n == "__typename") {
        out[s.alias] = "IssueComment";
      } else {
        Undefined(s, "IssueComment");
      }
    }
    return out;
  }

  const Corpus& corpus_;
  const std::string& base_;
  const Json& rate_limit_;
  Json errors_ = Json::array();
  bool invalid_ = false;

 public:
  std::string repo_name_;  // the repository a query addressed, for the counters
};

}  // namespace

GraphqlAnswer DispatchGithubGraphql(const Corpus& corpus, absl::string_view body,
                                    const std::string& base, const GraphqlBudget& budget,
                                    int64_t timeout_nodes) {
  GraphqlAnswer answer;
  ApiResponse& r = answer.response;
  r.endpoint = "graphql";
  absl::StatusOr<graphql::Operation> op = graphql::Parse(body);
  if (!op.ok()) {
    // A body that is not JSON is a 400; a query that does not parse is a 200 with errors.
    const bool json_problem = op.status().message() == "Problems parsing JSON";
    r.status = json_problem ? 400 : 200;
    r.body = Dump(json_problem ? ErrorJson(std::string(op.status().message()),
                                           "https://docs.github.com/graphql")
                               : ErrorsBody(std::string(op.status().message())));
    return answer;
  }
  absl::StatusOr<graphql::Cost> cost = graphql::Analyse(*op, Connections());
  if (!cost.ok()) {
    r.body = Dump(ErrorsBody(std::string(cost.status().message())));
    return answer;
  }
  answer.nodes = cost->nodes;
  if (cost->nodes > kGraphqlNodeLimit) {
    r.body = Dump(ErrorsBody(
        absl::StrCat("This query requests up to ", cost->nodes,
                     " possible nodes which exceeds the maximum limit of ", kGraphqlNodeLimit, "."),
        "MAX_NODE_LIMIT_EXCEEDED"));
    return answer;
  }
  if (budget.remaining < cost->points) {
    answer.over_budget = true;
    r.body = Dump(ErrorsBody("API rate limit exceeded for user ID 1.", "RATE_LIMITED"));
    return answer;
  }
  answer.points = cost->points;
  if (timeout_nodes > 0 && cost->nodes > timeout_nodes) {
    answer.timed_out = true;
    r.status = 502;
    r.body = Dump(Json{
        {"data", nullptr},
        {"errors", Json::array({Json{
                       {"message",
                        "Something went wrong while executing your query. This may be the result "
                        "of a timeout, or it could be a GitHub bug. Please include "
                        "`0400:3E4A:1F2B3C:4D5E6F:65A0B1C2` when reporting this issue."}}})}});
    return answer;
  }
  Json rate_limit;
  rate_limit["limit"] = budget.limit;
  rate_limit["cost"] = cost->points;
  rate_limit["remaining"] = budget.remaining - cost->points;
  rate_limit["resetAt"] = FormatTimestamp(budget.reset);
  rate_limit["used"] = budget.limit - budget.remaining + cost->points;
  rate_limit["nodeCount"] = cost->nodes;
  Resolver resolver(corpus, base, rate_limit);
  Json data = resolver.Root(op->selections);
  r.repo = resolver.repo_name_;
  Json out;
  if (resolver.invalid()) {
    // Validation errors: nothing ran, nothing is charged.
    answer.points = 0;
    out["errors"] = resolver.errors();
  } else {
    out["data"] = std::move(data);
    if (!resolver.errors().empty()) out["errors"] = resolver.errors();
  }
  r.body = Dump(out);
  return answer;
}

}  // namespace issuescope::sim

// The GitHub REST v3 dialect: routing, object shapes, Link pagination, 301 for transferred
// repositories (to /repositories/{id}, as GitHub does), 410 for deleted issues, 404/422 bodies.
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tests/simulator/api_dispatch.h"
#include "tests/simulator/github_json.h"
#include "tests/simulator/listing.h"

namespace issuescope::sim {
namespace {

constexpr char kDocs[] = "https://docs.github.com/rest";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string DecodeSegment(absl::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && HexValue(s[i + 1]) >= 0 &&
        HexValue(s[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

ApiResponse Json404() {
  ApiResponse r;
  r.status = 404;
  r.body = Dump(ErrorJson("Not Found", kDocs));
  return r;
}

std::string ValidationBody(const ValidationError& e) {
  Json err;
  err["resource"] = "Issue";
  err["field"] = e.field;
  err["code"] = "invalid";
  err["value"] = e.value;
  Json j;
  j["message"] = "Validation Failed";
  j["errors"] = Json::array({err});
  j["documentation_url"] = kDocs;
  return Dump(j);
}

bool IsNumber(const std::string& s, int64_t* n) {
  return !s.empty() && absl::ascii_isdigit(static_cast<unsigned char>(s[0])) &&
         absl::SimpleAtoi(s, n) && *n > 0;
}

}  // namespace

std::vector<std::string> PathSegments(const std::string& target) {
  absl::string_view path = target;
  path = path.substr(0, path.find('?'));
  if (!path.empty() && path[0] == '/') path.remove_prefix(1);
  std::vector<std::string> out;
  for (absl::string_view s : absl::StrSplit(path, '/')) out.push_back(DecodeSegment(s));
  return out;
}

std::string PercentEncode(absl::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      snprintf(buf, sizeof(buf), "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

std::string QueryOf(const std::string& target) {
  const size_t q = target.find('?');
  return q == std::string::npos ? "" : target.substr(q);
}

int64_t PageCount(int64_t total, int per_page) {
  return total == 0 ? 1 : (total + per_page - 1) / per_page;
}

ApiResponse DispatchGithub(const Corpus& corpus, const ApiRequest& req) {
  const std::vector<std::string> seg = PathSegments(req.target);
  // Resolve the repository: /repos/{o}/{r}/REST or /repositories/{id}/REST.
  const Repository* repo = nullptr;
  size_t rest = 0;
  int64_t id = 0;
  if (seg.size() >= 3 && seg[0] == "repos" && !seg[1].empty() && !seg[2].empty()) {
    repo = corpus.FindRepo(Tracker::kGithub, seg[1], seg[2]);
    rest = 3;
    if (repo == nullptr) {
      if (const Redirect* moved = corpus.FindRedirect(Tracker::kGithub, seg[1], seg[2])) {
        // GitHub answers a renamed or transferred repository with 301 to /repositories/{id}.
        std::vector<std::string> tail(seg.begin() + 3, seg.end());
        std::string location = absl::StrCat(req.base, "/repositories/", moved->repo_id);
        for (const std::string& t : tail) absl::StrAppend(&location, "/", PercentEncode(t));
        absl::StrAppend(&location, QueryOf(req.target));
        ApiResponse r;
        r.status = 301;
        Json j;
        j["message"] = "Moved Permanently";
        j["url"] = location;
        j["documentation_url"] =
            "https://docs.github.com/rest/guides/best-practices-for-using-the-rest-api"
            "#follow-redirects";
        r.body = Dump(j);
        r.headers.emplace_back("Location", location);
        r.endpoint = "redirect";
        return r;
      }
    }
  } else if (seg.size() >= 2 && seg[0] == "repositories" && IsNumber(seg[1], &id)) {
    repo = corpus.FindRepoById(Tracker::kGithub, id);
    rest = 2;
  }
  if (repo == nullptr || req.method != "GET") return Json404();
  ApiResponse out;
  out.repo = repo->FullName();
  const size_t n = seg.size() - rest;
  int64_t number = 0;
  if (n == 0) {
    out.endpoint = "repo";
    out.body = Dump(RepositoryJson(*repo, req.base));
    return out;
  }
  if (seg[rest] != "issues") return Json404();
  if (n == 1) {
    out.endpoint = "issues";
  } else if (n == 2 && seg[rest + 1] == "comments") {
    out.endpoint = "comments";
  } else if (IsNumber(seg[rest + 1], &number) && (n == 2 || (n == 3 && seg[rest + 2] == "comments"))) {
    out.endpoint = n == 2 ? "issue" : "issue_comments";
  } else {
    return Json404();
  }
  const Issue* issue = nullptr;
  if (number > 0) {
    issue = repo->FindIssue(number);
    if (issue == nullptr) {
      if (const Repository::IssueMove* moved = repo->FindMove(number)) {
        // GitHub answers a transferred issue with 301 to its new place.
        ApiResponse r = out;
        r.status = 301;
        const std::string location = absl::StrCat(req.base, "/repositories/", moved->to_repo_id,
                                                  "/issues/", moved->to_number,
                                                  n == 3 ? "/comments" : "");
        r.headers.emplace_back("Location", location);
        Json body;
        body["message"] = "Moved Permanently";
        body["url"] = location;
        body["documentation_url"] = "https://docs.github.com/v3/#http-redirects";
        r.body = Dump(body);
        return r;
      }
    }
    if (issue == nullptr && repo->IsDeleted(number)) {
      ApiResponse r = out;
      r.status = 410;
      r.body = Dump(ErrorJson("This issue was deleted",
                              "https://docs.github.com/rest/issues/issues#get-an-issue"));
      return r;
    }
    if (issue == nullptr) {
      ApiResponse r = Json404();
      r.endpoint = out.endpoint;
      r.repo = out.repo;
      return r;
    }
    if (out.endpoint == "issue") {
      out.body = Dump(IssueJson(*repo, *issue, req.base));
      return out;
    }
  }
  const std::vector<QueryParam> params = ParseQueryString(req.target);
  const ListKind kind = out.endpoint == "issues"     ? ListKind::kIssues
                        : out.endpoint == "comments" ? ListKind::kRepoComments
                                                     : ListKind::kIssueComments;
  ListQuery query;
  if (std::optional<ValidationError> bad = ParseListQuery(params, kind, &query)) {
    out.status = 422;
    out.body = ValidationBody(*bad);
    return out;
  }
  if (req.deep_page_limit > 0 && query.page > req.deep_page_limit) {
    out.status = 422;
    out.body = Dump(ErrorJson(
        "In order to keep the API fast for everyone, pagination is limited for this resource. "
        "Check the rel=last link relation in the Link response header to see how far back you "
        "can traverse.",
        "https://docs.github.com/v3/#pagination"));
    out.deep_page = true;
    return out;
  }
  ListPage page;
  Json arr = Json::array();
  if (kind == ListKind::kIssues) {
    page = SelectIssues(*repo, query);
    for (uint32_t p : page.positions) arr.push_back(IssueJson(*repo, repo->issues[p], req.base));
  } else {
    page = kind == ListKind::kRepoComments ? SelectRepoComments(*repo, query)
                                           : SelectIssueComments(*repo, *issue, query);
    for (uint32_t p : page.positions) {
      arr.push_back(CommentJson(*repo, repo->comments[p], req.base));
    }
  }
  out.body = Dump(arr);
  const std::string path_only = req.target.substr(0, req.target.find('?'));
  const std::string link =
      BuildLinkHeader(req.base + path_only, params, query.page, query.per_page, page.total);
  if (!link.empty()) out.headers.emplace_back("Link", link);
  return out;
}

}  // namespace issuescope::sim

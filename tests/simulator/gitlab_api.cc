// The GitLab v4 dialect under /api/v4: projects by numeric id or URL-encoded full path, issues
// (updated_after, order_by, sort, state opened|closed|all, labels) and per-issue notes (system
// notes flagged), offset pagination with Link (prev, next, first, last), X-Page, X-Per-Page,
// X-Next-Page, X-Prev-Page, X-Total and X-Total-Pages — the last two and rel="last" omitted above
// 10,000 results, as gitlab.com does — 301 for a transferred project addressed by its old path,
// 410 for deleted issues, and GitLab's 400/404 bodies.
#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/time_util.h"
#include "tests/simulator/api_dispatch.h"
#include "tests/simulator/forge_json.h"
#include "tests/simulator/listing.h"

namespace issuescope::sim {
namespace {

// kCountLimit: GitLab stops counting above this many results.
constexpr int64_t kCountLimit = 10000;

ApiResponse Error(int status, const char* key, const std::string& message) {
  ApiResponse r;
  r.status = status;
  Json j;
  j[key] = message;
  r.body = Dump(j);
  return r;
}

// Invalid answers a bad parameter as Grape does.
ApiResponse Invalid(const std::string& field, const char* what = "does not have a valid value") {
  return Error(400, "error", absl::StrCat(field, " ", what));
}

bool ParsePositive(const std::string& v, int64_t* out) {
  return absl::SimpleAtoi(v, out) && *out >= 1;
}

// ParseCommon reads page and per_page (default 20, clamped to 100).
std::optional<ApiResponse> ParsePaging(const std::vector<QueryParam>& params, ListQuery* q) {
  q->per_page = 20;
  for (const QueryParam& p : params) {
    int64_t n = 0;
    if (p.key == "per_page") {
      if (!ParsePositive(p.value, &n)) return Invalid("per_page", "is invalid");
      q->per_page = static_cast<int>(std::min<int64_t>(n, 100));
    } else if (p.key == "page") {
      if (!ParsePositive(p.value, &n)) return Invalid("page", "is invalid");
      q->page = n;
    }
  }
  return std::nullopt;
}

std::optional<ApiResponse> ParseOrder(const QueryParam& p, ListQuery* q) {
  if (p.key == "sort") {
    if (p.value != "asc" && p.value != "desc") return Invalid("sort");
    q->ascending = p.value == "asc";
  } else if (p.key == "order_by") {
    if (p.value == "created_at") {
      q->sort = ListQuery::Sort::kCreated;
    } else if (p.value == "updated_at") {
      q->sort = ListQuery::Sort::kUpdated;
    } else {
      return Invalid("order_by");
    }
  }
  return std::nullopt;
}

// Paginate sets GitLab's offset-pagination headers.
void Paginate(const ApiRequest& req, const std::vector<QueryParam>& params,
              const std::string& project_id, const ListQuery& q, int64_t total,
              ApiResponse* out) {
  const bool counted = total <= kCountLimit;
  const int64_t last = PageCount(total, q.per_page);
  const int64_t prev = q.page > 1 && q.page <= last ? q.page - 1 : 0;
  const int64_t next = q.page < last ? q.page + 1 : 0;
  const std::string url = req.base + req.target.substr(0, req.target.find('?'));
  auto link = [&](int64_t page, absl::string_view rel) {
    std::vector<std::pair<std::string, std::string>> parts;  // (key, raw "k=v")
    parts.emplace_back("id", absl::StrCat("id=", PercentEncode(project_id)));
    for (const QueryParam& p : params) {
      if (p.key != "page" && p.key != "id") parts.emplace_back(p.key, p.raw);
    }
    parts.emplace_back("page", absl::StrCat("page=", page));
    std::stable_sort(parts.begin(), parts.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> raw;
    for (const auto& kv : parts) raw.push_back(kv.second);
    return absl::StrCat("<", url, "?", absl::StrJoin(raw, "&"), ">; rel=\"", rel, "\"");
  };
  std::vector<std::string> links;
  if (prev > 0) links.push_back(link(prev, "prev"));
  if (next > 0) links.push_back(link(next, "next"));
  links.push_back(link(1, "first"));
  if (counted) links.push_back(link(last, "last"));
  out->headers.emplace_back("Link", absl::StrJoin(links, ", "));
  out->headers.emplace_back("X-Next-Page", next > 0 ? std::to_string(next) : "");
  out->headers.emplace_back("X-Page", std::to_string(q.page));
  out->headers.emplace_back("X-Per-Page", std::to_string(q.per_page));
  out->headers.emplace_back("X-Prev-Page", prev > 0 ? std::to_string(prev) : "");
  if (counted) {
    out->headers.emplace_back("X-Total", std::to_string(total));
    out->headers.emplace_back("X-Total-Pages", std::to_string(last));
  }
}

std::optional<ApiResponse> DeepPage(const ApiRequest& req, const ListQuery& q) {
  if (req.deep_page_limit > 0 && q.page > req.deep_page_limit) {
    ApiResponse r = Error(422, "message", "Offset pagination has a maximum allowed offset");
    r.deep_page = true;
    return r;
  }
  return std::nullopt;
}

}  // namespace

ApiResponse DispatchGitlab(const Corpus& corpus, const ApiRequest& req) {
  const std::vector<std::string> seg = PathSegments(req.target);
  // seg: api v4 projects ID [issues [IID [notes]]]
  if (seg.size() < 4 || seg[2] != "projects" || seg[3].empty()) {
    return Error(404, "error", "404 Not Found");
  }
  const std::string& id = seg[3];
  const Repository* repo = nullptr;
  int64_t numeric = 0;
  if (absl::ascii_isdigit(static_cast<unsigned char>(id[0])) && absl::SimpleAtoi(id, &numeric)) {
    repo = corpus.FindRepoById(Tracker::kGitlab, numeric);
  } else if (const size_t slash = id.rfind('/'); slash != std::string::npos) {
    const std::string owner = id.substr(0, slash);
    const std::string name = id.substr(slash + 1);
    repo = corpus.FindRepo(Tracker::kGitlab, owner, name);
    const Redirect* moved =
        repo == nullptr ? corpus.FindRedirect(Tracker::kGitlab, owner, name) : nullptr;
    const Repository* target =
        moved != nullptr ? corpus.FindRepoById(Tracker::kGitlab, moved->repo_id) : nullptr;
    if (target != nullptr) {
      std::string location =
          absl::StrCat(req.base, "/api/v4/projects/", PercentEncode(target->FullName()));
      for (size_t k = 4; k < seg.size(); ++k) absl::StrAppend(&location, "/", PercentEncode(seg[k]));
      absl::StrAppend(&location, QueryOf(req.target));
      ApiResponse r = Error(301, "message", "301 Moved Permanently");
      r.headers.emplace_back("Location", location);
      r.endpoint = "redirect";
      return r;
    }
  }
  if (repo == nullptr || req.method != "GET") return Error(404, "message", "404 Project Not Found");
  ApiResponse out;
  out.repo = repo->FullName();
  const size_t n = seg.size() - 4;
  if (n == 0) {
    out.endpoint = "repo";
    out.body = Dump(GitlabProjectJson(*repo, req.base));
    return out;
  }
  int64_t iid = 0;
  if (seg[4] != "issues" || n > 3 || (n >= 2 && !ParsePositive(seg[5], &iid)) ||
      (n == 3 && seg[6] != "notes")) {
    return Error(404, "error", "404 Not Found");
  }
  out.endpoint = n == 1 ? "issues" : n == 2 ? "issue" : "issue_comments";
  const Issue* issue = nullptr;
  if (iid > 0) {
    issue = repo->FindIssue(iid);
    if (issue == nullptr) {
      ApiResponse r = repo->IsDeleted(iid) ? Error(410, "message", "410 Gone")
                                           : Error(404, "message", "404 Not found");
      r.endpoint = out.endpoint;
      r.repo = out.repo;
      return r;
    }
    if (n == 2) {
      out.body = Dump(GitlabIssueJson(*repo, *issue, req.base));
      return out;
    }
  }
  const std::vector<QueryParam> params = ParseQueryString(req.target);
  ListQuery q;
  q.state = ListQuery::State::kAll;
  q.sort = ListQuery::Sort::kCreated;
  q.ascending = false;
  auto fail = [&](ApiResponse r) {
    r.endpoint = out.endpoint;
    r.repo = out.repo;
    return r;
  };
  if (auto bad = ParsePaging(params, &q)) return fail(*bad);
  for (const QueryParam& p : params) {
    if (auto bad = ParseOrder(p, &q)) return fail(*bad);
    if (n != 1) continue;  // notes take only sort, order_by and paging
    if (p.key == "state") {
      if (p.value == "opened") {
        q.state = ListQuery::State::kOpen;
      } else if (p.value == "closed") {
        q.state = ListQuery::State::kClosed;
      } else if (p.value == "all") {
        q.state = ListQuery::State::kAll;
      } else {
        return fail(Invalid("state"));
      }
    } else if (p.key == "updated_after") {
      auto t = ParseRfc3339(p.value);
      if (!t.ok()) return fail(Invalid("updated_after", "is invalid"));
      q.since = absl::ToUnixSeconds(*t);
    } else if (p.key == "labels") {
      q.labels = absl::StrSplit(p.value, ',', absl::SkipWhitespace());
    }
  }
  if (auto deep = DeepPage(req, q)) return fail(*deep);
  Json arr = Json::array();
  ListPage page;
  if (n == 1) {
    page = SelectIssues(*repo, q);
    for (uint32_t p : page.positions) {
      arr.push_back(GitlabIssueJson(*repo, repo->issues[p], req.base));
    }
  } else {
    page = SelectIssueCommentsOrdered(*repo, *issue, q);
    for (uint32_t p : page.positions) {
      arr.push_back(GitlabNoteJson(*repo, repo->comments[p], req.base));
    }
  }
  out.body = Dump(arr);
  Paginate(req, params, id, q, page.total, &out);
  return out;
}

}  // namespace issuescope::sim

// The Gitee v5 dialect under /api/v5: repositories, issues (state open|progressing|closed|
// rejected|all, sort created|updated, direction, since, labels, page, per_page up to 100,
// default 20), one issue by its string key ("I10001"), per-issue comments (order asc|desc) and
// repository-wide comments (sort, direction, since); totals in the total_count and total_page
// headers (no Link, no ETag: the recordings show neither); 301 for a transferred repository's
// old name, 410 for deleted issues.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/time_util.h"
#include "tests/simulator/api_dispatch.h"
#include "tests/simulator/forge_json.h"
#include "tests/simulator/listing.h"

namespace issuescope::sim {
namespace {

ApiResponse Message(int status, const std::string& message) {
  ApiResponse r;
  r.status = status;
  Json j;
  j["message"] = message;
  r.body = Dump(j);
  return r;
}

ApiResponse Invalid(const std::string& field) {
  return Message(400, absl::StrCat(field, " is invalid"));
}

}  // namespace

ApiResponse DispatchGitee(const Corpus& corpus, const ApiRequest& req) {
  const std::vector<std::string> seg = PathSegments(req.target);
  // seg: api v5 repos OWNER REPO [issues [comments | KEY [comments]]]
  if (seg.size() < 5 || seg[2] != "repos" || seg[3].empty() || seg[4].empty()) {
    return Message(404, "Not Found");
  }
  const Repository* repo = corpus.FindRepo(Tracker::kGitee, seg[3], seg[4]);
  if (repo == nullptr) {
    const Redirect* moved = corpus.FindRedirect(Tracker::kGitee, seg[3], seg[4]);
    const Repository* target =
        moved != nullptr ? corpus.FindRepoById(Tracker::kGitee, moved->repo_id) : nullptr;
    if (target != nullptr) {
      std::string location = absl::StrCat(req.base, "/api/v5/repos/", target->FullName());
      for (size_t k = 5; k < seg.size(); ++k) absl::StrAppend(&location, "/", PercentEncode(seg[k]));
      absl::StrAppend(&location, QueryOf(req.target));
      ApiResponse r = Message(301, "Moved Permanently");
      r.headers.emplace_back("Location", location);
      r.endpoint = "redirect";
      return r;
    }
  }
  if (repo == nullptr || req.method != "GET") return Message(404, "Not Found Project");
  ApiResponse out;
  out.repo = repo->FullName();
  const size_t n = seg.size() - 5;
  if (n == 0) {
    out.endpoint = "repo";
    out.body = Dump(GiteeRepoJson(*repo, req.base));
    return out;
  }
  int64_t number = 0;
  if (seg[5] != "issues" || n > 3) return Message(404, "Not Found");
  if (n == 1) {
    out.endpoint = "issues";
  } else if (n == 2 && seg[6] == "comments") {
    out.endpoint = "comments";
  } else if (ParseGiteeKey(seg[6], &number) && (n == 2 || seg[7] == "comments")) {
    out.endpoint = n == 2 ? "issue" : "issue_comments";
  } else {
    return Message(404, "Not Found");
  }
  auto fail = [&](ApiResponse r) {
    r.endpoint = out.endpoint;
    r.repo = out.repo;
    return r;
  };
  const Issue* issue = nullptr;
  if (number > 0) {
    issue = repo->FindIssue(number);
    if (issue == nullptr) {
      return fail(repo->IsDeleted(number) ? Message(410, "Gone") : Message(404, "Not Found"));
    }
    if (out.endpoint == "issue") {
      out.body = Dump(GiteeIssueJson(*repo, *issue, req.base));
      return out;
    }
  }
  const std::vector<QueryParam> params = ParseQueryString(req.target);
  ListQuery q;
  q.per_page = 20;
  q.sort = ListQuery::Sort::kCreated;
  q.state = ListQuery::State::kOpen;
  q.ascending = out.endpoint != "issues";  // issues default desc, comments asc
  for (const QueryParam& p : params) {
    const std::string& v = p.value;
    int64_t k = 0;
    if (p.key == "per_page") {
      if (!absl::SimpleAtoi(v, &k) || k < 1) return fail(Invalid(p.key));
      q.per_page = static_cast<int>(std::min<int64_t>(k, 100));
    } else if (p.key == "page") {
      if (!absl::SimpleAtoi(v, &q.page) || q.page < 1) return fail(Invalid(p.key));
    } else if (p.key == "since") {
      auto t = ParseRfc3339(v);
      if (!t.ok()) return fail(Invalid(p.key));
      q.since = absl::ToUnixSeconds(*t);
    } else if (out.endpoint == "issue_comments") {
      if (p.key == "order") {
        if (v != "asc" && v != "desc") return fail(Invalid(p.key));
        q.ascending = v == "asc";
      }
    } else if (p.key == "sort") {
      if (v == "created") {
        q.sort = ListQuery::Sort::kCreated;
      } else if (v == "updated") {
        q.sort = ListQuery::Sort::kUpdated;
      } else {
        return fail(Invalid(p.key));
      }
    } else if (p.key == "direction") {
      if (v != "asc" && v != "desc") return fail(Invalid(p.key));
      q.ascending = v == "asc";
    } else if (out.endpoint == "issues" && p.key == "state") {
      if (v == "open") {
        q.state = ListQuery::State::kOpen;
      } else if (v == "progressing") {
        q.state = ListQuery::State::kProgressing;
      } else if (v == "closed") {
        q.state = ListQuery::State::kClosed;
      } else if (v == "rejected") {
        q.state = ListQuery::State::kRejected;
      } else if (v == "all") {
        q.state = ListQuery::State::kAll;
      } else {
        return fail(Invalid(p.key));
      }
    } else if (out.endpoint == "issues" && p.key == "labels") {
      q.labels = absl::StrSplit(v, ',', absl::SkipWhitespace());
    }
  }
  if (req.deep_page_limit > 0 && q.page > req.deep_page_limit) {
    ApiResponse r = fail(Message(422, "page is too deep"));
    r.deep_page = true;
    return r;
  }
  Json arr = Json::array();
  ListPage page;
  if (out.endpoint == "issues") {
    page = SelectIssues(*repo, q);
    for (uint32_t p : page.positions) {
      arr.push_back(GiteeIssueJson(*repo, repo->issues[p], req.base));
    }
  } else {
    page = out.endpoint == "comments" ? SelectRepoComments(*repo, q)
                                      : SelectIssueCommentsOrdered(*repo, *issue, q);
    for (uint32_t p : page.positions) {
      arr.push_back(GiteeCommentJson(*repo, repo->comments[p], req.base));
    }
  }
  out.body = Dump(arr);
  out.headers.emplace_back("total_count", std::to_string(page.total));
  out.headers.emplace_back("total_page", std::to_string(page.total == 0 ? 0 : PageCount(page.total, q.per_page)));
  return out;
}

}  // namespace issuescope::sim

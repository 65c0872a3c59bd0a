#include "query_commands.h"

#include "search/export_format.h"

#include <unistd.h>

#include <filesystem>

#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/grpc_status.h"
#include "common/repo_slug.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "issuescope/v1/search.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "search/searcher.h"

namespace issuescope::cli {
namespace {

// Unescape turns the snippet's HTML into terminal text, with matches in bold (on a TTY) or
// between «».
std::string SnippetForTerminal(const std::string& html, bool tty) {
  std::string s = absl::StrReplaceAll(
      html, {{"<mark>", tty ? "\x1b[1m" : "«"}, {"</mark>", tty ? "\x1b[0m" : "»"}});
  s = absl::StrReplaceAll(s, {{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"},
                              {"&amp;", "&"}, {"\n", " "}});
  return s;
}

}  // namespace

std::string FormatDate(const google::protobuf::Timestamp& ts) {
  if (ts.seconds() == 0 && ts.nanos() == 0) return "";
  return FormatRfc3339(FromProto(ts));
}

std::string LocalIndexPath(const QueryTarget& target) { return target.data_dir + "/index"; }

absl::Status CheckQueryTarget(const QueryTarget& t) {
  if (t.data_dir.empty() == t.server.empty()) {
    return absl::InvalidArgumentError("give exactly one of --data DIR or --server HOST:PORT");
  }
  if (!t.data_dir.empty() && (!t.tls.ca.empty() || !t.tls.cert.empty())) {
    return absl::InvalidArgumentError(
        absl::StrCat(t.tls.ca.empty() ? t.tls.cert_flag : t.tls.ca_flag, " needs --server"));
  }
  if (!t.data_dir.empty() && !std::filesystem::exists(t.data_dir + "/index")) {
    return absl::NotFoundError(absl::StrCat("no index in ", t.data_dir,
                                            " (run `issuescope crawl ... --data ", t.data_dir,
                                            "` first)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<v1::Search::Stub>> ConnectSearch(const QueryTarget& target) {
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> channel,
                   CreateSearchChannel(target.server, target.tls));
  return v1::Search::NewStub(channel);
}

namespace {

absl::StatusOr<v1::IssueWithComments> GetIssueVia(const QueryTarget& target,
                                                  const std::string& slug, int64_t number) {
  if (!target.data_dir.empty()) {
    auto searcher = search::Searcher::ForPath(LocalIndexPath(target));
    return searcher->GetIssue(slug, number);
  }
  v1::SearchGetIssueRequest req;
  req.set_repo_slug(slug);
  req.set_number(number);
  v1::IssueWithComments out;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  ASSIGN_OR_RETURN(std::unique_ptr<v1::Search::Stub> stub, ConnectSearch(target));
  RETURN_IF_ERROR(FromGrpcStatus(stub->GetIssue(&ctx, req, &out)));
  return out;
}

}  // namespace

absl::StatusOr<v1::SearchResponse> SearchVia(const QueryTarget& target,
                                             const v1::SearchRequest& request) {
  RETURN_IF_ERROR(CheckQueryTarget(target));
  if (!target.data_dir.empty()) {
    auto searcher = search::Searcher::ForPath(LocalIndexPath(target));
    return searcher->Search(request);
  }
  v1::SearchResponse out;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  ASSIGN_OR_RETURN(std::unique_ptr<v1::Search::Stub> stub, ConnectSearch(target));
  RETURN_IF_ERROR(FromGrpcStatus(stub->Search(&ctx, request, &out)));
  return out;
}

std::string HitToJson(const v1::SearchHit& hit) { return search::ExportJson(hit); }

void PrintFacets(const v1::SearchResponse& response, bool json) {
  if (response.facets().empty()) return;
  if (json) {
    nlohmann::json j;
    j["total"] = response.total();
    j["total_exact"] = response.total_exact();
    j["facets_exact"] = response.facets_exact();
    j["facets_counted"] = response.facets_counted();
    j["facets"] = nlohmann::json::object();
    for (const v1::Facet& facet : response.facets()) {
      nlohmann::json values = nlohmann::json::array();
      for (const v1::FacetValue& v : facet.values()) values.push_back({v.value(), v.count()});
      j["facets"][facet.name()] = values;
    }
    absl::PrintF("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    return;
  }
  if (!response.facets_exact()) {
    absl::PrintF("facets counted over a sample of %d of %s%d matches (work bound)\n",
                 response.facets_counted(), response.total_exact() ? "" : "about ",
                 response.total());
  }
  for (const v1::Facet& facet : response.facets()) {
    std::vector<std::string> parts;
    for (const v1::FacetValue& v : facet.values()) {
      parts.push_back(absl::StrCat(v.value(), " (", v.count(), ")"));
    }
    const int64_t more = facet.distinct_values() - facet.values_size();
    absl::PrintF("%s: %s%s\n", facet.name(), absl::StrJoin(parts, ", "),
                 more > 0 ? absl::StrCat(", … ", more, " more") : "");
  }
  absl::PrintF("\n");
}

void PrintHits(const v1::SearchResponse& response, bool json) {
  const bool tty = isatty(STDOUT_FILENO) != 0;
  if (json) {
    for (const v1::SearchHit& hit : response.hits()) {
      if (hit.explain().empty()) {
        absl::PrintF("%s\n", HitToJson(hit));
        continue;
      }
      nlohmann::ordered_json j = nlohmann::ordered_json::parse(HitToJson(hit));
      nlohmann::ordered_json parts = nlohmann::ordered_json::array();
      for (const v1::ScorePart& p : hit.explain()) {
        parts.push_back({{"part", p.part()},
                         {"weight", p.weight()},
                         {"terms", std::vector<std::string>(p.terms().begin(), p.terms().end())}});
      }
      j["explain"] = parts;
      absl::PrintF("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
    return;
  }
  if (response.relaxed()) {
    absl::PrintF("no issue has every word; %s%d issues have some of them, best first\n",
                 response.total_exact() ? "" : "about ", response.total());
  } else {
    absl::PrintF("%s%d matching issues\n", response.total_exact() ? "" : "about ",
                 response.total());
  }
  for (const v1::SearchHit& hit : response.hits()) {
    absl::PrintF("%s#%d  [%s]  %s", hit.repo(), hit.number(), IssueStateName(hit.state()),
                 hit.title());
    if (!hit.transferred_to().empty()) {
      absl::PrintF("  [moved to %s]", hit.transferred_to());
    } else if (hit.deleted()) {
      absl::PrintF("  [deleted]");
    }
    if (hit.score() > 0) absl::PrintF("  (score %.2f)", hit.score());
    absl::PrintF("\n");
    if (!hit.snippet().empty()) {
      absl::PrintF("    %s\n", SnippetForTerminal(hit.snippet(), tty));
    }
    if (!hit.explain().empty()) {
      std::vector<std::string> parts;
      for (const v1::ScorePart& p : hit.explain()) {
        parts.push_back(absl::StrFormat("%s %.2f", p.part(), p.weight()));
      }
      absl::PrintF("    score %.2f = %s\n", hit.score(), absl::StrJoin(parts, " + "));
    }
  }
}

absl::Status RunSearch(const SearchCommandOptions& options) {
  if (options.limit <= 0 || options.limit > 1000) {
    return absl::InvalidArgumentError("--limit must be between 1 and 1000");
  }
  v1::SearchRequest req;
  req.set_query(options.query);
  req.set_page_size(options.limit);
  for (const std::string& facet : options.facets) req.add_facets(facet);
  req.set_facet_limit(options.facet_limit);
  req.set_explain(options.explain);
  ASSIGN_OR_RETURN(v1::SearchResponse resp, SearchVia(options.target, req));
  if (!options.json) PrintFacets(resp, false);
  PrintHits(resp, options.json);
  if (options.json) PrintFacets(resp, true);
  return absl::OkStatus();
}

absl::Status RunShow(const ShowCommandOptions& options) {
  std::string slug;
  int64_t number = 0;
  RETURN_IF_ERROR(ParseIssueRef(options.issue, &slug, &number));
  RETURN_IF_ERROR(CheckQueryTarget(options.target));
  ASSIGN_OR_RETURN(v1::IssueWithComments iwc, GetIssueVia(options.target, slug, number));
  const v1::Issue& issue = iwc.issue();
  if (options.json) {
    nlohmann::json j;
    j["repo"] = RepoFullName(issue.repo());
    j["number"] = issue.number();
    j["title"] = issue.title();
    j["state"] = IssueStateName(issue.state());
    j["author"] = issue.author();
    j["labels"] = std::vector<std::string>(issue.labels().begin(), issue.labels().end());
    j["created_at"] = FormatDate(issue.created_at());
    j["updated_at"] = FormatDate(issue.updated_at());
    j["closed_at"] = FormatDate(issue.closed_at());
    j["url"] = issue.url();
    j["deleted"] = issue.deleted();
    j["transferred_to"] = issue.transferred_to();
    j["body"] = issue.body();
    j["comments"] = nlohmann::json::array();
    for (const v1::Comment& c : iwc.comments()) {
      j["comments"].push_back({{"id", c.id()}, {"author", c.author()},
                               {"created_at", FormatDate(c.created_at())}, {"body", c.body()}});
    }
    absl::PrintF("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    return absl::OkStatus();
  }
  absl::PrintF("%s#%d  %s\n", RepoFullName(issue.repo()), issue.number(), issue.title());
  if (!issue.transferred_to().empty()) {
    absl::PrintF("gone: transferred to %s (its last indexed state follows)\n",
                 issue.transferred_to());
  } else if (issue.deleted()) {
    absl::PrintF("gone: deleted on the tracker (its last indexed state follows)\n");
  }
  absl::PrintF("state: %s%s   author: %s   created: %s   updated: %s\n",
               IssueStateName(issue.state()), issue.is_pull_request() ? " (pull request)" : "",
               issue.author(), FormatDate(issue.created_at()), FormatDate(issue.updated_at()));
  if (!issue.labels().empty()) {
    absl::PrintF("labels: %s\n", absl::StrJoin(issue.labels(), ", "));
  }
  absl::PrintF("%s\n\n%s\n", issue.url(), issue.body());
  for (const v1::Comment& c : iwc.comments()) {
    absl::PrintF("\n--- %s commented on %s\n%s\n", c.author(), FormatDate(c.created_at()), c.body());
  }
  return absl::OkStatus();
}

}  // namespace issuescope::cli

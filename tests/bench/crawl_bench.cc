// crawl_bench: the crawler benchmark driver (tests/bench/crawl_bench.sh runs it; figures in
// docs/BENCHMARKS.md). Crawls GitHub-dialect repositories of a running issuescope-simulator with
// RepoCrawlers (one thread per repository, `--parallel` at once) that share one TokenPool of
// `--tokens` tokens, into an on-disk IssueStore, and prints one JSON line per phase:
//   full        a full crawl: requests, pages, seconds, pages/s, issues+comments stored per s;
//   recrawl     (--recrawl) an unchanged incremental re-crawl from the full crawl's cursors;
//   per_issue   (--per-issue) the per-issue strategy (list issues, then GET each issue's
//               comments, as Perceval does), counting requests only.
// --no-pipeline turns off the crawl's page pipelining (CrawlerOptions.pipeline_pages), to
// measure what it gains; each line says which was used ("pipeline").
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/clock.h"
#include "common/logging.h"
#include "crawler/curl_transport.h"
#include "crawler/repo_crawler.h"
#include "crawler/tracker.h"
#include "nlohmann/json.hpp"

namespace {

using namespace issuescope;  // NOLINT: benchmark driver

struct Phase {
  int64_t requests = 0, pages = 0, issues = 0, comments = 0;
  int64_t graphql_requests = 0, graphql_points = 0, failed = 0, not_modified = 0, gone = 0;
  double seconds = 0;
};

void Print(const std::string& name, const Phase& p, int tokens, bool pipeline) {
  nlohmann::json j = {{"phase", name},          {"tokens", tokens}, {"pipeline", pipeline},
                      {"requests", p.requests}, {"pages", p.pages},
                      {"seconds", p.seconds},   {"issues_stored", p.issues},
                      {"comments_stored", p.comments},
                      {"graphql_requests", p.graphql_requests},
                      {"graphql_points", p.graphql_points},
                      {"not_modified", p.not_modified},
                      {"issues_gone", p.gone},
                      // What the tracker charges: REST requests but 304s (free on GitHub), and
                      // GraphQL points.
                      {"budget_units", p.requests - p.not_modified + p.graphql_points},
                      {"failed_crawls", p.failed}};
  if (p.seconds > 0) {
    j["pages_per_s"] = p.pages / p.seconds;
    j["items_per_s"] = (p.issues + p.comments) / p.seconds;
  }
  std::printf("%s\n", j.dump().c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"crawler benchmark driver"};
  std::string api, repos_flag, data;
  int tokens = 1, parallel = 4;
  bool recrawl = false, per_issue = false, no_pipeline = false, graphql = false, no_prs = false;
  app.add_option("--api", api, "simulator base URL")->required();
  app.add_option("--repos", repos_flag, "OWNER/NAME[,OWNER/NAME...]")->required();
  app.add_option("--data", data, "store directory (created)")->required();
  app.add_option("--tokens", tokens, "tokens in the pool");
  app.add_option("--parallel", parallel, "repositories crawled at once");
  app.add_flag("--recrawl", recrawl, "then re-crawl incrementally");
  app.add_flag("--per-issue", per_issue, "then count the per-issue strategy's requests");
  app.add_flag("--no-pipeline", no_pipeline,
               "request each page only after the previous one is stored (for comparison)");
  app.add_flag("--graphql", graphql,
               "list GitHub issues over GraphQL (CrawlerOptions::github_graphql; implies --no-prs)");
  app.add_flag("--no-prs", no_prs, "leases without pull requests");
  bool sweep_every_crawl = false;
  std::string mutate;
  app.add_flag("--sweep-every-crawl", sweep_every_crawl,
               "with --graphql: the presence sweep runs on every crawl (else once a day)");
  app.add_option("--mutate-before-recrawl", mutate,
                 "JSON body POSTed to the simulator's /_sim/mutate between the full crawl and "
                 "the re-crawl");
  CLI11_PARSE(app, argc, argv);
  if (graphql) no_prs = true;
  InitLogging("bench", "warn");
  const std::vector<std::string> repos = absl::StrSplit(repos_flag, ',', absl::SkipEmpty());

  auto store = crawler::IssueStore::Open(data);
  if (!store.ok()) {
    std::fprintf(stderr, "crawl_bench: %s\n", store.status().ToString().c_str());
    return 1;
  }
  std::vector<crawler::PoolToken> pool_tokens;
  for (int i = 0; i < tokens; ++i) {
    pool_tokens.push_back({absl::StrCat("bench-", i), absl::StrCat("bench-token-", i)});
  }
  crawler::CrawlerOptions options;
  options.pipeline_pages = !no_pipeline;
  options.github_graphql = graphql;
  if (sweep_every_crawl) options.presence_sweep_interval = absl::ZeroDuration();
  if (graphql) {
    options.graphql_pool =
        std::make_shared<crawler::TokenPool>(v1::TRACKER_GITHUB, pool_tokens, Clock::Real());
  }
  options.api_urls[v1::TRACKER_GITHUB] = api;
  options.pools[v1::TRACKER_GITHUB] =
      std::make_shared<crawler::TokenPool>(v1::TRACKER_GITHUB, pool_tokens, Clock::Real());
  crawler::CurlTransportOptions transport_options;
  transport_options.max_body_bytes = int64_t{256} << 20;
  crawler::CurlTransport transport(transport_options);

  std::map<std::string, v1::Cursor> cursors;
  std::mutex mu;
  auto run = [&](v1::CrawlMode mode) {
    Phase phase;
    std::atomic<size_t> next{0};
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int t = 0; t < parallel; ++t) {
      threads.emplace_back([&] {
        for (size_t i; (i = next.fetch_add(1)) < repos.size();) {
          const std::vector<std::string> parts = absl::StrSplit(repos[i], '/');
          v1::Lease lease;
          lease.set_repo_slug("github:" + repos[i]);
          lease.mutable_repo()->set_tracker(v1::TRACKER_GITHUB);
          lease.mutable_repo()->set_owner(parts[0]);
          lease.mutable_repo()->set_name(parts.size() > 1 ? parts[1] : "");
          lease.set_epoch(mode == v1::CRAWL_MODE_FULL ? 1 : 2);
          lease.set_mode(mode);
          lease.set_include_pull_requests(!no_prs);
          {
            std::lock_guard<std::mutex> lock(mu);
            if (cursors.count(repos[i])) *lease.mutable_cursor() = cursors[repos[i]];
          }
          crawler::RepoCrawler crawler(&transport, store->get(), Clock::Real(), options);
          auto result = crawler.Crawl(lease, [](const crawler::CrawlProgress&) {
            return absl::OkStatus();
          });
          std::lock_guard<std::mutex> lock(mu);
          if (!result.ok()) {
            std::fprintf(stderr, "crawl_bench: %s: %s\n", repos[i].c_str(),
                         result.status().ToString().c_str());
            ++phase.failed;
            continue;
          }
          if (result->cursor) cursors[repos[i]] = *result->cursor;
          const v1::CrawlCounters& c = result->counters;
          phase.requests += c.requests();
          phase.graphql_requests += c.graphql_requests();
          phase.graphql_points += c.graphql_points();
          phase.not_modified += c.not_modified();
          phase.gone += c.issues_gone();
          phase.issues += c.issues_stored();
          phase.comments += c.comments_stored();
        }
      });
    }
    for (std::thread& t : threads) t.join();
    phase.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // Every request of a crawl is a page (or the repository GET).
    phase.pages = phase.requests + phase.graphql_requests;
    return phase;
  };
  Print("full", run(v1::CRAWL_MODE_FULL), tokens, !no_pipeline);
  if (recrawl && !mutate.empty()) {
    crawler::HttpRequest req;
    req.method = "POST";
    req.url = api + "/_sim/mutate";
    req.body = mutate;
    req.headers.Add("Content-Type", "application/json");
    auto resp = transport.Send(req);
    if (!resp.ok() || resp->status != 200) {
      std::fprintf(stderr, "crawl_bench: /_sim/mutate failed\n");
      return 1;
    }
    std::printf("{\"phase\": \"mutate\", \"result\": %s}\n", resp->body.c_str());
  }
  if (recrawl) Print("recrawl", run(v1::CRAWL_MODE_INCREMENTAL), tokens, !no_pipeline);
  if (per_issue) {
    // Perceval's strategy: every issue page, then every issue's comment pages.
    auto tracker = crawler::MakeTracker(v1::TRACKER_GITHUB);
    Phase phase;
    const auto start = std::chrono::steady_clock::now();
    for (const std::string& repo : repos) {
      const std::vector<std::string> parts = absl::StrSplit(repo, '/');
      crawler::TrackerRepo where{api, parts[0], parts.size() > 1 ? parts[1] : ""};
      v1::RepositoryRef ref;
      std::optional<std::string> url = (*tracker)->IssuesUrl(where, std::nullopt, 100);
      std::vector<v1::Issue> issues;
      auto get = [&](const std::string& u) -> absl::StatusOr<crawler::HttpResponse> {
        crawler::HttpRequest req;
        req.url = u;
        (*tracker)->Authorize("bench-token-0", &req);
        ++phase.requests;
        return transport.Send(req);
      };
      while (url) {
        auto resp = get(*url);
        if (!resp.ok() || resp->status != 200) break;
        auto page = (*tracker)->ParseIssues(resp->body, ref, nullptr);
        if (page.ok()) issues.insert(issues.end(), page->begin(), page->end());
        url = (*tracker)->NextPageUrl(*url, *resp);
      }
      for (const v1::Issue& issue : issues) {
        std::optional<std::string> c = absl::StrCat(api, "/repos/", repo, "/issues/",
                                                    issue.number(), "/comments?per_page=100");
        while (c) {
          auto resp = get(*c);
          if (!resp.ok() || resp->status != 200) break;
          c = (*tracker)->NextPageUrl(*c, *resp);
        }
      }
    }
    phase.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    phase.pages = phase.requests;
    Print("per_issue", phase, 1, false);
  }
  return 0;
}

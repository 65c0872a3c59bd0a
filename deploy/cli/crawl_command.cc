#include "deploy/cli/crawl_command.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/index_schema.h"
#include "common/logging.h"
#include "common/repo_slug.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "coordinator/coordinator_core.h"
#include "crawler/curl_transport.h"
#include "crawler/github_client.h"
#include "crawler/issue_store.h"
#include "crawler/repo_crawler.h"
#include "crawler/token_pool.h"
#include "deploy/cli/progress.h"
#include "indexer/index_writer.h"
#include "indexer/taxonomy_tagger.h"
#include "spdlog/spdlog.h"

namespace issuescope::cli {
namespace {

constexpr char kLocalWorker[] = "local";

// ProbeApi asks the tracker for the token's rate budget (GET /rate_limit, which GitHub does not
// count against the budget), so an unreachable URL is reported at once instead of after the
// crawler's retries, and the user sees the budget before the crawl starts.
absl::Status ProbeApi(crawler::HttpTransport& transport, const std::string& api_url,
                      const std::string& token) {
  crawler::HttpRequest req;
  req.method = "GET";
  req.url = api_url + "/rate_limit";
  req.timeout = absl::Seconds(10);
  req.headers.Add("Accept", "application/vnd.github+json");
  if (!token.empty()) req.headers.Add("Authorization", "Bearer " + token);
  auto resp = transport.Send(req);
  if (!resp.ok()) {
    return absl::UnavailableError(
        absl::StrCat("cannot reach API URL ", api_url, ": ", resp.status().message()));
  }
  if (resp->status == 401) {
    return absl::UnauthenticatedError(
        absl::StrCat("API URL ", api_url, " rejected the token (HTTP 401)"));
  }
  const crawler::RateLimit rate = crawler::ParseRateLimit(resp->headers);
  if (rate.remaining >= 0) {
    absl::FPrintF(stderr, "%s: rate budget %s of %s requests", api_url,
                  WithThousands(rate.remaining), WithThousands(rate.limit));
    if (rate.reset != absl::InfinitePast()) {
      absl::FPrintF(stderr, ", resets at %s",
                    absl::FormatTime("%H:%M:%S", rate.reset, absl::LocalTimeZone()));
    }
    absl::FPrintF(stderr, "\n");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int64_t> CatchUpIndex(crawler::IssueStore& store, indexer::IndexWriter& writer) {
  int64_t events = 0;
  while (true) {
    const uint64_t from = writer.Position(store.store_id());
    ASSIGN_OR_RETURN(v1::ChangeBatch batch, store.ReadChanges(from, 1000));
    if (batch.last_seq() <= from) return events;
    batch.set_store_id(store.store_id());
    RETURN_IF_ERROR(writer.Apply(batch));
    events += batch.events_size();
  }
}

absl::StatusOr<std::string> ReadToken(const std::string& var) {
  if (var.empty()) return std::string();
  const char* value = std::getenv(var.c_str());
  if (value == nullptr || value[0] == '\0') {
    return absl::InvalidArgumentError(
        absl::StrCat("environment variable ", var, " (from --token-env) is not set or empty"));
  }
  return std::string(value);
}

absl::Status EnsureDirectory(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create data directory ", dir, ": ", ec.message()));
  }
  if (access(dir.c_str(), W_OK) != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("data directory ", dir, " is not writable: ", strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status RunCrawl(const CrawlCommandOptions& options) {
  if (options.repos.empty()) return absl::InvalidArgumentError("no repository given");
  if (options.max_pages_per_lease < 0) {
    return absl::InvalidArgumentError("--max-pages-per-lease must be >= 0");
  }
  std::vector<v1::RepositoryRef> repos;
  for (const std::string& spec : options.repos) {
    ASSIGN_OR_RETURN(v1::RepositoryRef ref, ParseRepoSpec(spec));
    auto url = options.api_urls.find(ref.tracker());
    ref.set_api_url(url != options.api_urls.end() && !url->second.empty() ? url->second
                    : !options.api_url.empty() ? options.api_url
                                               : DefaultApiUrl(ref.tracker()));
    if (!absl::StartsWithIgnoreCase(ref.api_url(), "http://") &&
        !absl::StartsWithIgnoreCase(ref.api_url(), "https://")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "API URL '", Redact(ref.api_url()), "' of ", spec, " must start with http:// or https://"));
    }
    repos.push_back(ref);
  }
  ASSIGN_OR_RETURN(std::string token, ReadToken(options.token_env));
  RETURN_IF_ERROR(EnsureDirectory(options.data_dir));
  Clock* clock = Clock::Real();
  crawler::CrawlerOptions crawler_options;
  crawler_options.token = token;
  crawler_options.max_pages_per_lease = options.max_pages_per_lease;
  // The APIs named here are this crawl's own: its tokens may go there (crawler/token_binding.h).
  for (const v1::RepositoryRef& ref : repos) crawler_options.api_urls[ref.tracker()] = ref.api_url();
  for (v1::Tracker kind : {v1::TRACKER_GITHUB, v1::TRACKER_GITLAB, v1::TRACKER_GITEE}) {
    std::vector<crawler::PoolToken> tokens;
    auto specs = options.token_envs.find(kind);
    if (specs != options.token_envs.end() && !specs->second.empty()) {
      ASSIGN_OR_RETURN(tokens, crawler::TokensFromEnv(
                                   specs->second, absl::StrCat("--", TrackerName(kind), "-token-env")));
    } else if (!token.empty()) {
      tokens.push_back({"default", token});
    }
    crawler::TokenPoolOptions pool_options;
    pool_options.secondary_backoff = options.secondary_backoff;
    if (kind == v1::TRACKER_GITEE) pool_options.assumed_limit = options.gitee_budget;
    crawler_options.pools[kind] =
        std::make_shared<crawler::TokenPool>(kind, std::move(tokens), clock, pool_options);
  }

  coordinator::CoordinatorOptions coord_options;
  ASSIGN_OR_RETURN(auto coord, coordinator::CoordinatorCore::Open(
                                   options.data_dir + "/coordinator", coord_options, clock));
  ASSIGN_OR_RETURN(auto store, crawler::IssueStore::Open(options.data_dir + "/store"));
  // Issues are tagged with the built-in taxonomy (llm-dl/1) and model as they are indexed;
  // `issuescope reindex --taxonomy FILE --model M` re-tags with others.
  ASSIGN_OR_RETURN(std::unique_ptr<indexer::TaxonomyTagger> tagger,
                   indexer::TaxonomyTagger::Create("", "default"));
  indexer::IndexWriterOptions writer_options;
  writer_options.tagger = tagger.get();
  ASSIGN_OR_RETURN(auto writer,
                   indexer::IndexWriter::Open(options.data_dir + "/index", writer_options));
  // Record which tagger made the tags (GetIndexStatus.tagger, `reindex`'s "nothing to do"). An
  // index this command made before it recorded one was tagged by the same built-in tagger.
  ASSIGN_OR_RETURN(std::string recorded, writer->GetMetadata(index::kTaggerMetadataKey));
  if (recorded.empty()) {
    RETURN_IF_ERROR(writer->CommitMetadata({{index::kTaggerMetadataKey, tagger->Fingerprint()}}));
  } else if (recorded != tagger->Fingerprint()) {
    spdlog::warn("the index was tagged by '{}'; issues crawled now are tagged by the built-in '{}' "
                 "until `issuescope reindex` re-tags them all with one taxonomy",
                 recorded, tagger->Fingerprint());
  }

  crawler::CurlTransport transport;
  for (const v1::RepositoryRef& ref : repos) {
    if (ref.tracker() != v1::TRACKER_GITHUB) continue;  // only GitHub has a free /rate_limit
    crawler::TokenPool& pool = *crawler_options.pools[v1::TRACKER_GITHUB];
    ASSIGN_OR_RETURN(crawler::TokenPool::Lease lease, pool.Acquire());
    const absl::Status probed = ProbeApi(transport, ref.api_url(), lease.token);
    pool.Release(lease, crawler::RateLimit{}, crawler::TokenOutcome::kOk);
    RETURN_IF_ERROR(probed);
    break;
  }

  v1::RegisterWorkerRequest reg;
  reg.set_worker_id(kLocalWorker);
  reg.set_store_address("in-process");
  reg.set_store_id(store->store_id());
  reg.set_capacity(options.parallel);
  RETURN_IF_ERROR(coord->RegisterWorker(reg).status());

  v1::AddRepositoriesRequest add;
  std::vector<std::string> slugs;
  for (const v1::RepositoryRef& ref : repos) {
    v1::RepositorySpec* spec = add.add_repositories();
    *spec->mutable_repo() = ref;
    spec->set_include_pull_requests(options.include_pull_requests);
    slugs.push_back(RepoSlug(ref));
  }
  RETURN_IF_ERROR(coord->AddRepositories(add).status());
  v1::TriggerCrawlRequest trigger;
  for (const std::string& slug : slugs) trigger.add_repo_slugs(slug);
  trigger.set_mode(options.full ? v1::CRAWL_MODE_FULL : v1::CRAWL_MODE_INCREMENTAL);
  RETURN_IF_ERROR(coord->TriggerCrawl(trigger).status());

  ProgressBoard board(stderr, isatty(STDERR_FILENO) != 0);
  for (const std::string& slug : slugs) board.Update(slug, RepoLine{});

  absl::Mutex mu;
  std::vector<v1::LeaseRef> held;  // guarded by mu
  std::atomic<int> running{0};
  std::atomic<bool> finished{false};
  std::vector<std::thread> threads;
  std::vector<std::string> failures;  // guarded by mu
  // Repositories still to be leased: every named one, and paused crawls again. Guarded by mu.
  std::set<std::string> pending(slugs.begin(), slugs.end());

  // Heartbeats keep long crawls' leases alive.
  std::thread heartbeat([&] {
    while (!finished.load()) {
      v1::HeartbeatRequest hb;
      hb.set_worker_id(kLocalWorker);
      {
        absl::MutexLock lock(&mu);
        for (const v1::LeaseRef& l : held) *hb.add_held() = l;
      }
      for (const auto& [kind, pool] : crawler_options.pools) {
        for (v1::TokenBudget& b : pool->Budgets()) *hb.add_budgets() = std::move(b);
      }
      (void)coord->Heartbeat(hb);
      board.Render(clock->Now());
      for (int i = 0; i < 10 && !finished.load(); ++i) absl::SleepFor(absl::Milliseconds(100));
    }
  });

  auto crawl_one = [&](v1::Lease lease) {
    crawler::RepoCrawler repo_crawler(&transport, store.get(), clock, crawler_options);
    RepoLine line;
    line.state = "crawling";
    line.started = clock->Now();
    board.Update(lease.repo_slug(), line);
    v1::LeaseRef ref;
    ref.set_repo(lease.repo_slug());
    ref.set_epoch(lease.epoch());
    auto on_progress = [&](const crawler::CrawlProgress& p) -> absl::Status {
      v1::ReportProgressRequest rep;
      rep.set_worker_id(kLocalWorker);
      *rep.mutable_lease() = ref;
      *rep.mutable_counters() = p.counters;
      if (p.cursor.has_value()) *rep.mutable_cursor() = *p.cursor;
      rep.set_issues_estimated(p.issues_estimated);
      rep.set_rate_remaining(p.rate_remaining);
      if (p.rate_reset != absl::InfinitePast()) *rep.mutable_rate_reset() = ToProto(p.rate_reset);
      rep.set_done(p.done);
      line.counters = p.counters;
      line.issues_estimated = p.issues_estimated;
      line.rate_remaining = p.rate_remaining;
      line.rate_reset = p.rate_reset;
      board.Update(lease.repo_slug(), line);
      return coord->ReportProgress(rep).status();
    };
    v1::CrawlCounters counters;
    absl::StatusOr<crawler::CrawlProgress> result =
        repo_crawler.Crawl(lease, on_progress, &counters);
    line.finished = clock->Now();
    if (result.ok() && result->paused) {
      line.state = "paused";
      line.counters = result->counters;
      absl::MutexLock lock(&mu);
      pending.insert(lease.repo_slug());  // the coordinator grants it again; continue there
    } else if (result.ok()) {
      line.state = "done";
      line.counters = result->counters;
    } else {
      line.state = "failed";
      line.error = std::string(result.status().message());
      line.counters = counters;  // every request made, also those after the last report
      v1::ReportProgressRequest rep;
      rep.set_worker_id(kLocalWorker);
      *rep.mutable_lease() = ref;
      *rep.mutable_counters() = counters;
      rep.set_error(line.error);
      (void)coord->ReportProgress(rep);
      absl::MutexLock lock(&mu);
      failures.push_back(absl::StrCat(lease.repo_slug(), ": ", line.error));
    }
    board.Update(lease.repo_slug(), line);
    v1::ReleaseLeaseRequest release;
    release.set_worker_id(kLocalWorker);
    *release.mutable_lease() = ref;
    (void)coord->ReleaseLease(release);
    absl::MutexLock lock(&mu);
    held.erase(std::remove_if(held.begin(), held.end(),
                              [&](const v1::LeaseRef& l) { return l.repo() == ref.repo(); }),
               held.end());
    running.fetch_sub(1);
  };

  const absl::Time start = clock->Now();
  // Hand out leases until every named repository has been crawled once. Whatever happens, the
  // crawl threads and the heartbeat thread are joined before returning.
  auto hand_out = [&]() -> absl::Status {
    while (true) {
      const int free_slots = options.parallel - running.load();
      bool any_pending = false;
      {
        absl::MutexLock lock(&mu);
        any_pending = !pending.empty();
      }
      if (free_slots > 0 && any_pending) {
        v1::AcquireLeasesRequest acq;
        acq.set_worker_id(kLocalWorker);
        acq.set_max_leases(free_slots);
        absl::StatusOr<v1::AcquireLeasesResponse> leases = coord->AcquireLeases(acq);
        if (!leases.ok() && (leases.status().code() == absl::StatusCode::kFailedPrecondition ||
                             leases.status().code() == absl::StatusCode::kNotFound)) {
          // Declared dead (the process was suspended past the worker timeout): register again.
          RETURN_IF_ERROR(coord->RegisterWorker(reg).status());
          continue;
        }
        RETURN_IF_ERROR(leases.status());
        for (const v1::Lease& lease : leases->leases()) {
          running.fetch_add(1);
          {
            absl::MutexLock lock(&mu);
            pending.erase(lease.repo_slug());
            v1::LeaseRef ref;
            ref.set_repo(lease.repo_slug());
            ref.set_epoch(lease.epoch());
            held.push_back(ref);
          }
          threads.emplace_back(crawl_one, lease);
        }
      }
      {
        absl::MutexLock lock(&mu);
        if (pending.empty() && running.load() == 0) return absl::OkStatus();
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
  };
  const absl::Status handed_out = hand_out();
  for (std::thread& t : threads) t.join();
  finished.store(true);
  heartbeat.join();
  RETURN_IF_ERROR(handed_out);
  board.Finish(clock->Now());

  ASSIGN_OR_RETURN(int64_t indexed, CatchUpIndex(*store, *writer));
  const v1::StoreInfo info = store->Info();
  int64_t requests = 0;
  for (const auto& [slug, line] : board.Lines()) requests += line.counters.requests();
  absl::PrintF(
      "crawled %d repositories in %.1fs: %s requests; store holds %s issues and %s comments; "
      "index holds %s documents (%s changes indexed now)\n",
      static_cast<int>(slugs.size()), absl::ToDoubleSeconds(clock->Now() - start),
      WithThousands(requests), WithThousands(info.issues()), WithThousands(info.comments()),
      WithThousands(writer->DocumentCount()), WithThousands(indexed));
  for (const auto& [kind, pool] : crawler_options.pools) {
    for (const crawler::TokenStatus& t : pool->Snapshot()) {
      if (t.requests == 0) continue;
      absl::FPrintF(stderr, "%s token %s (%s): %d requests, budget %s of %s", TrackerName(kind),
                    t.fingerprint, t.account, t.requests,
                    t.remaining < 0 ? std::string("?") : WithThousands(t.remaining),
                    t.limit < 0 ? std::string("?") : WithThousands(t.limit));
      if (t.reset != absl::InfinitePast()) {
        absl::FPrintF(stderr, ", resets at %s",
                      absl::FormatTime("%H:%M:%S", t.reset, absl::LocalTimeZone()));
      }
      absl::FPrintF(stderr, "\n");
    }
  }
  if (!failures.empty()) {
    std::string all;
    for (const std::string& f : failures) absl::StrAppend(&all, all.empty() ? "" : "; ", f);
    return absl::UnavailableError(absl::StrCat(failures.size(), " repositories failed: ", all));
  }
  return absl::OkStatus();
}

}  // namespace issuescope::cli

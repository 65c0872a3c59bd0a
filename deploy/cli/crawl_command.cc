#include "crawl_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <map>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/env_token.h"
#include "common/index_schema.h"
#include "common/logging.h"
#include "common/repo_slug.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "coordinator/coordinator_core.h"
#include "coordinator/coordinator_service.h"
#include "coordinator/request_validation.h"
#include "crawler/curl_transport.h"
#include "crawler/github_parse.h"
#include "crawler/issue_store.h"
#include "crawler/repo_crawler.h"
#include "crawler/token_pool.h"
#include "crawler/worker.h"
#include "progress.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "indexer/change_log.h"
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

// BoardObserver shows the worker's crawls on the progress board and says when every named
// repository has ended a crawl (done or failed; a paused one continues under its next lease).
class BoardObserver final : public crawler::CrawlObserver {
 public:
  BoardObserver(ProgressBoard* board, Clock* clock, const std::vector<std::string>& slugs)
      : board_(board), clock_(clock), waiting_(slugs.begin(), slugs.end()) {}

  void Started(const v1::Lease& lease) override {
    absl::MutexLock lock(&mu_);
    RepoLine& line = lines_[lease.repo_slug()];
    line = RepoLine{};
    line.state = "crawling";
    line.started = clock_->Now();
    board_->Update(lease.repo_slug(), line);
  }
  void Progress(const v1::Lease& lease, const crawler::CrawlProgress& p) override {
    absl::MutexLock lock(&mu_);
    RepoLine& line = lines_[lease.repo_slug()];
    line.counters = p.counters;
    line.issues_estimated = p.issues_estimated;
    line.rate_remaining = p.rate_remaining;
    line.rate_reset = p.rate_reset;
    board_->Update(lease.repo_slug(), line);
  }
  void Ended(const v1::Lease& lease, crawler::CrawlOutcome outcome,
             const v1::CrawlCounters& counters, absl::string_view error) override {
    absl::MutexLock lock(&mu_);
    RepoLine& line = lines_[lease.repo_slug()];
    line.finished = clock_->Now();
    line.counters = counters;
    requests_ += counters.requests();
    switch (outcome) {
      case crawler::CrawlOutcome::kDone:
        line.state = "done";
        waiting_.erase(lease.repo_slug());
        break;
      case crawler::CrawlOutcome::kPaused:
        line.state = "paused";
        break;
      case crawler::CrawlOutcome::kFailed:
        line.state = "failed";
        line.error = std::string(error);
        if (waiting_.erase(lease.repo_slug()) > 0) {
          failures_.push_back(absl::StrCat(lease.repo_slug(), ": ", error));
        }
        break;
      case crawler::CrawlOutcome::kFenced:
      case crawler::CrawlOutcome::kStopped:
        line.state = "interrupted";  // the coordinator grants the repository again
        line.error = std::string(error);
        break;
    }
    board_->Update(lease.repo_slug(), line);
  }

  bool AllEnded() const {
    absl::MutexLock lock(&mu_);
    return waiting_.empty();
  }
  // TotalRequests counts the requests of every ended crawl (all leases of a paused one).
  int64_t TotalRequests() const {
    absl::MutexLock lock(&mu_);
    return requests_;
  }
  std::vector<std::string> Failures() const {
    absl::MutexLock lock(&mu_);
    return failures_;
  }

 private:
  ProgressBoard* board_;
  Clock* clock_;
  mutable absl::Mutex mu_;
  std::map<std::string, RepoLine> lines_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> waiting_ ABSL_GUARDED_BY(mu_);  // named repositories not yet ended
  std::vector<std::string> failures_ ABSL_GUARDED_BY(mu_);
  int64_t requests_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace


absl::StatusOr<int64_t> CatchUpIndex(crawler::IssueStore& store, indexer::IndexWriter& writer) {
  const std::string id = store.store_id();
  std::unique_ptr<indexer::ChangeSource> log = indexer::StoreLogSource(
      [&store](uint64_t from, int max) { return store.ReadChanges(from, max); },
      writer.Position(id), store.last_seq(), id);
  int64_t applied = 0;
  RETURN_IF_ERROR(indexer::DrainChangeLog(*log, id, writer, nullptr, &applied));
  return applied;
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

namespace {

// ResolveRepositories parses the repositories named and gives each its API URL (per tracker,
// else --api-url, else the tracker's default); INVALID_ARGUMENT naming a bad one.
absl::StatusOr<std::vector<v1::RepositoryRef>> ResolveRepositories(
    const CrawlCommandOptions& options) {
  if (options.repos.empty()) return absl::InvalidArgumentError("no repository given");
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
  return repos;
}

// CrawlerOptionsFor is the crawl's options: the APIs named (its tokens may go there,
// crawler/token_binding.h) and one token pool per tracker (--TRACKER-token-env, else the
// --token-env `token`).
absl::StatusOr<crawler::CrawlerOptions> CrawlerOptionsFor(const CrawlCommandOptions& options,
                                                         const std::vector<v1::RepositoryRef>& repos,
                                                         const std::string& token, Clock* clock) {
  crawler::CrawlerOptions crawler_options;
  crawler_options.token = token;
  crawler_options.max_pages_per_lease = options.max_pages_per_lease;
  crawler_options.github_graphql = options.graphql;
  crawler_options.presence_sweep_budget = options.presence_sweep_budget;
  crawler_options.presence_sweep_interval = options.presence_sweep_h < 0
                                                ? absl::InfiniteDuration()
                                                : absl::Hours(options.presence_sweep_h);
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
    if (kind == v1::TRACKER_GITHUB && options.graphql && crawler::HasSecrets(tokens)) {
      // The same tokens' GraphQL budget (points), apart from their REST budget.
      crawler_options.graphql_pool =
          std::make_shared<crawler::TokenPool>(kind, tokens, clock, pool_options);
    }
    crawler_options.pools[kind] =
        std::make_shared<crawler::TokenPool>(kind, std::move(tokens), clock, pool_options);
  }
  return crawler_options;
}

// TaggedIndex is the data directory's index with the tagger that tags what is indexed now.
struct TaggedIndex {
  std::unique_ptr<indexer::TaxonomyTagger> tagger;
  std::unique_ptr<indexer::IndexWriter> writer;
};

// OpenTaggedIndex opens DATA/index with the built-in taxonomy (llm-dl/1) and model, and records
// which tagger made the tags (GetIndexStatus.tagger, `reindex`'s "nothing to do"); `issuescope
// reindex --taxonomy FILE --model M` re-tags with others.
absl::StatusOr<TaggedIndex> OpenTaggedIndex(const std::string& data_dir) {
  TaggedIndex tagged;
  ASSIGN_OR_RETURN(tagged.tagger, indexer::TaxonomyTagger::Create("", "default"));
  indexer::IndexWriterOptions writer_options;
  writer_options.tagger = tagged.tagger.get();
  ASSIGN_OR_RETURN(tagged.writer, indexer::IndexWriter::Open(data_dir + "/index", writer_options));
  // An index this command made before it recorded a tagger was tagged by the same built-in one.
  ASSIGN_OR_RETURN(std::string recorded, tagged.writer->GetMetadata(index::kTaggerMetadataKey));
  const std::string fingerprint = tagged.tagger->Fingerprint();
  if (recorded.empty()) {
    RETURN_IF_ERROR(tagged.writer->CommitMetadata({{index::kTaggerMetadataKey, fingerprint}}));
  } else if (recorded != fingerprint) {
    spdlog::warn("the index was tagged by '{}'; issues crawled now are tagged by the built-in '{}' "
                 "until `issuescope reindex` re-tags them all with one taxonomy",
                 recorded, fingerprint);
  }
  return tagged;
}

// ProbeGithubApi checks the first GitHub API named with its free /rate_limit (ProbeApi), with a
// token from the crawl's GitHub pool.
absl::Status ProbeGithubApi(crawler::HttpTransport& transport,
                            const std::vector<v1::RepositoryRef>& repos,
                            crawler::TokenPool& pool) {
  for (const v1::RepositoryRef& ref : repos) {
    if (ref.tracker() != v1::TRACKER_GITHUB) continue;  // only GitHub has a free /rate_limit
    ASSIGN_OR_RETURN(crawler::TokenPool::Lease lease, pool.Acquire());
    const absl::Status probed = ProbeApi(transport, ref.api_url(), lease.token);
    pool.Release(lease, crawler::RateLimit{}, crawler::TokenOutcome::kOk);
    return probed;
  }
  return absl::OkStatus();
}

// ScheduleCrawl adds the repositories to the coordinator's catalog and triggers their crawl
// (full with --full); returns their slugs.
absl::StatusOr<std::vector<std::string>> ScheduleCrawl(coordinator::CoordinatorCore& coord,
                                                       const std::vector<v1::RepositoryRef>& repos,
                                                       const CrawlCommandOptions& options) {
  v1::AddRepositoriesRequest add;
  std::vector<std::string> slugs;
  for (const v1::RepositoryRef& ref : repos) {
    v1::RepositorySpec* spec = add.add_repositories();
    *spec->mutable_repo() = ref;
    spec->set_include_pull_requests(options.include_pull_requests);
    slugs.push_back(RepoSlug(ref));
  }
  RETURN_IF_ERROR(coord.AddRepositories(add).status());
  v1::TriggerCrawlRequest trigger;
  for (const std::string& slug : slugs) trigger.add_repo_slugs(slug);
  trigger.set_mode(options.full ? v1::CRAWL_MODE_FULL : v1::CRAWL_MODE_INCREMENTAL);
  RETURN_IF_ERROR(coord.TriggerCrawl(trigger).status());
  return slugs;
}

// PrintTokenUse prints each token's requests and last known budget (never the token itself).
void PrintTokenUse(const crawler::CrawlerOptions& crawler_options) {
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
}

}  // namespace

absl::Status RunCrawl(const CrawlCommandOptions& options) {
  if (options.max_pages_per_lease < 0) {
    return absl::InvalidArgumentError("--max-pages-per-lease must be >= 0");
  }
  ASSIGN_OR_RETURN(std::vector<v1::RepositoryRef> repos, ResolveRepositories(options));
  ASSIGN_OR_RETURN(std::string token, TokenFromEnvironment(options.token_env, "--token-env"));
  RETURN_IF_ERROR(EnsureDirectory(options.data_dir));
  Clock* clock = Clock::Real();
  ASSIGN_OR_RETURN(crawler::CrawlerOptions crawler_options,
                   CrawlerOptionsFor(options, repos, token, clock));
  coordinator::CoordinatorOptions coord_options;
  ASSIGN_OR_RETURN(auto coord, coordinator::CoordinatorCore::Open(
                                   options.data_dir + "/coordinator", coord_options, clock));
  ASSIGN_OR_RETURN(auto store, crawler::IssueStore::Open(options.data_dir + "/store"));
  ASSIGN_OR_RETURN(TaggedIndex index, OpenTaggedIndex(options.data_dir));
  crawler::CurlTransport transport;
  RETURN_IF_ERROR(ProbeGithubApi(transport, repos, *crawler_options.pools[v1::TRACKER_GITHUB]));

  // The admin steps go to the core directly; the crawl is the real CrawlerWorker, talking to
  // the real coordinator service over an in-process channel (the lease protocol the cluster
  // runs, with no second copy of it here).
  ASSIGN_OR_RETURN(std::vector<std::string> slugs, ScheduleCrawl(*coord, repos, options));
  coordinator::CoordinatorService service(coord.get(), coordinator::AccessOptions{});
  grpc::ServerBuilder builder;
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr) return absl::InternalError("cannot start the in-process coordinator");

  ProgressBoard board(stderr, isatty(STDERR_FILENO) != 0);
  for (const std::string& slug : slugs) board.Update(slug, RepoLine{});
  BoardObserver observer(&board, clock, slugs);
  crawler::WorkerOptions worker_options;
  worker_options.worker_id = kLocalWorker;
  worker_options.store_address = coordinator::kInProcessStoreAddress;
  worker_options.capacity = options.parallel;
  worker_options.crawler = crawler_options;
  worker_options.poll_interval = absl::Milliseconds(50);
  worker_options.default_heartbeat_interval = absl::Seconds(1);
  worker_options.observer = &observer;
  crawler::CrawlerWorker worker(worker_options, server->InProcessChannel(grpc::ChannelArguments()),
                                &transport, store.get(), clock);
  const absl::Time start = clock->Now();
  RETURN_IF_ERROR(worker.Start());
  // Until every named repository has been crawled once (a paused crawl continues under its
  // next lease), redrawing the board about once a second.
  absl::Status stopped_early;
  for (int tick = 0; !observer.AllEnded(); ++tick) {
    if (absl::Status fatal = worker.fatal_error(); !fatal.ok()) {
      stopped_early = fatal;
      break;
    }
    if (tick % 20 == 0) board.Render(clock->Now());
    absl::SleepFor(absl::Milliseconds(50));
  }
  worker.Stop();
  server->Shutdown();
  RETURN_IF_ERROR(stopped_early);
  board.Finish(clock->Now());

  ASSIGN_OR_RETURN(int64_t indexed, CatchUpIndex(*store, *index.writer));
  const v1::StoreInfo info = store->Info();
  absl::PrintF(
      "crawled %d repositories in %.1fs: %s requests; store holds %s issues and %s comments; "
      "index holds %s documents (%s changes indexed now)\n",
      static_cast<int>(slugs.size()), absl::ToDoubleSeconds(clock->Now() - start),
      WithThousands(observer.TotalRequests()), WithThousands(info.issues()),
      WithThousands(info.comments()), WithThousands(index.writer->DocumentCount()),
      WithThousands(indexed));
  PrintTokenUse(crawler_options);
  const std::vector<std::string> failures = observer.Failures();
  if (!failures.empty()) {
    std::string all;
    for (const std::string& f : failures) absl::StrAppend(&all, all.empty() ? "" : "; ", f);
    return absl::UnavailableError(absl::StrCat(failures.size(), " repositories failed: ", all));
  }
  return absl::OkStatus();
}

}  // namespace issuescope::cli

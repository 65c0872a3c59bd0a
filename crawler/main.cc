// issuescope-crawler: one crawler worker process. Opens its IssueStore, serves it over gRPC
// (with health checking and reflection), registers with the coordinator and crawls the leases it
// is given. SIGTERM/SIGINT leave gracefully: LeaveWorker, no new leases, running crawls finish
// within --drain-timeout-s (then they are cancelled and their leases released), exit 0. When the
// coordinator drains the worker (`issuescope drain`), it exits 0 once it holds no lease. Either
// way the store is served until the coordinator releases the worker, once the indexers have
// read its feed (at most --drain-feed-wait-s). Bad
// flags or an unusable data directory: one line on stderr, exit code 2.
//
// --tls-ca FILE talks to the coordinator over TLS, trusting that PEM CA (or self-signed
// certificate); without it the coordinator channel is plaintext. --tls-cert/--tls-key serve the
// store over TLS (--tls-client-ca: only to clients with a certificate that CA signed).
// --advertise-address HOST:PORT is the store address registered with the coordinator (what the
// indexer dials); by default the --listen host with the bound port, or for a wildcard listen
// host just ":PORT", completed by the coordinator with the host the worker connects from.
//
// Trackers: --github-api/--gitlab-api/--gitee-api set the API base URL used for repositories
// whose catalog entry names none; --token-env names the environment variable of the token for
// every tracker, --github-token-env/--gitlab-token-env/--gitee-token-env one tracker's own pool
// of tokens (repeatable, "[ACCOUNT=]ENVVAR", each variable a comma-separated token list; see
// crawler/token_pool.h). --gitee-budget counts Gitee's unannounced budget per token and hour.
// Bounds: --request-timeout-s, --max-body-mb, --max-pages-per-lease.
#include <signal.h>
#include <time.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include <map>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/env_token.h"
#include "common/grpc_server.h"
#include "common/grpc_channel.h"
#include "common/logging.h"
#include "common/repo_slug.h"
#include "common/subprocess.h"
#include "common/tls.h"
#include "crawler/curl_transport.h"
#include "crawler/issue_store.h"
#include "crawler/store_service.h"
#include "crawler/token_pool.h"
#include "crawler/worker.h"
#include "grpcpp/grpcpp.h"

namespace {

int Fail(const std::string& message) {
  std::cerr << "issuescope-crawler: " << message << std::endl;
  return 2;
}

bool ValidApiUrl(const std::string& url) {
  return url.empty() || url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0;
}

bool ValidLevel(const std::string& level) {
  for (const char* l : {"trace", "debug", "info", "warn", "warning", "error", "critical", "off"}) {
    if (level == l) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace issuescope;
  // Block the stop signals before any thread exists; the main thread waits for them below.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  CLI::App app{"issuescope crawler worker"};
  std::string id = "worker-0", listen = "127.0.0.1:50052", port_file, data_dir, coordinator;
  std::string token_env, log_level = "info";
  int capacity = 2;
  int max_pages_per_lease = 50;
  int request_timeout_s = 60;
  int max_body_mb = 64;
  std::map<v1::Tracker, std::string> api_urls;
  std::map<v1::Tracker, std::vector<std::string>> token_envs;
  int64_t gitee_budget = 0;
  int secondary_backoff_s = 60;
  int drain_timeout_s = 30;
  int drain_feed_wait_s = 600;
  std::string cluster_token_env, advertise_address;
  ServerTlsFiles store_tls;
  ClientTlsFiles coordinator_tls{"", "", "", "--tls-ca", "--coordinator-tls-cert",
                                 "--coordinator-tls-key"};
  app.add_option("--id", id, "worker id ([A-Za-z0-9._-]{1,64})");
  app.add_option("--listen", listen,
                 "host:port to serve the IssueStore on (port 0 picks a free one; a second "
                 "worker on one host needs its own)")
      ->capture_default_str();
  app.add_option("--port-file", port_file, "file to write the bound port to");
  app.add_option("--data", data_dir, "directory of the worker's RocksDB store")->required();
  app.add_option("--coordinator", coordinator, "coordinator host:port")->required();
  app.add_option("--capacity", capacity, "leases crawled at once");
  app.add_option("--token-env", token_env,
                 "name of an environment variable holding the tracker token");
  app.add_option("--github-api", api_urls[v1::TRACKER_GITHUB],
                 "GitHub API base URL for repositories that name none (default: public API)");
  app.add_option("--gitlab-api", api_urls[v1::TRACKER_GITLAB],
                 "GitLab v4 API base URL, e.g. https://gitlab.com/api/v4");
  app.add_option("--gitee-api", api_urls[v1::TRACKER_GITEE],
                 "Gitee v5 API base URL, e.g. https://gitee.com/api/v5");
  app.add_option("--github-token-env", token_envs[v1::TRACKER_GITHUB],
                 "[ACCOUNT=]ENVVAR holding GitHub token(s), comma-separated, each optionally "
                 "ACCOUNT=TOKEN; repeatable: all form one pool (default: --token-env)");
  app.add_option("--gitlab-token-env", token_envs[v1::TRACKER_GITLAB],
                 "[ACCOUNT=]ENVVAR holding GitLab token(s), as --github-token-env");
  app.add_option("--gitee-token-env", token_envs[v1::TRACKER_GITEE],
                 "[ACCOUNT=]ENVVAR holding Gitee token(s), as --github-token-env");
  app.add_option("--gitee-budget", gitee_budget,
                 "requests per token per hour to assume for Gitee, which sends no rate headers "
                 "(0: not counted)");
  app.add_option("--secondary-backoff-s", secondary_backoff_s,
                 "first bench of a token after a secondary rate limit without Retry-After");
  app.add_option("--max-pages-per-lease", max_pages_per_lease,
                 "listing pages per lease before the crawl pauses and the lease is handed out "
                 "again (0: no limit)");
  app.add_option("--request-timeout-s", request_timeout_s, "timeout of one HTTP request");
  app.add_option("--max-body-mb", max_body_mb, "largest accepted HTTP response body, in MiB");
  app.add_option("--drain-timeout-s", drain_timeout_s,
                 "on SIGTERM/SIGINT, how long running crawls may finish before they are "
                 "cancelled and their leases released");
  app.add_option("--drain-feed-wait-s", drain_feed_wait_s,
                 "when leaving or drained, how long the store is served after the crawls ended "
                 "while the indexers read its feed (the coordinator releases the worker once "
                 "they have)")
      ->check(CLI::Range(0, 86400));
  app.add_option("--tls-ca", coordinator_tls.ca,
                 "PEM file of the CA (or self-signed certificate) of a TLS coordinator");
  app.add_option("--coordinator-tls-cert", coordinator_tls.cert,
                 "PEM certificate chain presented to a coordinator that requires client "
                 "certificates (its --tls-client-ca); it must name this worker's --id");
  app.add_option("--coordinator-tls-key", coordinator_tls.key,
                 "PEM private key of --coordinator-tls-cert");
  app.add_option("--cluster-token-env", cluster_token_env,
                 "environment variable holding the coordinator's cluster token");
  app.add_option("--tls-cert", store_tls.cert,
                 "PEM certificate chain: serve the store over TLS (with --tls-key)");
  app.add_option("--tls-key", store_tls.key, "PEM private key of --tls-cert");
  app.add_option("--tls-client-ca", store_tls.client_ca,
                 "PEM CA: serve the store only to clients presenting a certificate it signed");
  app.add_option("--advertise-address", advertise_address,
                 "HOST:PORT the indexer dials for this store (default: the --listen host and "
                 "bound port; for 0.0.0.0/[::] the host the coordinator sees the worker call "
                 "from)");
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return Fail(e.what());
  }
  if (!ValidLevel(log_level)) return Fail(absl::StrCat("unknown --log-level '", log_level, "'"));
  if (capacity < 1 || capacity > 64) {
    return Fail(absl::StrCat("--capacity must be between 1 and 64, got ", capacity));
  }
  if (max_pages_per_lease < 0) {
    return Fail(absl::StrCat("--max-pages-per-lease must be >= 0, got ", max_pages_per_lease));
  }
  if (request_timeout_s < 1 || request_timeout_s > 3600) {
    return Fail(absl::StrCat("--request-timeout-s must be between 1 and 3600, got ",
                             request_timeout_s));
  }
  if (max_body_mb < 1 || max_body_mb > 4096) {
    return Fail(absl::StrCat("--max-body-mb must be between 1 and 4096, got ", max_body_mb));
  }
  for (const auto& [kind, url] : api_urls) {
    if (!ValidApiUrl(url)) {
      return Fail(absl::StrCat("--", TrackerName(kind), "-api '", url,
                               "' must start with http:// or https://"));
    }
  }
  if (drain_timeout_s < 0 || drain_timeout_s > 3600) {
    return Fail(absl::StrCat("--drain-timeout-s must be between 0 and 3600, got ",
                             drain_timeout_s));
  }
  auto store_credentials = ServerCredentialsFor(store_tls);
  if (!store_credentials.ok()) return Fail(std::string(store_credentials.status().message()));
  // Bad --advertise-address or --listen values fail before anything starts.
  auto checked_address = crawler::StoreAddressToAdvertise(listen, 1, advertise_address);
  if (!checked_address.ok()) return Fail(std::string(checked_address.status().message()));
  auto cluster_token = TokenFromEnvironment(cluster_token_env, "--cluster-token-env");
  if (!cluster_token.ok()) return Fail(std::string(cluster_token.status().message()));
  auto channel = CreateCoordinatorChannel(coordinator, coordinator_tls, *cluster_token);
  if (!channel.ok()) return Fail(std::string(channel.status().message()));
  InitLogging("crawler", log_level);

  crawler::WorkerOptions options;
  options.worker_id = id;
  options.capacity = capacity;
  options.coordinator_address = coordinator;
  options.drain_timeout = absl::Seconds(drain_timeout_s);
  options.drain_feed_wait = absl::Seconds(drain_feed_wait_s);
  options.crawler.max_pages_per_lease = max_pages_per_lease;
  options.crawler.request_timeout = absl::Seconds(request_timeout_s);
  auto token = TokenFromEnvironment(token_env, "--token-env");
  if (!token.ok()) return Fail(std::string(token.status().message()));
  options.crawler.token = std::move(*token);
  if (gitee_budget < 0 || secondary_backoff_s < 0) {
    return Fail("--gitee-budget and --secondary-backoff-s must be >= 0");
  }
  for (const auto& [kind, specs] : token_envs) {
    std::vector<crawler::PoolToken> tokens;
    if (!specs.empty()) {
      auto read = crawler::TokensFromEnv(specs, absl::StrCat("--", TrackerName(kind), "-token-env"));
      if (!read.ok()) return Fail(std::string(read.status().message()));
      tokens = *std::move(read);
    } else if (!options.crawler.token.empty()) {
      tokens.push_back({"default", options.crawler.token});
    }
    crawler::TokenPoolOptions pool_options;
    pool_options.secondary_backoff = absl::Seconds(secondary_backoff_s);
    if (kind == v1::TRACKER_GITEE) pool_options.assumed_limit = gitee_budget;
    options.crawler.pools[kind] = std::make_shared<crawler::TokenPool>(
        kind, std::move(tokens), Clock::Real(), pool_options);
  }
  for (const auto& [kind, url] : api_urls) {
    if (!url.empty()) options.crawler.api_urls[kind] = url;
  }

  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec) return Fail(absl::StrCat("cannot create data directory ", data_dir, ": ", ec.message()));
  auto store = crawler::IssueStore::Open((std::filesystem::path(data_dir) / "store").string());
  if (!store.ok()) {
    return Fail(absl::StrCat("cannot open store in ", data_dir, ": ", store.status().ToString()));
  }

  crawler::StoreService store_service(store->get());
  StandardServices standard({v1::IssueStore::service_full_name()});
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(listen, *store_credentials, &port);
  builder.RegisterService(&store_service);
  standard.Register(&builder);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) return Fail(absl::StrCat("cannot listen on ", listen));
  standard.MarkServing(server.get());
  if (!port_file.empty()) {
    absl::Status s = WritePortFile(port_file, port);
    if (!s.ok()) return Fail(absl::StrCat("cannot write --port-file: ", s.ToString()));
  }
  auto store_address = crawler::StoreAddressToAdvertise(listen, port, advertise_address);
  if (!store_address.ok()) return Fail(std::string(store_address.status().message()));
  options.store_address = *std::move(store_address);
  spdlog::info("worker {} serving store {} on port {} ({}{}), advertised as {}; coordinator {}",
               id, (*store)->store_id(), port, store_tls.enabled() ? "TLS" : "plaintext",
               store_tls.client_ca.empty() ? "" : ", client certificates required",
               options.store_address, coordinator);

  crawler::CurlTransportOptions transport_options;
  transport_options.request_timeout = absl::Seconds(request_timeout_s);
  transport_options.max_body_bytes = int64_t{max_body_mb} << 20;
  crawler::CurlTransport transport(transport_options);
  crawler::CrawlerWorker worker(options, *channel, &transport, store->get(), Clock::Real());
  absl::Status started = worker.Start();
  if (!started.ok()) return Fail(started.ToString());

  // Wait for a stop signal, or for the coordinator to drain this worker.
  for (;;) {
    const timespec poll = {0, 200 * 1000 * 1000};
    const int sig = sigtimedwait(&stop_signals, nullptr, &poll);
    if (sig > 0) {
      spdlog::info("signal {} received; leaving (drain timeout {} s)", sig, drain_timeout_s);
      const int cancelled = worker.Leave();
      if (cancelled > 0) spdlog::info("{} crawls were cancelled at the drain timeout", cancelled);
      break;
    }
    if (worker.drained()) {
      worker.Stop();
      break;
    }
    if (absl::Status fatal = worker.fatal_error(); !fatal.ok()) {
      worker.Stop();
      store_service.Shutdown();
      server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
      server->Wait();
      return Fail(std::string(fatal.message()));
    }
  }
  // The store is served until the worker's crawls ended, so followers see every change.
  store_service.Shutdown();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  server->Wait();
  spdlog::info("worker {} exited cleanly", id);
  return 0;
}

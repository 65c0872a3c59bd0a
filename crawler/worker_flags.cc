#include "worker_flags.h"

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/env_token.h"
#include "common/repo_slug.h"
#include "crawler/token_pool.h"

namespace issuescope::crawler {
namespace {

bool ValidApiUrl(const std::string& url) {
  return url.empty() || url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0;
}

bool ValidLevel(const std::string& level) {
  for (const char* l : {"trace", "debug", "info", "warn", "warning", "error", "critical", "off"}) {
    if (level == l) return true;
  }
  return false;
}

absl::Status OutOfRange(const char* flag, int64_t low, int64_t high, int64_t got) {
  return absl::InvalidArgumentError(
      absl::StrCat(flag, " must be between ", low, " and ", high, ", got ", got));
}

}  // namespace

void WorkerFlags::Register(CLI::App* app) {
  app->add_option("--id", id, "worker id ([A-Za-z0-9._-]{1,64})");
  app->add_option("--listen", listen,
                  "host:port to serve the IssueStore on (port 0 picks a free one; a second "
                  "worker on one host needs its own)")
      ->capture_default_str();
  app->add_option("--port-file", port_file, "file to write the bound port to");
  app->add_option("--data", data_dir, "directory of the worker's RocksDB store")->required();
  app->add_option("--coordinator", coordinator, "coordinator host:port")->required();
  app->add_option("--capacity", capacity, "leases crawled at once");
  app->add_option("--token-env", token_env,
                  "name of an environment variable holding the tracker token");
  app->add_option("--github-api", api_urls[v1::TRACKER_GITHUB],
                  "GitHub API base URL for repositories that name none (default: public API)");
  app->add_option("--gitlab-api", api_urls[v1::TRACKER_GITLAB],
                  "GitLab v4 API base URL, e.g. https://gitlab.com/api/v4");
  app->add_option("--gitee-api", api_urls[v1::TRACKER_GITEE],
                  "Gitee v5 API base URL, e.g. https://gitee.com/api/v5");
  app->add_option("--github-token-env", token_envs[v1::TRACKER_GITHUB],
                  "[ACCOUNT=]ENVVAR holding GitHub token(s), comma-separated, each optionally "
                  "ACCOUNT=TOKEN; repeatable: all form one pool (default: --token-env)");
  app->add_option("--gitlab-token-env", token_envs[v1::TRACKER_GITLAB],
                  "[ACCOUNT=]ENVVAR holding GitLab token(s), as --github-token-env");
  app->add_option("--gitee-token-env", token_envs[v1::TRACKER_GITEE],
                  "[ACCOUNT=]ENVVAR holding Gitee token(s), as --github-token-env");
  app->add_option("--gitee-budget", gitee_budget,
                  "requests per token per hour to assume for Gitee, which sends no rate headers "
                  "(0: not counted)");
  app->add_option("--secondary-backoff-s", secondary_backoff_s,
                  "first bench of a token after a secondary rate limit without Retry-After");
  app->add_option("--max-pages-per-lease", max_pages_per_lease,
                  "listing pages per lease before the crawl pauses and the lease is handed out "
                  "again (0: no limit)");
  app->add_flag("--graphql", graphql,
               "list GitHub issues over GraphQL (nested comments, charged to the tokens' GraphQL "
               "budget); REST confirms unchanged repositories and takes over where GraphQL is not "
               "served or spent");
  app->add_option("--presence-sweep-h", presence_sweep_h,
                  "with --graphql: hours between presence sweeps of a repository, which find "
                  "deleted and transferred issues (0: every crawl; negative: never)");
  app->add_option("--presence-sweep-budget", presence_sweep_budget,
                  "with --graphql: a due presence sweep runs when listing the numbers costs at "
                  "most this share of the GraphQL points left (else it waits)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app->add_option("--request-timeout-s", request_timeout_s, "timeout of one HTTP request");
  app->add_option("--max-body-mb", max_body_mb, "largest accepted HTTP response body, in MiB");
  app->add_option("--drain-timeout-s", drain_timeout_s,
                  "on SIGTERM/SIGINT, how long running crawls may finish before they are "
                  "cancelled and their leases released");
  app->add_option("--drain-feed-wait-s", drain_feed_wait_s,
                  "when leaving or drained, how long the store is served after the crawls ended "
                  "while the indexers read its feed (the coordinator releases the worker once "
                  "they have)")
      ->check(CLI::Range(0, 86400));
  app->add_option("--tls-ca", coordinator_tls.ca,
                  "PEM file of the CA (or self-signed certificate) of a TLS coordinator");
  app->add_option("--coordinator-tls-cert", coordinator_tls.cert,
                  "PEM certificate chain presented to a coordinator that requires client "
                  "certificates (its --tls-client-ca); it must name this worker's --id");
  app->add_option("--coordinator-tls-key", coordinator_tls.key,
                  "PEM private key of --coordinator-tls-cert");
  app->add_option("--cluster-token-env", cluster_token_env,
                  "environment variable holding the coordinator's cluster token");
  app->add_option("--tls-cert", store_tls.cert,
                  "PEM certificate chain: serve the store over TLS (with --tls-key)");
  app->add_option("--tls-key", store_tls.key, "PEM private key of --tls-cert");
  app->add_option("--tls-client-ca", store_tls.client_ca,
                  "PEM CA: serve the store only to clients presenting a certificate it signed");
  app->add_option("--advertise-address", advertise_address,
                  "HOST:PORT the indexer dials for this store (default: the --listen host and "
                  "bound port; for 0.0.0.0/[::] the host the coordinator sees the worker call "
                  "from)");
  app->add_option("--log-level", log_level, "trace, debug, info, warn, error or off");
}

absl::Status WorkerFlags::Validate() const {
  if (!ValidLevel(log_level)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown --log-level '", log_level, "'"));
  }
  if (capacity < 1 || capacity > 64) return OutOfRange("--capacity", 1, 64, capacity);
  if (max_pages_per_lease < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-pages-per-lease must be >= 0, got ", max_pages_per_lease));
  }
  if (request_timeout_s < 1 || request_timeout_s > 3600) {
    return OutOfRange("--request-timeout-s", 1, 3600, request_timeout_s);
  }
  if (max_body_mb < 1 || max_body_mb > 4096) {
    return OutOfRange("--max-body-mb", 1, 4096, max_body_mb);
  }
  for (const auto& [kind, url] : api_urls) {
    if (!ValidApiUrl(url)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", TrackerName(kind), "-api '", url, "' must start with http:// or https://"));
    }
  }
  if (drain_timeout_s < 0 || drain_timeout_s > 3600) {
    return OutOfRange("--drain-timeout-s", 0, 3600, drain_timeout_s);
  }
  if (drain_feed_wait_s < 0 || drain_feed_wait_s > 86400) {
    return OutOfRange("--drain-feed-wait-s", 0, 86400, drain_feed_wait_s);
  }
  if (gitee_budget < 0 || secondary_backoff_s < 0) {
    return absl::InvalidArgumentError("--gitee-budget and --secondary-backoff-s must be >= 0");
  }
  return absl::OkStatus();
}

absl::StatusOr<WorkerOptions> WorkerFlags::BuildOptions() const {
  WorkerOptions options;
  options.worker_id = id;
  options.capacity = capacity;
  options.coordinator_address = coordinator;
  options.drain_timeout = absl::Seconds(drain_timeout_s);
  options.drain_feed_wait = absl::Seconds(drain_feed_wait_s);
  options.crawler.max_pages_per_lease = max_pages_per_lease;
  options.crawler.github_graphql = graphql;
  options.crawler.presence_sweep_budget = presence_sweep_budget;
  options.crawler.presence_sweep_interval =
      presence_sweep_h < 0 ? absl::InfiniteDuration() : absl::Hours(presence_sweep_h);
  options.crawler.request_timeout = absl::Seconds(request_timeout_s);
  absl::StatusOr<std::string> token = TokenFromEnvironment(token_env, "--token-env");
  if (!token.ok()) return token.status();
  options.crawler.token = *std::move(token);
  for (const auto& [kind, specs] : token_envs) {
    std::vector<PoolToken> tokens;
    if (!specs.empty()) {
      auto read = TokensFromEnv(specs, absl::StrCat("--", TrackerName(kind), "-token-env"));
      if (!read.ok()) return read.status();
      tokens = *std::move(read);
    } else if (!options.crawler.token.empty()) {
      tokens.push_back({"default", options.crawler.token});
    }
    TokenPoolOptions pool_options;
    pool_options.secondary_backoff = absl::Seconds(secondary_backoff_s);
    if (kind == v1::TRACKER_GITEE) pool_options.assumed_limit = gitee_budget;
    if (kind == v1::TRACKER_GITHUB && graphql && HasSecrets(tokens)) {
      // The same tokens' GraphQL budget (points), apart from their REST budget.
      options.crawler.graphql_pool =
          std::make_shared<TokenPool>(kind, tokens, Clock::Real(), pool_options);
    }
    options.crawler.pools[kind] =
        std::make_shared<TokenPool>(kind, std::move(tokens), Clock::Real(), pool_options);
  }
  for (const auto& [kind, url] : api_urls) {
    if (!url.empty()) options.crawler.api_urls[kind] = url;
  }
  return options;
}

}  // namespace issuescope::crawler

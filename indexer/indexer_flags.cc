#include "indexer_flags.h"

#include "CLI/CLI.hpp"
#include "common/env_token.h"
#include "common/grpc_channel.h"

namespace issuescope::indexer {

void IndexerFlags::Register(CLI::App* app) {
  app->add_option("--index", index_dir, "Xapian index directory (created if missing)")
      ->required();
  auto* coordinator_opt = app->add_option("--coordinator", coordinator,
                                          "coordinator HOST:PORT to discover workers from");
  auto* store_opt =
      app->add_option("--store", stores, "store HOST:PORT to follow (repeatable)")->take_all();
  coordinator_opt->excludes(store_opt);
  app->add_option("--cluster-token-env", cluster_token_env,
                  "environment variable holding the coordinator's cluster token");
  app->add_option("--id", indexer_id,
                  "id this indexer reports its progress to the coordinator under (with client "
                  "certificates: a name its certificate holds)")
      ->capture_default_str();
  app->add_option("--tls-ca", coordinator_tls.ca,
                  "PEM file of the CA (or self-signed certificate) of a TLS coordinator")
      ->needs(coordinator_opt);
  app->add_option("--tls-cert", coordinator_tls.cert,
                  "PEM certificate chain presented to a coordinator that requires client "
                  "certificates (its --tls-client-ca)")
      ->needs(coordinator_opt);
  app->add_option("--tls-key", coordinator_tls.key, "PEM private key of --tls-cert")
      ->needs(coordinator_opt);
  app->add_option("--store-tls-ca", store_tls.ca,
                  "PEM CA (or self-signed certificate) of the stores: dial every store over TLS");
  app->add_option("--store-tls-cert", store_tls.cert,
                  "PEM certificate chain presented to stores that require a client certificate");
  app->add_option("--store-tls-key", store_tls.key, "PEM private key of --store-tls-cert");
  app->add_option("--commit-every", commit_every,
                  "group commits of up to N events (0: commit every batch)")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--commit-interval-ms,--commit-delay-ms", commit_delay_ms,
                  "with --commit-every, commit a group at the latest after MS milliseconds")
      ->check(CLI::PositiveNumber);
  app->add_option("--batch-size", batch_size,
                  "events per change-feed batch asked of each store (0: the store's default)")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--shards", shards,
                  "shards (one Xapian database and writer thread each); 1: one database")
      ->check(CLI::Range(1, 256));
  app->add_option("--keep-changesets", keep_changesets,
                  "changesets each database keeps, so read replicas (xapian-replicate, "
                  "issuescope-search --replicate-from) copy only what changed; give it when "
                  "there are replicas: with 0 (none kept) each change is a whole copy, which "
                  "fails while the indexer keeps committing")
      ->check(CLI::Range(0, 100000));
  auto* taxonomy_opt = app->add_option(
      "--taxonomy", taxonomy_file, "taxonomy TOML file (default: llm-dl/1, built in)");
  auto* model_opt = app->add_option("--model", model_file,
                                    "classifier model: default (built in, trained on real "
                                    "DL/LLM issues), none (rules and labels only) or a model file")
                        ->capture_default_str();
  app->add_flag("--no-tags", no_tags, "index without taxonomy tags")
      ->excludes(taxonomy_opt)
      ->excludes(model_opt);
  app->add_option("--retag-batch", retag_batch, "documents re-tagged per commit")
      ->check(CLI::PositiveNumber);
  app->add_option("--stats-interval", stats_interval_s, "seconds between status log lines")
      ->check(CLI::PositiveNumber);
  app->add_option("--log-level", log_level, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
}

absl::Status IndexerFlags::Validate() const {
  if (coordinator.empty() && stores.empty()) {
    return absl::InvalidArgumentError(
        "give --coordinator HOST:PORT or at least one --store HOST:PORT");
  }
  if (auto credentials = ChannelCredentialsFor(store_tls); !credentials.ok()) {
    return credentials.status();
  }
  return absl::OkStatus();
}

absl::StatusOr<IndexerDaemonOptions> IndexerFlags::DaemonOptions() const {
  IndexerDaemonOptions options;
  options.indexer_id = indexer_id;
  options.coordinator_tls = coordinator_tls;
  options.store_tls = store_tls;
  options.coordinator_address = coordinator;
  absl::StatusOr<std::string> token =
      TokenFromEnvironment(cluster_token_env, "--cluster-token-env");
  if (!token.ok()) return token.status();
  options.coordinator_token = *std::move(token);
  options.store_addresses = stores;
  options.follower.max_batch = batch_size;
  return options;
}

IndexWriterOptions IndexerFlags::WriterOptions() const {
  IndexWriterOptions options;
  options.max_pending_events = commit_every;
  options.max_commit_delay = absl::Milliseconds(commit_delay_ms);
  return options;
}

}  // namespace issuescope::indexer

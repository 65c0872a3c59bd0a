// issuescope-indexer: follows crawler workers' change feeds into a Xapian index, tagging every
// issue with the taxonomy classifier.
//
//   issuescope-indexer --index DIR (--coordinator HOST:PORT [--tls-ca FILE] | --store HOST:PORT ...)
//                      [--store-tls-ca FILE [--store-tls-cert FILE --store-tls-key FILE]]
//                      [--shards N] [--taxonomy FILE] [--model FILE] [--no-tags]
//                      [--batch-size N] [--commit-every N] [--commit-interval-ms MS]
//                      [--retag-batch N] [--stats-interval S] [--log-level info]
//
// --store-tls-ca dials every store over TLS, trusting that CA; --store-tls-cert/--store-tls-key
// is the client certificate for stores that require one (their --tls-client-ca).
// --shards N > 1 writes a sharded index (DIR/shard-NNN + DIR/issuescope.stub, one writer thread
// per shard). Tags come from the taxonomy compiled into the binary unless --taxonomy/--model
// name files; when the index's recorded tagger fingerprint differs, every stored document is
// re-tagged in the background while the feeds are followed.
//
// SIGTERM/SIGINT stop the followers, commit what is pending and exit 0. Bad flags, or an index
// that cannot be opened (e.g. locked by another indexer), print one line on stderr and exit 2.
#include <signal.h>

#include <cerrno>
#include <ctime>
#include <iostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/clock.h"
#include "common/env_token.h"
#include "common/grpc_channel.h"
#include "common/logging.h"
#include "indexer/index_writer.h"
#include "indexer/indexer_daemon.h"
#include "indexer/retagger.h"
#include "indexer/sharded_index_writer.h"
#include "indexer/taxonomy_tagger.h"

namespace {

constexpr char kProgram[] = "issuescope-indexer";

int Fail(const std::string& message) {
  std::cerr << kProgram << ": " << message << std::endl;
  return 2;
}

// LogStats writes the periodic status line: documents, each store's position and lag, and the
// re-tag progress while one runs.
void LogStats(const issuescope::indexer::ChangeSink& writer,
              const issuescope::indexer::IndexerDaemon& daemon,
              const issuescope::indexer::Retagger* retagger) {
  std::vector<std::string> stores;
  for (const auto& f : daemon.Followers()) {
    const uint64_t lag = f.store_last_seq > f.position ? f.store_last_seq - f.position : 0;
    stores.push_back(absl::StrCat(f.address, " id=", f.store_id.empty() ? "?" : f.store_id,
                                  " seq=", f.position, " lag=", lag,
                                  f.caught_up ? " caught-up" : " behind",
                                  " reconnects=", f.reconnects));
  }
  std::string retag;
  if (retagger != nullptr) {
    const issuescope::indexer::RetagProgress p = retagger->Progress();
    if (p.running) retag = absl::StrCat("; re-tagging ", p.done, "/", p.total);
  }
  spdlog::info("{} documents; {} stores: {}{}", writer.DocumentCount(), stores.size(),
               stores.empty() ? std::string("none yet") : absl::StrJoin(stores, "; "), retag);
}

}  // namespace

int main(int argc, char** argv) {
  // Signals are taken synchronously by sigtimedwait below; block them before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  CLI::App app{"issuescope indexer: follows crawler workers' change feeds into a Xapian index",
               kProgram};
  std::string index_dir;
  std::string coordinator;
  std::vector<std::string> stores;
  int commit_every = 0;
  int commit_delay_ms = 1000;
  int batch_size = 0;
  int retag_batch = 500;
  uint32_t shards = 1;
  std::string taxonomy_file;
  std::string model_file = "default";
  bool no_tags = false;
  int stats_interval_s = 10;
  std::string log_level = "info";
  app.add_option("--index", index_dir, "Xapian index directory (created if missing)")
      ->required();
  auto* coordinator_opt = app.add_option("--coordinator", coordinator,
                                         "coordinator HOST:PORT to discover workers from");
  auto* store_opt =
      app.add_option("--store", stores, "store HOST:PORT to follow (repeatable)")->take_all();
  coordinator_opt->excludes(store_opt);
  std::string cluster_token_env;
  app.add_option("--cluster-token-env", cluster_token_env,
                 "environment variable holding the coordinator's cluster token");
  issuescope::indexer::IndexerDaemonOptions daemon_options;
  issuescope::ClientTlsFiles& coordinator_tls = daemon_options.coordinator_tls;
  app.add_option("--id", daemon_options.indexer_id,
                 "id this indexer reports its progress to the coordinator under (with client "
                 "certificates: a name its certificate holds)")
      ->capture_default_str();
  app.add_option("--tls-ca", coordinator_tls.ca,
                 "PEM file of the CA (or self-signed certificate) of a TLS coordinator")
      ->needs(coordinator_opt);
  app.add_option("--tls-cert", coordinator_tls.cert,
                 "PEM certificate chain presented to a coordinator that requires client "
                 "certificates (its --tls-client-ca)")
      ->needs(coordinator_opt);
  app.add_option("--tls-key", coordinator_tls.key, "PEM private key of --tls-cert")
      ->needs(coordinator_opt);
  issuescope::ClientTlsFiles& store_tls = daemon_options.store_tls;
  app.add_option("--store-tls-ca", store_tls.ca,
                 "PEM CA (or self-signed certificate) of the stores: dial every store over TLS");
  app.add_option("--store-tls-cert", store_tls.cert,
                 "PEM certificate chain presented to stores that require a client certificate");
  app.add_option("--store-tls-key", store_tls.key, "PEM private key of --store-tls-cert");
  app.add_option("--commit-every", commit_every,
                 "group commits of up to N events (0: commit every batch)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--commit-interval-ms,--commit-delay-ms", commit_delay_ms,
                 "with --commit-every, commit a group at the latest after MS milliseconds")
      ->check(CLI::PositiveNumber);
  app.add_option("--batch-size", batch_size,
                 "events per change-feed batch asked of each store (0: the store's default)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--shards", shards,
                 "shards (one Xapian database and writer thread each); 1: one database")
      ->check(CLI::Range(1, 256));
  auto* taxonomy_opt = app.add_option(
      "--taxonomy", taxonomy_file, "taxonomy TOML file (default: llm-dl/1, built in)");
  auto* model_opt = app.add_option("--model", model_file,
                                   "classifier model: default (built in, trained on real DL/LLM "
                                   "issues), none (rules and labels only) or a model file")
                        ->capture_default_str();
  app.add_flag("--no-tags", no_tags, "index without taxonomy tags")
      ->excludes(taxonomy_opt)
      ->excludes(model_opt);
  app.add_option("--retag-batch", retag_batch, "documents re-tagged per commit")
      ->check(CLI::PositiveNumber);
  app.add_option("--stats-interval", stats_interval_s, "seconds between status log lines")
      ->check(CLI::PositiveNumber);
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return Fail(e.what());
  }
  if (coordinator.empty() && stores.empty()) {
    return Fail("give --coordinator HOST:PORT or at least one --store HOST:PORT");
  }
  if (auto credentials = issuescope::ChannelCredentialsFor(store_tls); !credentials.ok()) {
    return Fail(std::string(credentials.status().message()));
  }

  issuescope::InitLogging("indexer", log_level);
  namespace ix = issuescope::indexer;
  if (absl::Status layout = ix::CheckIndexLayout(index_dir, shards); !layout.ok()) {
    return Fail(std::string(layout.message()));
  }
  std::unique_ptr<ix::TaxonomyTagger> tagger;
  if (!no_tags) {
    auto created = ix::TaxonomyTagger::Create(taxonomy_file, model_file);
    if (!created.ok()) return Fail(std::string(created.status().message()));
    tagger = *std::move(created);
    spdlog::info("tagging with {}", tagger->Fingerprint());
  }
  ix::IndexWriterOptions writer_options;
  writer_options.max_pending_events = commit_every;
  writer_options.max_commit_delay = absl::Milliseconds(commit_delay_ms);
  writer_options.tagger = tagger.get();
  std::unique_ptr<ix::IndexWriter> single;
  std::unique_ptr<ix::ShardedIndexWriter> sharded;
  std::vector<ix::IndexWriter*> shard_writers;
  ix::ChangeSink* sink = nullptr;
  if (shards == 1) {
    auto opened = ix::IndexWriter::Open(index_dir, writer_options);
    if (!opened.ok()) return Fail(std::string(opened.status().message()));
    single = *std::move(opened);
    shard_writers.push_back(single.get());
    sink = single.get();
  } else {
    ix::ShardedIndexWriterOptions sharded_options;
    sharded_options.shards = shards;
    sharded_options.writer = writer_options;
    auto opened = ix::ShardedIndexWriter::Open(index_dir, sharded_options);
    if (!opened.ok()) return Fail(std::string(opened.status().message()));
    sharded = *std::move(opened);
    for (uint32_t i = 0; i < shards; ++i) shard_writers.push_back(sharded->shard(i));
    sink = sharded.get();
  }
  std::unique_ptr<ix::Retagger> retagger;
  if (tagger != nullptr) {
    ix::RetaggerOptions retag_options;
    retag_options.batch_size = retag_batch;
    retagger = std::make_unique<ix::Retagger>(shard_writers, tagger.get(), retag_options);
    retagger->Start();
  } else if (absl::Status marked = ix::RecordUntagged(shard_writers); !marked.ok()) {
    return Fail(std::string(marked.message()));
  }

  daemon_options.coordinator_address = coordinator;
  {
    auto token = issuescope::TokenFromEnvironment(cluster_token_env, "--cluster-token-env");
    if (!token.ok()) return Fail(std::string(token.status().message()));
    daemon_options.coordinator_token = *std::move(token);
  }
  daemon_options.store_addresses = stores;
  daemon_options.follower.max_batch = batch_size;
  ix::IndexerDaemon daemon(sink, issuescope::Clock::Real(), daemon_options);
  if (absl::Status started = daemon.Start(); !started.ok()) {
    return Fail(std::string(started.message()));
  }
  spdlog::info("indexing into {} ({} shard{}) from {}; stores over {}", index_dir, shards,
               shards == 1 ? "" : "s",
               coordinator.empty() ? absl::StrCat("stores ", absl::StrJoin(stores, ", "))
                                   : absl::StrCat("coordinator ", coordinator),
               store_tls.ca.empty() ? "plaintext" : "TLS");

  const timespec interval{stats_interval_s, 0};
  while (true) {
    siginfo_t info;
    const int signo = sigtimedwait(&signals, &info, &interval);
    if (signo == SIGINT || signo == SIGTERM) {
      spdlog::info("received signal {}; stopping", signo);
      break;
    }
    if (signo < 0 && errno != EAGAIN && errno != EINTR) {
      spdlog::error("waiting for signals failed (errno {}); stopping", errno);
      break;
    }
    LogStats(*sink, daemon, retagger.get());
  }
  if (retagger != nullptr) retagger->Stop();
  daemon.Stop();
  absl::Status flushed = sink->Flush();
  if (!flushed.ok()) {
    spdlog::error("final commit failed: {}", flushed.ToString());
    return 1;
  }
  std::vector<std::string> positions;
  for (const auto& [store_id, seq] : sink->Positions()) {
    positions.push_back(absl::StrCat(store_id, "=", seq));
  }
  spdlog::info("stopped; index committed with {} documents; positions: {}",
               sink->DocumentCount(),
               positions.empty() ? std::string("none") : absl::StrJoin(positions, ", "));
  return 0;
}

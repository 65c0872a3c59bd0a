// issuescope-indexer: follows crawler workers' change feeds into a Xapian index, tagging every
// issue with the taxonomy classifier.
//
//   issuescope-indexer --index DIR (--coordinator HOST:PORT [--tls-ca FILE] | --store HOST:PORT ...)
//                      [--store-tls-ca FILE [--store-tls-cert FILE --store-tls-key FILE]]
//                      [--shards N] [--keep-changesets N] [--taxonomy FILE] [--model FILE] [--no-tags]
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
#include "common/logging.h"
#include "common/program_main.h"
#include "indexer/index_writer.h"
#include "indexer_daemon.h"
#include "indexer_flags.h"
#include "indexer/retagger.h"
#include "indexer/sharded_index_writer.h"
#include "indexer/taxonomy_tagger.h"

namespace {

constexpr char kProgram[] = "issuescope-indexer";

int Fail(const std::string& message) { return issuescope::ExitWithError(kProgram, message); }

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
  issuescope::indexer::IndexerFlags flags;
  flags.Register(&app);
  if (std::optional<int> exit = issuescope::ParseCommandLine(app, argc, argv, kProgram)) {
    return *exit;
  }
  if (absl::Status valid = flags.Validate(); !valid.ok()) return Fail(std::string(valid.message()));
  const std::string& index_dir = flags.index_dir;
  const uint32_t shards = flags.shards;

  if (flags.keep_changesets > 0) {
    // Read by Xapian when a writable database is opened (below): each commit also writes a
    // changeset file that xapian-replicate-server sends to replicas. Set before any thread
    // starts (logging's included).
    setenv("XAPIAN_MAX_CHANGESETS", std::to_string(flags.keep_changesets).c_str(), 1);
  }
  issuescope::InitLogging("indexer", flags.log_level);
  namespace ix = issuescope::indexer;
  if (absl::Status layout = ix::CheckIndexLayout(index_dir, shards); !layout.ok()) {
    return Fail(std::string(layout.message()));
  }
  std::unique_ptr<ix::TaxonomyTagger> tagger;
  if (!flags.no_tags) {
    auto created = ix::TaxonomyTagger::Create(flags.taxonomy_file, flags.model_file);
    if (!created.ok()) return Fail(std::string(created.status().message()));
    tagger = *std::move(created);
    spdlog::info("tagging with {}", tagger->Fingerprint());
  }
  ix::IndexWriterOptions writer_options = flags.WriterOptions();
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
    retag_options.batch_size = flags.retag_batch;
    retagger = std::make_unique<ix::Retagger>(shard_writers, tagger.get(), retag_options);
    retagger->Start();
  } else if (absl::Status marked = ix::RecordUntagged(shard_writers); !marked.ok()) {
    return Fail(std::string(marked.message()));
  }

  absl::StatusOr<ix::IndexerDaemonOptions> daemon_options = flags.DaemonOptions();
  if (!daemon_options.ok()) return Fail(std::string(daemon_options.status().message()));
  ix::IndexerDaemon daemon(sink, issuescope::Clock::Real(), *daemon_options);
  if (absl::Status started = daemon.Start(); !started.ok()) {
    return Fail(std::string(started.message()));
  }
  spdlog::info("indexing into {} ({} shard{}) from {}; stores over {}", index_dir, shards,
               shards == 1 ? "" : "s",
               flags.coordinator.empty()
                   ? absl::StrCat("stores ", absl::StrJoin(flags.stores, ", "))
                   : absl::StrCat("coordinator ", flags.coordinator),
               flags.store_tls.ca.empty() ? "plaintext" : "TLS");

  const timespec interval{flags.stats_interval_s, 0};
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

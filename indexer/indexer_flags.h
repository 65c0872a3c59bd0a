// IndexerFlags: the command line of issuescope-indexer (indexer/main.cc) as one value: each
// flag's default, Register (the flags on a CLI11 app, with the checks CLI11 can make),
// Validate (the checks that need several flags) and the options they stand for
// (DaemonOptions, WriterOptions). The main only composes: open the writer, tag, follow.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "indexer/index_writer.h"
#include "indexer_daemon.h"

namespace CLI {
class App;
}

namespace issuescope::indexer {

struct IndexerFlags {
  std::string index_dir;            // required
  std::string coordinator;          // this, or
  std::vector<std::string> stores;  // at least one store
  std::string cluster_token_env;
  std::string indexer_id = "indexer";
  ClientTlsFiles coordinator_tls;  // --tls-ca/--tls-cert/--tls-key (with --coordinator)
  ClientTlsFiles store_tls{"", "", "", "--store-tls-ca", "--store-tls-cert", "--store-tls-key"};
  int commit_every = 0;
  int commit_delay_ms = 1000;
  int batch_size = 0;
  int retag_batch = 500;
  uint32_t shards = 1;
  // Changesets each database keeps for its read replicas (XAPIAN_MAX_CHANGESETS); 0 leaves the
  // environment alone.
  int keep_changesets = 0;
  std::string taxonomy_file;
  std::string model_file = "default";
  bool no_tags = false;
  int stats_interval_s = 10;
  std::string log_level = "info";

  // Register adds every flag to `app`, bound to these fields.
  void Register(CLI::App* app);
  // Validate: INVALID_ARGUMENT when neither --coordinator nor a --store is given, or the
  // store TLS files are unusable (naming the flag).
  absl::Status Validate() const;
  // DaemonOptions are the followers' options; the cluster token is read from the variable
  // --cluster-token-env names (an unset or empty one is an error naming the flag).
  absl::StatusOr<IndexerDaemonOptions> DaemonOptions() const;
  // WriterOptions are the index writer's commit grouping (the tagger is set by the caller).
  IndexWriterOptions WriterOptions() const;
};

}  // namespace issuescope::indexer

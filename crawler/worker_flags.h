// WorkerFlags: the command line of issuescope-crawler (crawler/main.cc) as one value: each flag's
// default, Register (the flags on a CLI11 app), Validate (the checks, naming the first bad flag)
// and BuildOptions (the WorkerOptions they stand for, tokens read from the environment). The
// main only composes: parse, validate, open the store, serve it, run the worker.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/grpc_channel.h"
#include "common/tls.h"
#include "crawler/worker.h"
#include "issuescope/v1/model.pb.h"

namespace CLI {
class App;
}

namespace issuescope::crawler {

struct WorkerFlags {
  std::string id = "worker-0";
  std::string listen = "127.0.0.1:50052";
  std::string port_file;
  std::string data_dir;     // required
  std::string coordinator;  // required
  int capacity = 2;                 // 1..64
  std::string token_env;
  std::map<v1::Tracker, std::string> api_urls;                // "" or http(s)://
  std::map<v1::Tracker, std::vector<std::string>> token_envs;  // "[ACCOUNT=]ENVVAR" each
  int64_t gitee_budget = 0;         // >= 0
  int secondary_backoff_s = 60;     // >= 0
  int max_pages_per_lease = 50;     // >= 0 (0: no limit)
  bool graphql = false;             // list GitHub issues over GraphQL (CrawlerOptions)
  double presence_sweep_h = 24;     // hours between presence sweeps (0: every crawl; < 0: never)
  double presence_sweep_budget = 0.25;  // CrawlerOptions::presence_sweep_budget
  int request_timeout_s = 60;       // 1..3600
  int max_body_mb = 64;             // 1..4096
  int drain_timeout_s = 30;         // 0..3600
  int drain_feed_wait_s = 600;      // 0..86400
  std::string cluster_token_env;
  std::string advertise_address;
  ServerTlsFiles store_tls;
  ClientTlsFiles coordinator_tls{"", "", "", "--tls-ca", "--coordinator-tls-cert",
                                 "--coordinator-tls-key"};
  std::string log_level = "info";

  // Register adds every flag to `app`, bound to these fields.
  void Register(CLI::App* app);
  // Validate checks the values CLI11 does not: INVALID_ARGUMENT naming the flag and the value.
  absl::Status Validate() const;
  // BuildOptions makes the worker's options: ids, timings, API URLs and the token pools (tokens
  // read from the environment variables named; an unset or empty one is an error naming its
  // flag). store_address is left for main to fill once the store listens.
  absl::StatusOr<WorkerOptions> BuildOptions() const;
};

}  // namespace issuescope::crawler

// bench_search_load: the search latency benchmark's gRPC load client. Runs the fixed mixed query
// set (tests/bench/search_queries.txt) against issuescope.v1.Search/Search, each query --reps
// times, first with one client, then with each further --clients count (threads, each with its
// own channel and stub, so each has its own connection), and prints p50/p95/p99 per category,
// for the whole set and for the facet queries separately; --json writes the same as JSON.
// With --fts5-json it also prints the side-by-side table against bench_search_fts5's result.
//
//   bench_search_load --target 127.0.0.1:PORT --queries tests/bench/search_queries.txt
//                     [--reps 20] [--clients 1,16] [--warmup 1] [--json out.json]
//                     [--fts5-json fts5.json] [--min-ratio 5] [--server-pid PID]
//
// With --server-pid, the 1-client run also records the service's CPU time per request (all its
// threads, /proc/PID/task/*/schedstat): the figure a loaded, shared machine disturbs least.
// In a run with C clients the reps × queries requests are shared out (one shuffled schedule,
// fixed seed), so every query gets --reps samples whatever C is. Exits 1 when a request fails,
// 2 on bad arguments, 3 when --min-ratio is given and FTS5 / issuescope (median of per-query
// p50) is below it.
#include <dirent.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "issuescope/v1/search.grpc.pb.h"
#include "tests/bench/search_bench_common.h"

namespace {

namespace bench = issuescope::bench;
namespace v1 = issuescope::v1;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string target;
  std::string queries_path;
  int reps = 20;
  std::string clients = "1,16";
  int warmup = 1;
  int deadline_ms = 120000;
  std::string json_path;
  std::string fts5_json;
  double min_ratio = 0;
  int server_pid = 0;
};

// ServerCpuMs sums the CPU time of every thread of process `pid` (/proc/PID/task/*/schedstat,
// first field, nanoseconds), in milliseconds; 0 when it cannot be read.
double ServerCpuMs(int pid) {
  const std::string dir = absl::StrCat("/proc/", pid, "/task");
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return 0;
  double ns = 0;
  while (dirent* entry = readdir(d)) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream in(absl::StrCat(dir, "/", entry->d_name, "/schedstat"));
    double run_ns = 0;
    if (in >> run_ns) ns += run_ns;
  }
  closedir(d);
  return ns / 1e6;
}

std::unique_ptr<v1::Search::Stub> NewStub(const std::string& target, int client) {
  grpc::ChannelArguments args;
  // A channel of its own per client: without a local subchannel pool, channels with equal
  // arguments share one connection.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt("issuescope.bench_client", client);
  args.SetMaxReceiveMessageSize(64 << 20);
  return v1::Search::NewStub(
      grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args));
}

v1::SearchRequest MakeRequest(const bench::BenchQuery& q) {
  v1::SearchRequest request;
  request.set_query(q.query);
  for (const std::string& f : q.facets) request.add_facets(f);
  return request;
}

// Runs `schedule` (indexes into `queries`) with `clients` threads; fills `log`.
bench::LatencyLog RunLoad(const Options& options, const std::vector<bench::BenchQuery>& queries,
                          const std::vector<size_t>& schedule, int clients) {
  bench::LatencyLog log;
  std::mutex mu;
  std::atomic<size_t> next{0};
  std::vector<std::unique_ptr<v1::Search::Stub>> stubs;
  for (int c = 0; c < clients; ++c) stubs.push_back(NewStub(options.target, c));
  // Connect every channel before the clock starts.
  for (auto& stub : stubs) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    v1::IndexStatus status;
    stub->GetIndexStatus(&context, v1::GetIndexStatusRequest(), &status);
  }
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      for (size_t i = next++; i < schedule.size(); i = next++) {
        const bench::BenchQuery& q = queries[schedule[i]];
        const v1::SearchRequest request = MakeRequest(q);
        v1::SearchResponse response;
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() +
                             std::chrono::milliseconds(options.deadline_ms));
        // With one client, the server's CPU time around a request is that request's.
        const bool measure_cpu = clients == 1 && options.server_pid > 0;
        const double cpu0 = measure_cpu ? ServerCpuMs(options.server_pid) : 0;
        const auto t0 = Clock::now();
        const grpc::Status status = stubs[c]->Search(&context, request, &response);
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        const double cpu = measure_cpu ? ServerCpuMs(options.server_pid) - cpu0 : 0;
        std::lock_guard<std::mutex> lock(mu);
        if (measure_cpu && status.ok()) log.cpu_ms[q.id].push_back(cpu);
        if (!status.ok()) {
          if (log.errors++ < 5) {
            std::cerr << "bench_search_load: " << q.id << " '" << q.query
                      << "' failed: " << status.error_message() << std::endl;
          }
          continue;
        }
        log.samples[q.id].push_back(ms);
        log.server_us[q.id].push_back(static_cast<double>(response.took_us()));
        if (log.info.count(q.id) == 0) {
          nlohmann::json info = {{"total", response.total()}, {"hits", response.hits_size()}};
          if (!q.facets.empty()) {
            info["facets_exact"] = response.facets_exact();
            info["facets_counted"] = response.facets_counted();
          }
          log.info[q.id] = info;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  log.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return log;
}

int Fail(int code, const std::string& message) {
  std::cerr << "bench_search_load: " << message << std::endl;
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gRPC load client of the search latency benchmark"};
  Options options;
  app.add_option("--target", options.target, "issuescope-search address host:port")->required();
  app.add_option("--queries", options.queries_path, "query set (search_queries.txt)")
      ->required();
  app.add_option("--reps", options.reps, "samples per query per run")->check(CLI::Range(1, 100000));
  app.add_option("--clients", options.clients, "comma list of concurrent client counts");
  app.add_option("--warmup", options.warmup, "untimed passes over the set first")
      ->check(CLI::Range(0, 100));
  app.add_option("--deadline-ms", options.deadline_ms, "per-request deadline")
      ->check(CLI::Range(1, 3600000));
  app.add_option("--json", options.json_path, "write the results as JSON here");
  app.add_option("--fts5-json", options.fts5_json, "bench_search_fts5 result to compare with");
  app.add_option("--server-pid", options.server_pid,
                 "the service's process id: with one client, also record its CPU per query");
  app.add_option("--min-ratio", options.min_ratio,
                 "fail (exit 3) when FTS5/issuescope median p50 is below this");
  CLI11_PARSE(app, argc, argv);

  absl::StatusOr<std::vector<bench::BenchQuery>> queries = bench::LoadQueries(options.queries_path);
  if (!queries.ok()) return Fail(2, std::string(queries.status().message()));
  std::vector<int> client_counts;
  for (absl::string_view part : absl::StrSplit(options.clients, ',', absl::SkipEmpty())) {
    int n = 0;
    if (!absl::SimpleAtoi(part, &n) || n < 1 || n > 1024) {
      return Fail(2, absl::StrCat("--clients: '", part, "' is not a count in 1..1024"));
    }
    client_counts.push_back(n);
  }
  if (client_counts.empty()) return Fail(2, "--clients names no client count");

  std::vector<size_t> one_pass(queries->size());
  for (size_t i = 0; i < one_pass.size(); ++i) one_pass[i] = i;
  if (options.warmup > 0) {
    std::vector<size_t> warm;
    for (int w = 0; w < options.warmup; ++w) {
      warm.insert(warm.end(), one_pass.begin(), one_pass.end());
    }
    bench::LatencyLog log = RunLoad(options, *queries, warm, 1);
    if (log.errors > 0) return Fail(1, absl::StrCat(log.errors, " warm-up requests failed"));
  }

  nlohmann::json result = {{"engine", "issuescope"}, {"target", options.target},
                           {"reps", options.reps}, {"runs", nlohmann::json::object()}};
  int64_t errors = 0;
  nlohmann::json single;
  for (int clients : client_counts) {
    std::vector<size_t> schedule;
    for (int r = 0; r < options.reps; ++r) {
      schedule.insert(schedule.end(), one_pass.begin(), one_pass.end());
    }
    std::mt19937 rng(12345);
    std::shuffle(schedule.begin(), schedule.end(), rng);
    bench::LatencyLog log = RunLoad(options, *queries, schedule, clients);
    errors += log.errors;
    nlohmann::json run = bench::RunJson(*queries, log, clients);
    bench::PrintRun(absl::StrCat("issuescope over gRPC, ", clients, " client(s)"), run);
    if (clients == 1) single = run;
    result["runs"][absl::StrCat("clients_", clients)] = run;
  }
  std::printf("\nfacet queries (exact? counted/total, single answer):\n");
  for (const bench::BenchQuery& q : *queries) {
    if (q.facets.empty()) continue;
    const nlohmann::json& runs = result["runs"];
    const nlohmann::json& run = runs.begin().value();
    if (!run["queries"].contains(q.id)) continue;
    const nlohmann::json& info = run["queries"][q.id]["info"];
    std::printf("  %-4s exact=%-5s counted=%lld total=%lld  %s\n", q.id.c_str(),
                info.value("facets_exact", false) ? "true" : "false",
                static_cast<long long>(info.value("facets_counted", int64_t{0})),
                static_cast<long long>(info.value("total", int64_t{0})), q.query.c_str());
  }

  double ratio = 0;
  if (!options.fts5_json.empty()) {
    absl::StatusOr<nlohmann::json> fts5 = bench::ReadJsonFile(options.fts5_json);
    if (!fts5.ok()) return Fail(2, std::string(fts5.status().message()));
    if (single.is_null()) return Fail(2, "--fts5-json needs a 1-client run in --clients");
    ratio = bench::PrintSideBySide(*queries, single, (*fts5)["runs"]["clients_1"]);
    result["fts5_over_ours_median_p50"] = ratio;
  }
  if (!options.json_path.empty()) {
    if (absl::Status s = bench::WriteJsonFile(options.json_path, result); !s.ok()) {
      return Fail(1, std::string(s.message()));
    }
  }
  if (errors > 0) return Fail(1, absl::StrCat(errors, " requests failed"));
  if (options.min_ratio > 0 && ratio < options.min_ratio) {
    return Fail(3, absl::StrCat("FTS5 / issuescope median p50 is ", ratio, ", below ",
                                options.min_ratio));
  }
  return 0;
}

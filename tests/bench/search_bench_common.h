// Shared parts of the search latency benchmark (tests/bench/search_bench.sh): the fixed mixed
// query set (tests/bench/search_queries.txt) and its SQLite FTS5 equivalents
// (tests/bench/search_queries_fts5.sql), latency samples and their percentiles, the JSON result
// both drivers write (bench_search_load for issuescope over gRPC, bench_search_fts5 for SQLite
// in-process), and the side-by-side table printed from two such results.
//
// Plain data and free functions; thread-compatible (a LatencyLog is filled by one thread, or
// merged under the caller's lock).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace issuescope::bench {

// BenchQuery is one line of search_queries.txt.
struct BenchQuery {
  std::string id;        // "t01"
  std::string category;  // "text", "phrase", "qualifier", "date", "broad", "sort", "listing",
                         // "facet"
  std::vector<std::string> facets;  // facet names requested with the query; empty for none
  std::string query;                // in the issuescope query language (docs/QUERY.md)
};

// kFacetCategory is the category reported separately ("facets on broad queries").
inline constexpr char kFacetCategory[] = "facet";

// LoadQueries reads search_queries.txt: ID<TAB>CATEGORY<TAB>FACETS<TAB>QUERY lines ('#' lines
// and blank lines skipped; FACETS a comma list or "-"). INVALID_ARGUMENT naming the line for a
// malformed one or a repeated id; NOT_FOUND when the file cannot be read.
absl::StatusOr<std::vector<BenchQuery>> LoadQueries(const std::string& path);

// LoadFtsQueries reads search_queries_fts5.sql: "-- ID" starts a query's block, then one SQL
// statement a line (ending with ';'); other "--" lines are comments. Returns the statements per
// id. INVALID_ARGUMENT for a statement outside a block or a block without statements.
absl::StatusOr<std::map<std::string, std::vector<std::string>>> LoadFtsQueries(
    const std::string& path);

// Percentile of `samples` (nearest rank, p in 0..100); 0 for no samples.
double Percentile(std::vector<double> samples, double p);

// LatencyLog collects per-query latency samples (milliseconds) of one run.
struct LatencyLog {
  // samples[id] are the latencies of query `id`, in milliseconds.
  std::map<std::string, std::vector<double>> samples;
  // server_us[id] are the server-reported times (took_us) of query `id`; empty for FTS5.
  std::map<std::string, std::vector<double>> server_us;
  // cpu_ms[id] are CPU milliseconds per execution of query `id`: the server process's (all its
  // threads, /proc/PID/task/*/schedstat) for issuescope, the thread's for FTS5. Unlike wall
  // time on a shared machine, CPU time hardly depends on what else runs.
  std::map<std::string, std::vector<double>> cpu_ms;
  // info[id] holds per-query facts from the first answer (total, facets_exact, ...).
  std::map<std::string, nlohmann::json> info;
  double wall_seconds = 0;  // wall time of the timed part of the run
  int64_t errors = 0;       // requests that failed
};

// RunJson summarises a run of `clients` clients over `queries`: overall ("all"), every query but
// the facet category ("mixed"), each category, and each query (p50/p95/p99/mean/n, in ms; the
// server's own p50 when known), plus wall time and queries per second.
nlohmann::json RunJson(const std::vector<BenchQuery>& queries, const LatencyLog& log,
                       int clients);

// PrintRun prints a run summary (from RunJson) as a table on stdout, titled `title`.
void PrintRun(const std::string& title, const nlohmann::json& run);

// PrintSideBySide prints, per category and overall, the median over queries of each query's
// p50 for issuescope (`ours`, a RunJson) and FTS5 (`fts5`, a RunJson), and their ratio, in wall
// time and (when both runs measured it) CPU time; then the same per query. Returns the overall
// ratio (FTS5 / issuescope, median of per-query wall p50).
double PrintSideBySide(const std::vector<BenchQuery>& queries, const nlohmann::json& ours,
                       const nlohmann::json& fts5);

// ReadJsonFile parses a JSON file; NOT_FOUND / INVALID_ARGUMENT naming the file.
absl::StatusOr<nlohmann::json> ReadJsonFile(const std::string& path);

// WriteJsonFile writes `value` (indented) to `path`; UNAVAILABLE naming the file on failure.
absl::Status WriteJsonFile(const std::string& path, const nlohmann::json& value);

}  // namespace issuescope::bench

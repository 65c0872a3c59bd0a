#include "tests/bench/search_bench_common.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace issuescope::bench {
namespace {

absl::StatusOr<std::vector<std::string>> ReadLines(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

double Median(std::vector<double> values) { return Percentile(std::move(values), 50); }

nlohmann::json Stats(const std::vector<double>& samples) {
  double sum = 0;
  for (double s : samples) sum += s;
  return {{"p50", Percentile(samples, 50)},
          {"p95", Percentile(samples, 95)},
          {"p99", Percentile(samples, 99)},
          {"max", Percentile(samples, 100)},
          {"mean", samples.empty() ? 0.0 : sum / samples.size()},
          {"n", samples.size()}};
}

// MedianOfP50 is the median over the queries of `category` ("" = all) of their `field` ("p50"
// or "cpu_p50") in `run`.
double MedianOfP50(const std::vector<BenchQuery>& queries, const nlohmann::json& run,
                   const std::string& category, const std::string& field = "p50") {
  std::vector<double> p50s;
  for (const BenchQuery& q : queries) {
    if (!category.empty() && q.category != category) continue;
    if (!run["queries"].contains(q.id) || !run["queries"][q.id].contains(field)) continue;
    p50s.push_back(run["queries"][q.id][field].get<double>());
  }
  return Median(p50s);
}

}  // namespace

absl::StatusOr<std::vector<BenchQuery>> LoadQueries(const std::string& path) {
  absl::StatusOr<std::vector<std::string>> lines = ReadLines(path);
  if (!lines.ok()) return lines.status();
  std::vector<BenchQuery> queries;
  std::set<std::string> ids;
  for (size_t n = 0; n < lines->size(); ++n) {
    const std::string& line = (*lines)[n];
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields = absl::StrSplit(line, absl::MaxSplits('\t', 3));
    if (fields.size() != 4 || fields[0].empty() || fields[1].empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ":", n + 1, ": expected ID<TAB>CATEGORY<TAB>FACETS<TAB>QUERY, got '", line, "'"));
    }
    BenchQuery q;
    q.id = fields[0];
    q.category = fields[1];
    if (fields[2] != "-") q.facets = absl::StrSplit(fields[2], ',', absl::SkipEmpty());
    q.query = fields[3];
    if (!ids.insert(q.id).second) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", n + 1, ": id ", q.id,
                                                     " is used twice"));
    }
    queries.push_back(std::move(q));
  }
  if (queries.empty()) return absl::InvalidArgumentError(absl::StrCat(path, " holds no query"));
  return queries;
}

absl::StatusOr<std::map<std::string, std::vector<std::string>>> LoadFtsQueries(
    const std::string& path) {
  absl::StatusOr<std::vector<std::string>> lines = ReadLines(path);
  if (!lines.ok()) return lines.status();
  std::map<std::string, std::vector<std::string>> out;
  std::string current;
  for (size_t n = 0; n < lines->size(); ++n) {
    absl::string_view line = absl::StripAsciiWhitespace((*lines)[n]);
    if (line.empty()) continue;
    if (absl::ConsumePrefix(&line, "--")) {
      line = absl::StripAsciiWhitespace(line);
      // A block header is "-- ID" with a short id and nothing else.
      if (!line.empty() && line.size() <= 16 && line.find(' ') == absl::string_view::npos) {
        current = std::string(line);
        if (out.count(current) != 0) {
          return absl::InvalidArgumentError(
              absl::StrCat(path, ":", n + 1, ": block ", current, " appears twice"));
        }
        out[current];
      }
      continue;
    }
    if (current.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", n + 1, ": SQL before the first '-- ID' line"));
    }
    out[current].push_back(std::string(line));
  }
  for (const auto& [id, statements] : out) {
    if (statements.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": block ", id, " has no SQL"));
    }
  }
  return out;
}

double Percentile(std::vector<double> samples, double p) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  // Nearest rank: the smallest sample with at least p% of the samples at or below it.
  const double rank = std::ceil(p / 100.0 * static_cast<double>(samples.size()));
  const size_t index = static_cast<size_t>(std::max(1.0, rank)) - 1;
  return samples[std::min(index, samples.size() - 1)];
}

nlohmann::json RunJson(const std::vector<BenchQuery>& queries, const LatencyLog& log,
                       int clients) {
  std::vector<double> all, mixed;
  std::map<std::string, std::vector<double>> by_category;
  nlohmann::json per_query = nlohmann::json::object();
  size_t requests = 0;
  for (const BenchQuery& q : queries) {
    auto found = log.samples.find(q.id);
    if (found == log.samples.end()) continue;
    const std::vector<double>& s = found->second;
    requests += s.size();
    all.insert(all.end(), s.begin(), s.end());
    if (q.category != kFacetCategory) mixed.insert(mixed.end(), s.begin(), s.end());
    by_category[q.category].insert(by_category[q.category].end(), s.begin(), s.end());
    nlohmann::json j = Stats(s);
    j["category"] = q.category;
    j["query"] = q.query;
    auto server = log.server_us.find(q.id);
    if (server != log.server_us.end() && !server->second.empty()) {
      j["server_p50"] = Percentile(server->second, 50) / 1000.0;
      j["server_p99"] = Percentile(server->second, 99) / 1000.0;
    }
    auto cpu = log.cpu_ms.find(q.id);
    if (cpu != log.cpu_ms.end() && !cpu->second.empty()) {
      j["cpu_p50"] = Percentile(cpu->second, 50);
    }
    auto info = log.info.find(q.id);
    if (info != log.info.end()) j["info"] = info->second;
    per_query[q.id] = j;
  }
  nlohmann::json categories = nlohmann::json::object();
  for (const auto& [category, s] : by_category) categories[category] = Stats(s);
  return {{"clients", clients},
          {"wall_s", log.wall_seconds},
          {"qps", log.wall_seconds > 0 ? requests / log.wall_seconds : 0.0},
          {"errors", log.errors},
          {"all", Stats(all)},
          {"mixed", Stats(mixed)},
          {"categories", categories},
          {"queries", per_query}};
}

void PrintRun(const std::string& title, const nlohmann::json& run) {
  std::printf("\n%s: %d client(s), %.1f s, %.1f queries/s, %lld errors\n", title.c_str(),
              run["clients"].get<int>(), run["wall_s"].get<double>(), run["qps"].get<double>(),
              static_cast<long long>(run["errors"].get<int64_t>()));
  std::printf("  %-22s %8s %9s %9s %9s %9s\n", "set", "n", "p50_ms", "p95_ms", "p99_ms",
              "max_ms");
  auto row = [](const std::string& name, const nlohmann::json& s) {
    std::printf("  %-22s %8zu %9.2f %9.2f %9.2f %9.2f\n", name.c_str(), s["n"].get<size_t>(),
                s["p50"].get<double>(), s["p95"].get<double>(), s["p99"].get<double>(),
                s["max"].get<double>());
  };
  row("all (incl. facets)", run["all"]);
  row("mixed (excl. facets)", run["mixed"]);
  for (const auto& [category, s] : run["categories"].items()) row("  " + category, s);
}

double PrintSideBySide(const std::vector<BenchQuery>& queries, const nlohmann::json& ours,
                       const nlohmann::json& fts5) {
  std::set<std::string> categories;
  for (const BenchQuery& q : queries) categories.insert(q.category);
  double overall = 0;
  for (const std::string field : {"p50", "cpu_p50"}) {
    const bool cpu = field == "cpu_p50";
    if (cpu && (MedianOfP50(queries, ours, "", field) == 0 ||
                MedianOfP50(queries, fts5, "", field) == 0)) {
      continue;
    }
    std::printf("\nmedian over queries of per-query %s (ms), single client, same run\n",
                cpu ? "CPU time (server process | FTS5 thread)" : "wall p50");
    std::printf("  %-12s %12s %12s %9s\n", "category", "issuescope", "sqlite-fts5", "fts5/ours");
    auto row = [&](const std::string& name, const std::string& category) {
      const double a = MedianOfP50(queries, ours, category, field);
      const double b = MedianOfP50(queries, fts5, category, field);
      std::printf("  %-12s %12.2f %12.2f %9.1f\n", name.c_str(), a, b, a > 0 ? b / a : 0.0);
      return a > 0 ? b / a : 0.0;
    };
    for (const std::string& c : categories) row(c, c);
    const double ratio = row("ALL", "");
    if (!cpu) overall = ratio;
  }
  std::printf(
      "\nper query p50 (ms): issuescope wall (server took, CPU) | sqlite-fts5 wall (CPU)\n");
  for (const BenchQuery& q : queries) {
    const nlohmann::json& a = ours["queries"].value(q.id, nlohmann::json::object());
    const nlohmann::json& b = fts5["queries"].value(q.id, nlohmann::json::object());
    std::printf("  %-4s %-9s %9.2f (%7.2f, %7.2f) | %9.2f (%8.2f)  %s\n", q.id.c_str(),
                q.category.c_str(), a.value("p50", 0.0), a.value("server_p50", 0.0),
                a.value("cpu_p50", 0.0), b.value("p50", 0.0), b.value("cpu_p50", 0.0),
                q.query.c_str());
  }
  return overall;
}

absl::StatusOr<nlohmann::json> ReadJsonFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  nlohmann::json value = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is not valid JSON"));
  }
  return value;
}

absl::Status WriteJsonFile(const std::string& path, const nlohmann::json& value) {
  std::ofstream out(path, std::ios::trunc);
  out << value.dump(2) << "\n";
  out.flush();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

}  // namespace issuescope::bench

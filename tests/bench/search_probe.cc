// bench_search_probe: where one query's time goes, in-process over an index (no gRPC): the
// median CPU time of each stage the search service runs for it — parsing, Xapian's estimate,
// the page with its bounded total (as Search runs it), the page alone, the page without
// snippets, and the bounded count (CountMatchesBounded) — over --reps runs; with --split N
// also the wall time of the page with its total unsplit and split over N handles
// (search/match_split.h). A tool for the search latency work (docs/BENCHMARKS.md).
//
//   bench_search_probe --index DIR [--queries search_queries.txt | --query "text"] [--reps N]
//                      [--count-bound N] [--split N]
#include <time.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_split.h"
#include "common/index_layout.h"
#include "search/index_reader.h"
#include "search/pager.h"
#include "search/query_parser.h"
#include "search/searcher.h"
#include "xapian.h"

namespace {

using issuescope::search::FetchPage;
using issuescope::search::MatchSplit;
using issuescope::search::PageCursor;
using issuescope::search::PageOptions;
using issuescope::search::ParsedQuery;
using issuescope::search::QueryParser;

double ThreadCpuMs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

double MedianMs(int reps, const std::function<void()>& fn) {
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    const double t0 = ThreadCpuMs();
    fn();
    ms.push_back(ThreadCpuMs() - t0);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

double MedianWallMs(int reps, const std::function<void()>& fn) {
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                     .count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Per-stage CPU time of search queries, in-process."};
  std::string index_dir, queries_file, one_query;
  int reps = 5;
  uint64_t count_bound = 20000;
  app.add_option("--index", index_dir, "index directory")->required();
  app.add_option("--queries", queries_file, "query set (ID<TAB>CATEGORY<TAB>FACETS<TAB>QUERY)");
  app.add_option("--query", one_query, "one query");
  app.add_option("--reps", reps, "runs per stage (median reported)")->check(CLI::Range(1, 1000));
  app.add_option("--count-bound", count_bound, "as issuescope-search --count-bound");
  int split_parts = 1;
  app.add_option("--split", split_parts, "also time the page split over this many handles")
      ->check(CLI::Range(1, 64));
  CLI11_PARSE(app, argc, argv);

  std::vector<std::pair<std::string, std::string>> queries;
  if (!one_query.empty()) queries.emplace_back("q", one_query);
  if (!queries_file.empty()) {
    std::ifstream in(queries_file);
    if (!in) {
      std::fprintf(stderr, "bench_search_probe: cannot read %s\n", queries_file.c_str());
      return 2;
    }
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      std::vector<std::string> f = absl::StrSplit(line, '\t');
      if (f.size() == 4) queries.emplace_back(f[0], f[3]);
    }
  }
  Xapian::Database db = issuescope::search::OpenIndexForReading(index_dir);
  std::vector<std::unique_ptr<Xapian::Database>> handles;
  std::vector<const Xapian::Database*> handle_ptrs;
  for (int i = 0; i < split_parts; ++i) {
    handles.push_back(
        std::make_unique<Xapian::Database>(issuescope::search::OpenIndexForReading(index_dir)));
    handle_ptrs.push_back(handles.back().get());
  }
  const MatchSplit split(handle_ptrs);
  issuescope::search::SearcherOptions searcher_options;
  searcher_options.count_bound = count_bound;
  searcher_options.split_parts = split_parts;
  std::unique_ptr<issuescope::search::Searcher> searcher =
      issuescope::search::Searcher::ForPath(index_dir, searcher_options);
  std::printf("%-4s %8s %9s %9s %9s %9s %9s %9s %9s %9s  %s\n", "id", "parse", "estimate",
              "page+tot", "page", "no-snip", "count", "wall", "split", "searcher", "query");
  for (const auto& [id, text] : queries) {
    QueryParser parser(db);
    absl::StatusOr<ParsedQuery> parsed = parser.Parse(text);
    if (!parsed.ok()) {
      std::printf("%-4s error: %s\n", id.c_str(), std::string(parsed.status().message()).c_str());
      continue;
    }
    if (!one_query.empty()) {
      // One query: also say what it became and how frequent its terms are.
      std::fprintf(stderr, "%s\n", parsed->query.get_description().c_str());
      for (Xapian::TermIterator t = parsed->query.get_unique_terms_begin();
           t != parsed->query.get_unique_terms_end(); ++t) {
        std::fprintf(stderr, "  %s: %u documents\n", (*t).c_str(), db.get_termfreq(*t));
      }
    }
    PageOptions with_total;
    with_total.count_total = !parsed->match_all;
    with_total.count_bound = count_bound;
    PageOptions page_only = with_total;
    page_only.count_total = false;
    const double parse = MedianMs(reps, [&] { (void)parser.Parse(text); });
    const double estimate = MedianMs(reps, [&] {
      Xapian::Enquire e(db);
      e.set_query(parsed->query);
      (void)e.get_mset(0, 0).get_matches_estimated();
    });
    const double full =
        MedianMs(reps, [&] { (void)FetchPage(db, *parsed, PageCursor(), with_total); });
    const double page =
        MedianMs(reps, [&] { (void)FetchPage(db, *parsed, PageCursor(), page_only); });
    const double count = MedianMs(reps, [&] {
      (void)issuescope::search::CountMatchesBounded(db, parsed->query, count_bound);
    });
    PageOptions bare = page_only;
    bare.snippets = false;
    const double no_snippets =
        MedianMs(reps, [&] { (void)FetchPage(db, *parsed, PageCursor(), bare); });
    std::vector<ParsedQuery> parts;
    for (size_t i = 0; i < split.parts(); ++i) parts.push_back(*QueryParser(split.db(i)).Parse(text));
    const double wall =
        MedianWallMs(reps, [&] { (void)FetchPage(db, *parsed, PageCursor(), with_total); });
    const double split_wall =
        MedianWallMs(reps, [&] { (void)FetchPage(split, parts, PageCursor(), with_total); });
    issuescope::v1::SearchRequest request;
    request.set_query(text);
    const double searcher_wall = MedianWallMs(reps, [&] { (void)searcher->Search(request); });
    if (!one_query.empty()) {
      absl::StatusOr<issuescope::v1::SearchResponse> response = searcher->Search(request);
      if (response.ok()) {
        std::fprintf(stderr, "response: %zu bytes, %d hits\n", response->ByteSizeLong(),
                     response->hits_size());
      }
    }
    std::printf("%-4s %8.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f  %s\n", id.c_str(),
                parse, estimate, full, page, no_snippets, count, wall, split_wall, searcher_wall,
                text.c_str());
  }
  return 0;
}

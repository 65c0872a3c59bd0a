// bench_search_fts5: the SQLite FTS5 side of the search latency benchmark, in-process.
//
//   bench_search_fts5 build --db FILE --issues N [--issues-per-repo N] [--seed S]
//   bench_search_fts5 run --db FILE --queries search_queries.txt --sql search_queries_fts5.sql
//                         [--reps 5] [--warmup 1] [--json out.json]
//
// build writes the benchmark corpus (tests/bench/bench_corpus.h: the same generator, options
// and so the same issues as bench_make_corpus) into a new database: an FTS5 table of the free
// text (title, body, comments; porter unicode61, as the indexing benchmark) whose rowid is the
// issue's id in a plain table holding the qualifier columns (repo slug, number, state, type,
// author, created/updated/closed unix seconds, comment count), plus a label(id, name) table;
// B-tree indexes on the filter and sort columns; then FTS5's 'optimize' merges its segments
// (the counterpart of the compacted Xapian shards). Values are lower-cased like the Xapian
// filter terms.
//
// run times each query's statements (search_queries_fts5.sql), stepping through every row and
// reading every column (so snippets are made), --reps times per query in one thread, after
// --warmup untimed passes, and prints and writes the same summary as bench_search_load.
// Exits 2 on bad arguments or a query without SQL, 1 when SQLite fails.
#include <sqlite3.h>

#include <chrono>
#include <ctime>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/repo_slug.h"
#include "tests/bench/bench_corpus.h"
#include "tests/bench/search_bench_common.h"

namespace {

namespace bench = issuescope::bench;
using Clock = std::chrono::steady_clock;

// Bytes of result columns read (a sink for RunQuery's reads).
volatile size_t g_bytes_read = 0;

constexpr char kSchema[] = R"sql(
PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
PRAGMA cache_size = -262144;
CREATE VIRTUAL TABLE fts USING fts5(title, body, comments, tokenize='porter unicode61');
CREATE TABLE issue(id INTEGER PRIMARY KEY, key TEXT, repo TEXT, number INTEGER, state TEXT,
  type TEXT, author TEXT, created INTEGER, updated INTEGER, closed INTEGER, comments INTEGER);
CREATE TABLE label(id INTEGER, name TEXT);
)sql";

constexpr char kIndexes[] = R"sql(
CREATE INDEX issue_repo ON issue(repo, created);
CREATE INDEX issue_created ON issue(created);
CREATE INDEX issue_updated ON issue(updated);
CREATE INDEX issue_closed ON issue(closed);
CREATE INDEX issue_comments ON issue(comments);
CREATE INDEX label_name ON label(name, id);
INSERT INTO fts(fts) VALUES('optimize');
ANALYZE;
)sql";

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
using Db = std::unique_ptr<sqlite3, DbCloser>;
struct StmtCloser {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Stmt = std::unique_ptr<sqlite3_stmt, StmtCloser>;

// ThreadCpuMs is the CPU time of the calling thread, in milliseconds.
double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

int Fail(int code, const std::string& message) {
  std::cerr << "bench_search_fts5: " << message << std::endl;
  return code;
}

absl::Status Exec(sqlite3* db, const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    absl::Status s = absl::InternalError(absl::StrCat("sqlite: ", error ? error : "?"));
    sqlite3_free(error);
    return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<Stmt> Prepare(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
    return absl::InvalidArgumentError(
        absl::StrCat("sqlite cannot prepare '", sql, "': ", sqlite3_errmsg(db)));
  }
  return Stmt(stmt);
}

void BindText(sqlite3_stmt* s, int i, const std::string& v) {
  sqlite3_bind_text(s, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}

absl::Status Step(sqlite3* db, sqlite3_stmt* s) {
  if (sqlite3_step(s) != SQLITE_DONE) {
    return absl::InternalError(absl::StrCat("sqlite insert: ", sqlite3_errmsg(db)));
  }
  sqlite3_reset(s);
  return absl::OkStatus();
}

const char* StateName(issuescope::v1::IssueState state) {
  switch (state) {
    case issuescope::v1::ISSUE_STATE_OPEN: return "open";
    case issuescope::v1::ISSUE_STATE_CLOSED: return "closed";
    default: return "other";
  }
}

absl::Status Build(const std::string& path, const bench::CorpusOptions& corpus) {
  std::remove(path.c_str());
  sqlite3* raw = nullptr;
  if (sqlite3_open(path.c_str(), &raw) != SQLITE_OK) {
    sqlite3_close(raw);
    return absl::UnavailableError(absl::StrCat("cannot create ", path));
  }
  Db db(raw);
  if (absl::Status s = Exec(db.get(), kSchema); !s.ok()) return s;
  absl::StatusOr<Stmt> fts = Prepare(db.get(),
      "INSERT INTO fts(rowid, title, body, comments) VALUES(?, ?, ?, ?)");
  absl::StatusOr<Stmt> issue = Prepare(db.get(),
      "INSERT INTO issue VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  absl::StatusOr<Stmt> label = Prepare(db.get(), "INSERT INTO label VALUES(?, ?)");
  for (auto* s : {&fts, &issue, &label}) {
    if (!s->ok()) return s->status();
  }
  if (absl::Status s = Exec(db.get(), "BEGIN"); !s.ok()) return s;
  int64_t id = 0;
  absl::Status status = bench::GenerateChunks(corpus, [&](bench::RepoIssues& repo) -> absl::Status {
    for (const issuescope::v1::IssueWithComments& iwc : repo.issues) {
      const issuescope::v1::Issue& in = iwc.issue();
      ++id;
      std::string comments;
      for (const auto& c : iwc.comments()) {
        absl::StrAppend(&comments, comments.empty() ? "" : "\n\n", c.body());
      }
      sqlite3_stmt* f = fts->get();
      sqlite3_bind_int64(f, 1, id);
      BindText(f, 2, in.title());
      BindText(f, 3, in.body());
      BindText(f, 4, comments);
      if (absl::Status s = Step(db.get(), f); !s.ok()) return s;
      sqlite3_stmt* i = issue->get();
      sqlite3_bind_int64(i, 1, id);
      BindText(i, 2, absl::StrCat(repo.slug, "#", in.number()));
      BindText(i, 3, absl::AsciiStrToLower(repo.slug));
      sqlite3_bind_int64(i, 4, in.number());
      BindText(i, 5, StateName(in.state()));
      BindText(i, 6, in.is_pull_request() ? "pr" : "issue");
      BindText(i, 7, absl::AsciiStrToLower(in.author()));
      sqlite3_bind_int64(i, 8, in.created_at().seconds());
      sqlite3_bind_int64(i, 9, in.updated_at().seconds());
      if (in.has_closed_at()) {
        sqlite3_bind_int64(i, 10, in.closed_at().seconds());
      } else {
        sqlite3_bind_null(i, 10);
      }
      sqlite3_bind_int64(i, 11, in.comment_count());
      if (absl::Status s = Step(db.get(), i); !s.ok()) return s;
      for (const std::string& name : in.labels()) {
        sqlite3_stmt* l = label->get();
        sqlite3_bind_int64(l, 1, id);
        BindText(l, 2, absl::AsciiStrToLower(name));
        if (absl::Status s = Step(db.get(), l); !s.ok()) return s;
      }
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  if (absl::Status s = Exec(db.get(), "COMMIT"); !s.ok()) return s;
  if (absl::Status s = Exec(db.get(), kIndexes); !s.ok()) return s;
  std::printf("bench_search_fts5: %lld issues in %s\n", static_cast<long long>(id), path.c_str());
  return absl::OkStatus();
}

// RunQuery runs every statement of one query to completion; returns the rows of the first.
absl::StatusOr<int64_t> RunQuery(sqlite3* db, const std::vector<Stmt>& statements) {
  int64_t first_rows = -1;
  size_t bytes = 0;
  for (const Stmt& stmt : statements) {
    sqlite3_stmt* s = stmt.get();
    int64_t rows = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      ++rows;
      for (int c = 0; c < sqlite3_column_count(s); ++c) {
        bytes += static_cast<size_t>(sqlite3_column_bytes(s, c));
      }
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) return absl::InternalError(absl::StrCat("sqlite: ", sqlite3_errmsg(db)));
    if (first_rows < 0) first_rows = rows;
  }
  g_bytes_read = g_bytes_read + bytes;  // keeps the column reads from being optimised away
  return first_rows;
}

int Run(const std::string& path, const std::string& queries_path, const std::string& sql_path,
        int reps, int warmup, const std::string& json_path) {
  absl::StatusOr<std::vector<bench::BenchQuery>> queries = bench::LoadQueries(queries_path);
  if (!queries.ok()) return Fail(2, std::string(queries.status().message()));
  absl::StatusOr<std::map<std::string, std::vector<std::string>>> sql =
      bench::LoadFtsQueries(sql_path);
  if (!sql.ok()) return Fail(2, std::string(sql.status().message()));
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(raw);
    return Fail(2, absl::StrCat("cannot open ", path));
  }
  Db db(raw);
  if (absl::Status s = Exec(db.get(), "PRAGMA cache_size = -262144"); !s.ok()) {
    return Fail(1, std::string(s.message()));
  }
  std::map<std::string, std::vector<Stmt>> prepared;
  for (const bench::BenchQuery& q : *queries) {
    auto found = sql->find(q.id);
    if (found == sql->end()) return Fail(2, absl::StrCat("no FTS5 SQL for query ", q.id));
    for (const std::string& statement : found->second) {
      absl::StatusOr<Stmt> s = Prepare(db.get(), statement);
      if (!s.ok()) return Fail(2, absl::StrCat(q.id, ": ", s.status().message()));
      prepared[q.id].push_back(std::move(*s));
    }
  }
  bench::LatencyLog log;
  for (int pass = 0; pass < warmup + reps; ++pass) {
    const auto pass_start = Clock::now();
    for (const bench::BenchQuery& q : *queries) {
      const double cpu0 = ThreadCpuMs();
      const auto t0 = Clock::now();
      absl::StatusOr<int64_t> rows = RunQuery(db.get(), prepared[q.id]);
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      const double cpu = ThreadCpuMs() - cpu0;
      if (!rows.ok()) return Fail(1, absl::StrCat(q.id, ": ", rows.status().message()));
      if (pass < warmup) continue;
      log.samples[q.id].push_back(ms);
      log.cpu_ms[q.id].push_back(cpu);
      if (log.info.count(q.id) == 0) log.info[q.id] = {{"hits", *rows}};
    }
    if (pass >= warmup) {
      log.wall_seconds += std::chrono::duration<double>(Clock::now() - pass_start).count();
    }
  }
  nlohmann::json run = bench::RunJson(*queries, log, 1);
  bench::PrintRun("SQLite FTS5 in-process, 1 client", run);
  nlohmann::json result = {{"engine", "sqlite-fts5"}, {"sqlite_version", sqlite3_libversion()},
                           {"reps", reps}, {"runs", {{"clients_1", run}}}};
  if (!json_path.empty()) {
    if (absl::Status s = bench::WriteJsonFile(json_path, result); !s.ok()) {
      return Fail(1, std::string(s.message()));
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"SQLite FTS5 side of the search latency benchmark"};
  app.require_subcommand(1);
  std::string db_path, queries_path, sql_path, json_path;
  bench::CorpusOptions corpus;
  int reps = 5, warmup = 1;
  CLI::App* build = app.add_subcommand("build", "write the corpus into a new FTS5 database");
  build->add_option("--db", db_path, "database file to create")->required();
  build->add_option("--issues", corpus.issues, "number of issues")->check(CLI::Range(1, 100000000));
  build->add_option("--issues-per-repo", corpus.issues_per_repo, "issues per repository");
  build->add_option("--seed", corpus.seed, "generator seed");
  CLI::App* run = app.add_subcommand("run", "time the FTS5 equivalents of the query set");
  run->add_option("--db", db_path, "database built by 'build'")->required();
  run->add_option("--queries", queries_path, "search_queries.txt")->required();
  run->add_option("--sql", sql_path, "search_queries_fts5.sql")->required();
  run->add_option("--reps", reps, "samples per query")->check(CLI::Range(1, 100000));
  run->add_option("--warmup", warmup, "untimed passes first")->check(CLI::Range(0, 100));
  run->add_option("--json", json_path, "write the results as JSON here");
  CLI11_PARSE(app, argc, argv);
  if (build->parsed()) {
    absl::Status s = Build(db_path, corpus);
    return s.ok() ? 0 : Fail(1, std::string(s.message()));
  }
  return Run(db_path, queries_path, sql_path, reps, warmup, json_path);
}

#!/usr/bin/env bash
# Search latency: p50/p95/p99 of a fixed mixed query set (tests/bench/search_queries.txt)
# through issuescope-search's gRPC API, one client and 16 concurrent clients, side by side with
# SQLite FTS5 running the equivalent queries (tests/bench/search_queries_fts5.sql) in-process on
# the same generated issues; and the search service's peak RSS. See docs/BENCHMARKS.md.
#
#   tests/bench/search_bench.sh [--issues N] [--reps R] [--fts-reps R] [--clients "1,16"]
#        [--shards S] [--jobs J] [--bin DIR] [--work DIR] [--no-fts] [--min-ratio X]
#
# --work keeps the corpus (crawler store), the index and the FTS5 database between runs
# (default: $TMPDIR/issuescope-search-bench-N); each is rebuilt only when missing. --bin holds
# bench_make_corpus, issuescope-bulk-index, issuescope-search, bench_search_load and
# bench_search_fts5 (default: build/bin). FTS5 runs first (--fts-reps samples per query; its
# broad queries take seconds at 1M issues), then the service is started on loopback and the load
# client runs --reps samples per query for each client count. Peak RSS is the service's VmHWM
# (/proc/PID/status) after the load. Exits non-zero when a step fails, a request fails, or
# (with --min-ratio) FTS5 is less than X times slower at the median.
set -euo pipefail

issues=100000
reps=20
fts_reps=5
clients="1,16"
shards=8
jobs=2
bin=""
work=""
run_fts=1
min_ratio=0
while [ $# -gt 0 ]; do
  case "$1" in
    --issues) issues="$2"; shift 2 ;;
    --reps) reps="$2"; shift 2 ;;
    --fts-reps) fts_reps="$2"; shift 2 ;;
    --clients) clients="$2"; shift 2 ;;
    --shards) shards="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --no-fts) run_fts=0; shift ;;
    --min-ratio) min_ratio="$2"; shift 2 ;;
    *) echo "search_bench: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
here="$(cd "$(dirname "$0")" && pwd)"
[ -n "$bin" ] || bin="$here/../../build/bin"
[ -n "$work" ] || work="${TMPDIR:-/tmp}/issuescope-search-bench-$issues"
for exe in bench_make_corpus issuescope-bulk-index issuescope-search bench_search_load \
           bench_search_fts5; do
  [ -x "$bin/$exe" ] || { echo "search_bench: $bin/$exe not found (build it, or pass --bin)" >&2; exit 2; }
done
mkdir -p "$work"
queries="$here/search_queries.txt"
sql="$here/search_queries_fts5.sql"
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "search_bench: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), load average before: $(load)"

# 1. Corpus and index (the indexing benchmark's steps), unless already built.
if [ ! -f "$work/index/issuescope.stub" ]; then
  rm -rf "$work/store" "$work/index"
  echo "search_bench: generating $issues issues into $work/store"
  "$bin/bench_make_corpus" --issues "$issues" --store "$work/store" | tee "$work/corpus.txt"
  echo "search_bench: indexing ($shards shards, $jobs jobs)"
  "$bin/issuescope-bulk-index" --store "$work/store" --index "$work/index" --shards "$shards" \
    --jobs "$jobs" --quiet 2>"$work/index.err" || { tail -5 "$work/index.err" >&2; exit 1; }
  tail -1 "$work/index.err"
fi
docs=$(xapian-delve "$work/index/issuescope.stub" | awk '/number of documents/ {print $NF}')
if [ "$docs" != "$issues" ]; then
  echo "search_bench: the index holds $docs documents, expected $issues" >&2
  exit 1
fi
echo "search_bench: index $work/index: $docs documents, $(du -sh "$work/index" | cut -f1)"

# 2. SQLite FTS5: the same issues, then the equivalent queries in-process.
fts_args=()
if [ "$run_fts" = 1 ]; then
  if [ ! -f "$work/fts5.done" ]; then
    echo "search_bench: building the FTS5 database"
    "$bin/bench_search_fts5" build --db "$work/fts5.db" --issues "$issues"
    touch "$work/fts5.done"
  fi
  echo "search_bench: FTS5 database $(du -sh "$work/fts5.db" | cut -f1); load average $(load)"
  "$bin/bench_search_fts5" run --db "$work/fts5.db" --queries "$queries" --sql "$sql" \
    --reps "$fts_reps" --json "$work/fts5.json"
  fts_args=(--fts5-json "$work/fts5.json" --min-ratio "$min_ratio")
fi

# 3. The search service on loopback, the load client, the service's peak RSS.
rm -f "$work/search.port"
"$bin/issuescope-search" --listen 127.0.0.1:0 --port-file "$work/search.port" \
  --index "$work/index" --log-level warn 2>"$work/search.err" &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do
  [ -s "$work/search.port" ] && break
  kill -0 "$pid" 2>/dev/null || { echo "search_bench: issuescope-search exited" >&2; cat "$work/search.err" >&2; exit 1; }
  sleep 0.2
done
[ -s "$work/search.port" ] || { echo "search_bench: issuescope-search did not start" >&2; exit 1; }
port=$(cat "$work/search.port")
rss_idle=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
echo "search_bench: issuescope-search pid $pid on 127.0.0.1:$port; load average $(load)"
status=0
"$bin/bench_search_load" --target "127.0.0.1:$port" --queries "$queries" --reps "$reps" \
  --clients "$clients" --server-pid "$pid" --json "$work/ours.json" "${fts_args[@]}" || status=$?
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
kill "$pid"
wait "$pid" 2>/dev/null || true
trap - EXIT
echo
echo "search_bench: issuescope-search memory: peak RSS (VmHWM) $((hwm / 1024)) MB," \
  "RSS after the load $((rss / 1024)) MB, RSS idle after start $((rss_idle / 1024)) MB"
echo "search_bench: results in $work/ours.json${fts_args:+ and $work/fts5.json}; load average after: $(load)"
exit "$status"

#!/usr/bin/env bash
# Indexing throughput: documents per second from stored issues to a committed index, for
# issuescope-bulk-index, Xapian's own scriptindex (xapian-omega) and SQLite FTS5 (sqlite3), on
# the same generated issues, in the same run. See docs/BENCHMARKS.md.
#
#   tests/bench/indexing_bench.sh [--issues N] [--jobs J] [--shards S] [--batch B]
#        [--si-batch N] [--bin DIR] [--work DIR] [--keep] [--no-scriptindex] [--no-fts]
#        [--si-single] [--si-schemes "twice once"]
#
# --bin holds issuescope-bulk-index and bench_make_corpus (default: build/bin). --work is a
# scratch directory (default: a new temporary one, removed unless --keep). scriptindex builds
# --si-batch-document parts, J at a time, then xapian-compact merges them (the "shards then
# compact" way), with each scheme of --si-schemes: "twice" indexes every field prefixed and
# unprefixed (a straightforward positional indexer, as issuescope did before), "once" indexes
# the text once unprefixed and the title again under S (issuescope's current term scheme,
# "unprefixed-1" in common/index_text.h); --si-single also times
# scriptindex ("twice") into one growing database. Prints one table
# row per indexer: docs, wall seconds, docs/s, CPU seconds, docs per CPU-second, peak RSS, size.
# Exits non-zero when an indexer fails or an index holds the wrong number of documents.
set -euo pipefail

issues=100000
jobs=2
shards=8
batch=5000
si_batch=5000
bin=""
work=""
keep=0
run_si=1
run_fts=1
si_single=0
si_schemes="twice once"
while [ $# -gt 0 ]; do
  case "$1" in
    --issues) issues="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --shards) shards="$2"; shift 2 ;;
    --batch) batch="$2"; shift 2 ;;
    --si-batch) si_batch="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    --no-scriptindex) run_si=0; shift ;;
    --no-fts) run_fts=0; shift ;;
    --si-single) si_single=1; shift ;;
    --si-schemes) si_schemes="$2"; shift 2 ;;
    *) echo "indexing_bench: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
here="$(cd "$(dirname "$0")" && pwd)"
[ -n "$bin" ] || bin="$here/../../build/bin"
for exe in issuescope-bulk-index bench_make_corpus; do
  [ -x "$bin/$exe" ] || { echo "indexing_bench: $bin/$exe not found (build it, or pass --bin)" >&2; exit 2; }
done
if [ ! -x /usr/bin/time ]; then
  echo "indexing_bench: /usr/bin/time (GNU time) is needed for CPU and peak RSS" >&2; exit 2
fi
if [ "$run_si" = 1 ] && ! command -v scriptindex >/dev/null; then
  echo "indexing_bench: scriptindex not installed (package xapian-omega): skipping it" >&2
  run_si=0
fi
if [ "$run_fts" = 1 ] && ! command -v sqlite3 >/dev/null; then
  echo "indexing_bench: sqlite3 not installed: skipping FTS5" >&2
  run_fts=0
fi
if [ -z "$work" ]; then
  work="$(mktemp -d "${TMPDIR:-/tmp}/issuescope-bench.XXXXXX")"
  [ "$keep" = 1 ] || trap 'rm -rf "$work"' EXIT
else
  rm -rf "$work"
  mkdir -p "$work"
fi

now() { date +%s.%N; }
calc() { awk "BEGIN {printf \"%.3f\", $1}"; }
# timed NAME CMD...: runs CMD under GNU time; sets wall, cpu (user+sys) and rss_mb.
timed() {
  local name="$1"; shift
  local t0 t1
  t0=$(now)
  if ! /usr/bin/time -v -o "$work/$name.time" "$@" >"$work/$name.out" 2>"$work/$name.err"; then
    echo "indexing_bench: $name failed:" >&2
    tail -5 "$work/$name.err" >&2
    exit 1
  fi
  t1=$(now)
  wall=$(calc "$t1 - $t0")
  cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.2f", s}' "$work/$name.time")
  rss_mb=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$work/$name.time")
}
size_mb() { du -sb "$1" | awk '{printf "%.1f", $1 / 1048576}'; }
rows=()
# row NAME DOCS SIZE_PATH: appends a result row.
row() {
  local name="$1" docs="$2" size
  size=$(size_mb "$3")
  rows+=("$(printf '%-34s %8d %9.1f %9.0f %9.1f %9.0f %8s %9s' "$name" "$docs" "$wall" \
    "$(calc "$docs / $wall")" "$cpu" "$(calc "$docs / $cpu")" "$rss_mb" "$size")")
}
doccount() { xapian-delve "$1" | awk '/number of documents/ {print $NF}'; }
check() {  # check NAME GOT
  if [ "$2" != "$issues" ]; then
    echo "indexing_bench: $1 holds $2 documents, expected $issues" >&2
    exit 1
  fi
}

echo "indexing_bench: $(nproc) cores, load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "indexing_bench: generating $issues issues in $work"
si_args=()
[ "$run_si" = 1 ] && si_args=(--scriptindex "$work/corpus.si")
fts_args=()
[ "$run_fts" = 1 ] && fts_args=(--csv "$work/corpus.csv")
"$bin/bench_make_corpus" --issues "$issues" --store "$work/store" "${si_args[@]}" "${fts_args[@]}" \
  | tee "$work/corpus.txt"

# 1. issuescope-bulk-index: reads the crawler store, J workers, S shards, runs of B issues.
timed ours "$bin/issuescope-bulk-index" --store "$work/store" --index "$work/ours" \
  --shards "$shards" --jobs "$jobs" --batch "$batch" --quiet
check issuescope-bulk-index "$(doccount "$work/ours/issuescope.stub")"
row "issuescope-bulk-index (${shards} shards)" "$issues" "$work/ours"
grep 'done:' "$work/ours.err" | sed 's/^/  /'

# 2. scriptindex: the same issues, the same field prefixes, every field indexed twice (prefixed
# and unprefixed) as a straightforward positional indexer does; parts then xapian-compact.
if [ "$run_si" = 1 ]; then
  cat > "$work/twice.script" <<'SCRIPT'
id : boolean=Q unique=Q
title : field=title index=S weight=2 index
body : field=body index=XB weight=1 index
comments : field=comments index=XC weight=1 index
SCRIPT
  cat > "$work/once.script" <<'SCRIPT'
id : boolean=Q unique=Q
title : field=title weight=2 index index=S
body : field=body weight=1 index
comments : field=comments weight=1 index
SCRIPT
  mkdir -p "$work/parts"
  awk -v n="$si_batch" -v dir="$work/parts" 'BEGIN {RS = ""; ORS = "\n\n"}
    { f = sprintf("%s/part-%05d.si", dir, int((NR - 1) / n)); if (f != last) { if (last != "") close(last); last = f } print > f }' \
    "$work/corpus.si"
  export XAPIAN_CJK_NGRAM=1
  for scheme in $si_schemes; do
    cat > "$work/si-$scheme.sh" <<SH
set -e
ls "$work/parts"/*.si | xargs -P "$jobs" -I{} sh -c 'scriptindex --stemmer=english "$work/si-$scheme/\$(basename {} .si)" "$work/$scheme.script" {} >/dev/null'
xapian-compact --multipass "$work/si-$scheme"/part-* "$work/si-$scheme.db" >/dev/null
SH
    mkdir -p "$work/si-$scheme"
    timed "si-$scheme" bash "$work/si-$scheme.sh"
    check "scriptindex ($scheme)" "$(doccount "$work/si-$scheme.db")"
    row "scriptindex $scheme, parts+compact" "$issues" "$work/si-$scheme.db"
    rm -rf "$work/si-$scheme"
  done
  if [ "$si_single" = 1 ]; then
    timed si-single scriptindex --stemmer=english "$work/si-single.db" "$work/twice.script" "$work/corpus.si"
    check "scriptindex (one db)" "$(doccount "$work/si-single.db")"
    row "scriptindex twice, one database" "$issues" "$work/si-single.db"
  fi
fi

# 3. SQLite FTS5: the same text columns, porter stemming, full positional detail, one .import.
if [ "$run_fts" = 1 ]; then
  cat > "$work/fts.sql" <<SQL
CREATE VIRTUAL TABLE issues USING fts5(key UNINDEXED, title, body, comments, tokenize='porter unicode61');
.mode csv
.import "$work/corpus.csv" issues
SQL
  timed fts sqlite3 "$work/fts.db" ".read $work/fts.sql"
  check "FTS5" "$(sqlite3 "$work/fts.db" 'SELECT count(*) FROM issues')"
  row "SQLite FTS5 (one core)" "$issues" "$work/fts.db"
fi

echo
printf '%-34s %8s %9s %9s %9s %9s %8s %9s\n' indexer docs wall_s docs/s cpu_s docs/cpu_s rss_MB size_MB
for r in "${rows[@]}"; do echo "$r"; done
echo "indexing_bench: load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

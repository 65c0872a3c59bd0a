#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, clang, ASan+UBSan) in the sanitizer tree
# build-sanitize/ (shared with tests/sanitizers/run_asan.sh) and runs each for
# a bounded time or number of executions; fails on any crash, leak, sanitizer report or timeout.
#
#   tests/fuzz/run_fuzzers.sh [--seconds N] [--runs N] [--max-len N] [--jobs N] [TARGET...]
#
# --seconds N  stop each target after N seconds (default 30; 0 = no time bound, needs --runs)
# --runs N     stop each target after N executions (default: no bound)
# --max-len N  inputs of at most N bytes (libFuzzer's -max_len; default: libFuzzer's own, which
#              grows with the corpus): long runs of targets whose inputs grow slow (taxonomy,
#              query_parser) keep their speed
# --jobs N     build parallelism (default 2)
# TARGET       names from build-sanitize/fuzzers.txt (query_parser, github_pages, …); default all.
# Environment: BUILD_DIR (default build-sanitize), CXX (default clang++).
# New corpus inputs accumulate in BUILD_DIR/fuzz-corpus/<target>, crashes in
# BUILD_DIR/fuzz-artifacts/, logs in BUILD_DIR/fuzz-logs/. A summary table (executions,
# executions per second, seconds, corpus size) ends the output.
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=30
runs=""
max_len=""
jobs=2
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --max-len) max_len="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    -*) echo "run_fuzzers: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
if [ "$seconds" = 0 ] && [ -z "$runs" ]; then
  echo "run_fuzzers: --seconds 0 needs --runs" >&2
  exit 2
fi

# shellcheck source=../sanitizers/sanitize_tree.sh
source tests/sanitizers/sanitize_tree.sh run_fuzzers
cmake --build "$build" -j "$jobs" --target issuescope-fuzzers

mkdir -p "$build/fuzz-artifacts" "$build/fuzz-logs"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"

failed=()
summary=()
while read -r name exe dirs; do
  [ -n "$name" ] || continue
  if [ ${#targets[@]} -gt 0 ] && [[ ! " ${targets[*]} " == *" $name "* ]]; then continue; fi
  args=(-timeout=25 -rss_limit_mb=2048 -print_final_stats=1
        "-artifact_prefix=$build/fuzz-artifacts/$name-")
  [ "$seconds" != 0 ] && args+=("-max_total_time=$seconds")
  [ -n "$runs" ] && args+=("-runs=$runs")
  [ -n "$max_len" ] && args+=("-max_len=$max_len")
  log="$build/fuzz-logs/$name.log"
  echo "run_fuzzers: $name ${args[*]}"
  start=$(date +%s)
  # shellcheck disable=SC2086  # dirs is a space-separated list of folders
  if "$exe" "${args[@]}" $dirs >"$log" 2>&1; then status=ok; else status=FAILED; failed+=("$name"); fi
  elapsed=$(( $(date +%s) - start ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  corpus=$(find "${dirs%% *}" -type f | wc -l)
  summary+=("$(printf '%-16s %-7s %12s %9s %6ss %7s' "$name" "$status" "${execs:-?}" "${rate:-?}" \
    "$elapsed" "$corpus")")
  if [ "$status" = FAILED ]; then
    echo "run_fuzzers: $name FAILED; last lines of $log:" >&2
    tail -n 60 "$log" >&2
  fi
done < "$build/fuzzers.txt"

printf '%-16s %-7s %12s %9s %7s %7s\n' target status executions exec/s time corpus
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "run_fuzzers: failed: ${failed[*]} (inputs in $build/fuzz-artifacts/)" >&2
  exit 1
fi

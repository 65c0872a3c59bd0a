#!/usr/bin/env bash
# Builds everything tests/fuzz/run_fuzzers.sh, tests/sanitizers/run_asan.sh and run_tsan.sh will
# run (the fuzz targets and the ASan+UBSan test programs in build-sanitize/, the TSan test
# programs in build-tsan/), without running anything; those scripts then find it built. .ci/run
# starts it at the lowest CPU priority while the chaos and multi-host tests, which mostly wait,
# are running, so the sanitizer builds use the cores those tests leave idle.
#
#   tests/sanitizers/prebuild.sh [--jobs N]
set -euo pipefail
cd "$(dirname "$0")/../.."
jobs=2
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) jobs="$2"; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "prebuild: unknown argument $1" >&2; exit 2 ;;
  esac
done
# Assignments, so that a failing --list stops the script (set -e); an empty list is an error.
asan_list=$(tests/sanitizers/run_asan.sh --list)
tsan_list=$(tests/sanitizers/run_tsan.sh --list)
mapfile -t asan_targets <<<"$asan_list"
mapfile -t tsan_targets <<<"$tsan_list"
if [ -z "$asan_list" ] || [ -z "$tsan_list" ]; then
  echo "prebuild: run_asan.sh or run_tsan.sh listed no targets" >&2
  exit 1
fi
(
  # shellcheck source=sanitize_tree.sh
  source tests/sanitizers/sanitize_tree.sh prebuild
  cmake --build "$build" -j "$jobs" --target issuescope-fuzzers "${asan_targets[@]}"
)
(
  sanitize_default_dir=build-tsan
  sanitize_option=ISSUESCOPE_TSAN
  # shellcheck source=sanitize_tree.sh
  source tests/sanitizers/sanitize_tree.sh prebuild
  cmake --build "$build" -j "$jobs" --target "${tsan_targets[@]}"
)
echo "prebuild: the sanitizer trees are built"

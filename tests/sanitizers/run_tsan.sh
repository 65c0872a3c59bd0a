#!/usr/bin/env bash
# Builds the threaded unit tests under ThreadSanitizer in a tree of their own (build-tsan/,
# clang, -DISSUESCOPE_TSAN=ON: only the named tests and the libraries they link are compiled) and
# runs them; fails on any test failure or data-race report.
#
#   tests/sanitizers/run_tsan.sh [--jobs N] [--list] [TARGET...]
#
# Default targets: the tests whose threads and locks are our own code's — the token pool and
# rate budget shared by crawls, the curl transport, the crawl loop, the store's change feed
# (writers waking waiting readers), split matching and the searcher's handle pool, the
# coordinator core (one mutex, the ticker) and its home grace. Debian's gRPC, RocksDB, Xapian,
# Abseil and spdlog are not instrumented: TSan sees our code's accesses and the pthread calls,
# not the synchronisation inside those libraries. Tests that pass messages through gRPC's
# completion queues (the worker, the store service, the coordinator service, the indexer's
# followers, the search service) report every message handed between gRPC's threads as a race,
# so they are not in the default list (they run under ASan+UBSan in run_asan.sh and in the
# chaos tests); running them here needs gRPC built with TSan. tsan.supp lists what is
# suppressed and why.
# Environment: BUILD_DIR (default build-tsan), CXX (default clang++).
set -euo pipefail
cd "$(dirname "$0")/../.."

TESTS=(
  crawler_token_pool_test crawler_curl_transport_test
  crawler_repo_crawler_test crawler_lister_test crawler_issue_store_test
  crawler_graphql_crawl_test
  search_match_split_test search_searcher_test search_full_coverage_test
  coordinator_coordinator_core_test coordinator_home_grace_test coordinator_failover_test
)

jobs=2
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) jobs="$2"; shift 2 ;;
    --list) printf '%s\n' "${TESTS[@]}"; exit 0 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    -*) echo "run_tsan: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=("${TESTS[@]}")

sanitize_default_dir=build-tsan
sanitize_option=ISSUESCOPE_TSAN
# shellcheck source=sanitize_tree.sh
source tests/sanitizers/sanitize_tree.sh run_tsan
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/sanitizers/tsan.supp}"
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

mkdir -p "$build/tsan-logs"
failed=()
for t in "${targets[@]}"; do
  exe="$build/bin/$t"
  log="$build/tsan-logs/$t.log"
  start=$(date +%s)
  if "$exe" --gtest_brief=1 >"$log" 2>&1; then status=ok; else status=FAILED; failed+=("$t"); fi
  if grep -q "WARNING: ThreadSanitizer" "$log"; then
    [ "$status" = FAILED ] || failed+=("$t")
    status=RACE
  fi
  printf 'run_tsan: %-40s %-6s %4ss\n' "$t" "$status" "$(( $(date +%s) - start ))"
  if [ "$status" != ok ]; then tail -n 80 "$log" >&2; fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "run_tsan: failed: ${failed[*]} (logs in $build/tsan-logs/)" >&2
  exit 1
fi
echo "run_tsan: ${#targets[@]} test programs passed under ThreadSanitizer"

#!/usr/bin/env bash
# Builds the unit tests of the pure libraries under AddressSanitizer + UndefinedBehaviorSanitizer
# in the sanitizer tree build-sanitize/ (clang, shared with tests/fuzz/run_fuzzers.sh: the
# libraries are compiled once for both) and runs them; fails on any test failure, leak or
# sanitizer report.
#
#   tests/sanitizers/run_asan.sh [--jobs N] [--list] [TARGET...]
#
# Default targets: the tests of common/, search/ (query language, searcher, pager, facets, match
# split, the gRPC service in process), search/web/ (the gateway on an in-process channel), the
# crawler's parsing and crawl loop on a fake transport, its store, and the indexer's taxonomy,
# classifier and tagger. Not the e2e tests that start processes. --list prints them.
# Environment: BUILD_DIR (default build-sanitize), CXX (default clang++).
set -euo pipefail
cd "$(dirname "$0")/../.."

TESTS=(
  common_text_tokens_test common_issue_sections_test common_csv_test common_logging_test
  search_query_parser_test search_facets_test search_searcher_test search_pager_test
  search_docid_sample_test search_field_scope_test search_query_limits_test
  search_match_split_test search_search_service_test
  http_gateway_test
  crawler_link_header_test crawler_github_parse_test crawler_forge_parse_test
  crawler_conformance_test crawler_hostile_tracker_test crawler_repo_crawler_test
  crawler_deep_page_test crawler_rate_budget_test crawler_token_pool_test
  crawler_issue_store_test crawler_raw_pages_test
  indexer_taxonomy_test indexer_term_automaton_test indexer_tagging_test
  indexer_classifier_test indexer_utf8_cuts_test indexer_change_log_test
)

jobs=2
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) jobs="$2"; shift 2 ;;
    --list) printf '%s\n' "${TESTS[@]}"; exit 0 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    -*) echo "run_asan: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=("${TESTS[@]}")

# shellcheck source=../sanitizers/sanitize_tree.sh
source tests/sanitizers/sanitize_tree.sh run_asan
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/tests/sanitizers/lsan.supp:print_suppressions=0}"
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

mkdir -p "$build/asan-logs"
failed=()
for t in "${targets[@]}"; do
  exe="$build/bin/$t"
  log="$build/asan-logs/$t.log"
  start=$(date +%s)
  if "$exe" --gtest_brief=1 >"$log" 2>&1; then status=ok; else status=FAILED; failed+=("$t"); fi
  printf 'run_asan: %-32s %-6s %4ss\n' "$t" "$status" "$(( $(date +%s) - start ))"
  if [ "$status" = FAILED ]; then tail -n 80 "$log" >&2; fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "run_asan: failed: ${failed[*]} (logs in $build/asan-logs/)" >&2
  exit 1
fi
echo "run_asan: ${#targets[@]} test programs passed under ASan+UBSan"

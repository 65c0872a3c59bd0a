#!/usr/bin/env bash
# Builds the unit tests of the pure libraries under AddressSanitizer + UndefinedBehaviorSanitizer
# in the sanitizer tree build-sanitize/ (clang, shared with tests/fuzz/run_fuzzers.sh: the
# libraries are compiled once for both) and runs them (the unit test programs --jobs at a time,
# the e2e programs one at a time); fails on any test failure, leak or sanitizer report.
#
#   tests/sanitizers/run_asan.sh [--jobs N] [--list] [TARGET...]
#
# Default targets: every unit test program (common, search and its gateway, the crawler with its
# store, worker and store service, the coordinator, the indexer, the tracker simulator), gRPC
# services included (ASan needs no instrumented gRPC), and the e2e tests, whose daemons are the
# tree's own ASan+UBSan builds. --list prints them.
# Environment: BUILD_DIR (default build-sanitize), CXX (default clang++).
set -euo pipefail
cd "$(dirname "$0")/../.."

TESTS=(
  common_text_tokens_test common_issue_sections_test common_csv_test common_logging_test
  common_host_port_test common_tls_test common_repo_slug_test common_status_conversion_test
  common_index_values_test
  search_query_parser_test search_facets_test search_searcher_test search_pager_test
  search_docid_sample_test search_field_scope_test search_query_limits_test
  search_match_split_test search_search_service_test search_main_test search_search_flags_test
  search_proximity_test search_full_coverage_test search_revision_cache_test search_gone_search_test
  http_gateway_test
  crawler_link_header_test crawler_github_parse_test crawler_forge_parse_test
  crawler_conformance_test crawler_hostile_tracker_test crawler_repo_crawler_test
  crawler_deep_page_test crawler_token_pool_test
  crawler_issue_store_test crawler_raw_pages_test crawler_issue_store_recovery_test
  crawler_curl_transport_test crawler_fault_crawl_test crawler_forge_crawler_test
  crawler_store_service_test crawler_worker_test crawler_worker_flags_test
  crawler_shift_repair_test crawler_request_loop_test crawler_page_ingest_test
  crawler_lister_test crawler_urls_test crawler_github_graphql_test crawler_graphql_crawl_test
  deploy_command_line_test
  coordinator_assignment_test coordinator_catalog_config_test coordinator_coordinator_core_test
  coordinator_coordinator_service_test coordinator_failover_test coordinator_home_grace_test
  coordinator_membership_test coordinator_rebalance_test coordinator_reopen_test
  coordinator_schedule_test coordinator_security_test coordinator_status_metrics_test
  coordinator_validation_test coordinator_coordinator_flags_test
  indexer_taxonomy_test indexer_term_automaton_test indexer_tagging_test
  indexer_classifier_test indexer_utf8_cuts_test indexer_change_log_test
  indexer_index_writer_test indexer_sharded_index_writer_test indexer_feed_follower_test
  indexer_indexer_daemon_test deploy_reindex_command_test indexer_study_test indexer_indexer_flags_test
  indexer_study_stats_test
  simulator_faults_test simulator_generator_test simulator_gitee_api_test
  simulator_gitlab_api_test simulator_http_api_test simulator_listing_test simulator_loader_test
  simulator_mutation_test simulator_graphql_test
)
# The e2e tests start the daemons of the same tree (ASan+UBSan builds of issuescope,
# issuescope-coordinator, -crawler, -indexer, -search, -shard-server and the simulator) as real
# processes; their reports go to files (log_path), which fail the test that started them.
E2E=(
  cli_e2e_test standard_services_e2e_test study_e2e_test control_plane_e2e_test cluster_e2e_test
  shard_server_test
)

jobs=2
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) jobs="$2"; shift 2 ;;
    --list) printf '%s\n' "${TESTS[@]}" "${E2E[@]}"; exit 0 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    -*) echo "run_asan: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=("${TESTS[@]}" "${E2E[@]}")

# shellcheck source=../sanitizers/sanitize_tree.sh
source tests/sanitizers/sanitize_tree.sh run_asan
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/tests/sanitizers/lsan.supp:print_suppressions=0}"
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

mkdir -p "$build/asan-logs"
failed_list="$build/asan-logs/failed.list"
: >"$failed_list"
# run_one T: runs test program T, prints a line with its outcome and time, and on a failure its
# log's tail and reports, and appends T to $failed_list.
run_one() {
  local t="$1" exe="$build/bin/$1" log="$build/asan-logs/$1.log"
  local reports="$build/asan-logs/$1.reports" start status
  rm -rf "$reports" && mkdir -p "$reports"
  start=$(date +%s)
  # Every process the test starts writes its sanitizer reports to $reports/<tool>.<pid>.
  if ASAN_OPTIONS="$ASAN_OPTIONS:log_path=$reports/asan" \
     UBSAN_OPTIONS="$UBSAN_OPTIONS:log_path=$reports/ubsan" \
     "$exe" --gtest_brief=1 >"$log" 2>&1; then status=ok; else status=FAILED; fi
  if [ -n "$(ls -A "$reports")" ]; then status=REPORT; fi
  if [ "$status" != ok ]; then
    echo "$t" >>"$failed_list"
    { tail -n 80 "$log"
      for r in "$reports"/*; do [ -f "$r" ] && { echo "--- $r"; head -n 60 "$r"; }; done
    } >&2
  fi
  printf 'run_asan: %-32s %-6s %4ss\n' "$t" "$status" "$(( $(date +%s) - start ))"
}
export -f run_one
export build failed_list
# The unit test programs $jobs at a time (as ctest -j runs them); the e2e programs, which start
# daemons and measure timeouts and budgets, one at a time.
unit=() e2e=()
for t in "${targets[@]}"; do
  is_e2e=0
  for e in "${E2E[@]}"; do [ "$e" = "$t" ] && is_e2e=1; done
  if [ $is_e2e = 1 ]; then e2e+=("$t"); else unit+=("$t"); fi
done
if [ ${#unit[@]} -gt 0 ]; then
  printf '%s\n' "${unit[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one "$1"' _ {}
fi
for t in "${e2e[@]}"; do run_one "$t"; done
mapfile -t failed <"$failed_list"
if [ ${#failed[@]} -gt 0 ]; then
  echo "run_asan: failed: ${failed[*]} (logs in $build/asan-logs/)" >&2
  exit 1
fi
echo "run_asan: ${#targets[@]} test programs passed under ASan+UBSan"

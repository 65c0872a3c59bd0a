#!/usr/bin/env bash
# Crawler benchmark (docs/BENCHMARKS.md, crawler section). Starts issuescope-simulator and runs
# bench_crawl against it:
#   1. requests of a full crawl and of an unchanged re-crawl of 20k issues / ~100k comments,
#      against the minimum, and the per-issue strategy's requests, at zero latency (which also
#      gives the CPU-bound ingest rate: issues + comments stored per second);
#   2. pages per second at 200 ms latency, 4 repositories crawled at once: 1 token vs 4 tokens;
#   3. peak RSS (/usr/bin/time -v) of a crawl of 100k issues.
# Usage: crawl_bench.sh [--small] --bin BUILD/bin --work DIR
# --small is the bounded form (ctest -L bench): 2k issues, 2 x 300 issues at 200 ms, 5k issues.
set -euo pipefail
source "$(dirname "$0")/bench_sim.sh"
if [[ $SMALL == 1 ]]; then BIG=2000; LAT_ISSUES=300; HUGE=5000; else BIG=20000; LAT_ISSUES=600; HUGE=100000; fi

stat_of() { curl -s "http://127.0.0.1:$PORT/_sim/stats" | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

echo "== 1. request economy, $BIG issues, ~5 comments each, zero latency"
start_sim economy --repo=bench/big:$BIG --comments-per-issue=5 --seed=7
curl -s "http://127.0.0.1:$PORT/_sim/corpus" > "$WORK/economy.corpus.json"
python3 - "$WORK/economy.corpus.json" <<'PY'
import json, math, sys
c = json.load(open(sys.argv[1]))
issues = len(c); comments = sum(e["comments"] for e in c)
print(json.dumps({"phase": "minimum", "issues": issues, "comments": comments,
                  "full_min": 1 + math.ceil(issues / 100) + math.ceil(comments / 100),
                  "recrawl_min": 3}))
PY
"$BIN/bench_crawl" --api "http://127.0.0.1:$PORT" --repos bench/big --data "$WORK/economy.store" \
    --tokens 1 --parallel 1 --recrawl --per-issue
stop_sim

echo "== 2. pages per second at 200 ms latency, 4 repositories at once"
for TOKENS in 1 4; do
  start_sim latency$TOKENS --repo=a/r1:$LAT_ISSUES --repo=a/r2:$LAT_ISSUES --repo=a/r3:$LAT_ISSUES \
      --repo=a/r4:$LAT_ISSUES --comments-per-issue=3 --seed=9 --latency-ms=200
  "$BIN/bench_crawl" --api "http://127.0.0.1:$PORT" --repos a/r1,a/r2,a/r3,a/r4 \
      --data "$WORK/latency$TOKENS.store" --tokens $TOKENS --parallel 4
  echo "{\"phase\": \"latency_check\", \"tokens\": $TOKENS, \"over_budget\": $(stat_of over_budget)}"
  stop_sim
done

echo "== 3. peak RSS of a crawl of $HUGE issues"
start_sim rss --repo=bench/huge:$HUGE --comments-per-issue=1 --seed=3
/usr/bin/time -v "$BIN/bench_crawl" --api "http://127.0.0.1:$PORT" --repos bench/huge \
    --data "$WORK/rss.store" --tokens 1 --parallel 1 2> "$WORK/rss.time"
grep -E "Maximum resident set size|Elapsed" "$WORK/rss.time"
stop_sim

#!/usr/bin/env bash
# End-to-end peak memory of a crawler worker that receives one very large listing page
# (issue 16, item 14): the tracker simulator serves a repository of ISSUES issues whose bodies
# make one GitHub page of about MB MiB (per_page=100); a real coordinator and a real
# issuescope-crawler process crawl it over loopback; the worker's peak RSS (VmHWM) is read from
# /proc when the crawl is done. A baseline run with the same issues and 1 KiB bodies gives the
# worker's footprint without the large page, so the difference is what the page costs.
#
#   tests/bench/page_memory_e2e.sh [--mb 50] [--issues 100] [--build build] [--max-ratio R]
#
# Prints one table row per run and the ratio (large peak - baseline peak) / page size; exits 1
# if a crawl fails or does not finish within 5 minutes, or the ratio exceeds --max-ratio.
# WORKER_PREFIX (e.g. "heaptrack -o FILE") runs the worker under a profiler.
set -euo pipefail
cd "$(dirname "$0")/../.."

mb=50
issues=100
build=build
max_ratio=""
while [ $# -gt 0 ]; do
  case "$1" in
    --mb) mb="$2"; shift 2 ;;
    --issues) issues="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --max-ratio) max_ratio="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "page_memory_e2e: unknown option $1" >&2; exit 2 ;;
  esac
done
bin="$build/bin"
for b in issuescope issuescope-simulator issuescope-coordinator issuescope-crawler; do
  [ -x "$bin/$b" ] || { echo "page_memory_e2e: $bin/$b not built" >&2; exit 2; }
done

work=$(mktemp -d /tmp/issuescope-page-memory.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

wait_port() {  # wait_port FILE: prints the port once the file holds one
  for _ in $(seq 600); do
    if [ -s "$1" ]; then cat "$1"; return 0; fi
    sleep 0.1
  done
  echo "page_memory_e2e: no port in $1" >&2
  return 1
}

# run_case NAME BODY_BYTES: one simulator + coordinator + worker; prints the worker's peak.
run_case() {
  local name="$1" body_bytes="$2" dir="$work/$1"
  mkdir -p "$dir"
  python3 - "$dir/corpus.jsonl" "$issues" "$body_bytes" <<'EOF'
import json, random, sys
path, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(7)
words = ("tensor cuda kernel launch failed memory allocator gradient backward optimizer "
         "checkpoint shard rank nccl timeout compile graph break dtype float16 bfloat16 "
         "attention cache tokenizer batch sequence length scheduler throughput latency").split()
with open(path, "w") as out:
    for i in range(1, n + 1):
        parts, total = [], 0
        while total < size:
            w = rng.choice(words)
            parts.append(w)
            total += len(w) + 1
        ts = f"2024-01-01T00:{i // 60:02d}:{i % 60:02d}Z"
        out.write(json.dumps({"repo": "big/page", "number": i, "title": f"issue {i}",
                              "body": " ".join(parts)[:size], "state": "open", "user": "u",
                              "labels": [], "created_at": ts, "updated_at": ts,
                              "comments": []}) + "\n")
EOF
  "$bin/issuescope-simulator" --corpus "$dir/corpus.jsonl" --listen 127.0.0.1:0 \
    --port-file "$dir/sim.port" >"$dir/sim.log" 2>&1 &
  pids+=($!)
  local sim_port coord_port
  sim_port=$(wait_port "$dir/sim.port")
  "$bin/issuescope-coordinator" --listen 127.0.0.1:0 --port-file "$dir/coord.port" \
    --data "$dir/coord" --insecure-admin >"$dir/coord.log" 2>&1 &
  pids+=($!)
  coord_port=$(wait_port "$dir/coord.port")
  ${WORKER_PREFIX:-} "$bin/issuescope-crawler" --id w1 --listen 127.0.0.1:0 --port-file "$dir/worker.port" \
    --data "$dir/store" --coordinator "127.0.0.1:$coord_port" \
    --github-api "http://127.0.0.1:$sim_port" --max-body-mb $((mb * 2 + 16)) \
    >"$dir/worker.log" 2>&1 &
  local worker=$!
  pids+=($worker)
  wait_port "$dir/worker.port" >/dev/null
  "$bin/issuescope" repos add github:big/page --coordinator "127.0.0.1:$coord_port" \
    --api-url "http://127.0.0.1:$sim_port" >/dev/null
  local start done=""
  start=$(date +%s)
  while [ $(( $(date +%s) - start )) -lt 300 ]; do
    if "$bin/issuescope" status --coordinator "127.0.0.1:$coord_port" --json >"$dir/status.json" \
        2>/dev/null && python3 - "$dir/status.json" "$issues" <<'EOF'
import json, sys
status = json.load(open(sys.argv[1]))
repos = status.get("repositories", [])
ok = bool(repos) and all(int(r.get("crawls_completed", 0)) >= 1 for r in repos)
sys.exit(0 if ok else 1)
EOF
    then done=yes; break; fi
    if ! kill -0 "$worker" 2>/dev/null; then break; fi
    sleep 0.5
  done
  if [ -z "$done" ]; then
    echo "page_memory_e2e: $name: the crawl did not finish; worker log:" >&2
    tail -20 "$dir/worker.log" >&2
    exit 1
  fi
  local hwm page
  hwm=$(awk '/VmHWM/ {print $2}' "/proc/$worker/status")
  page=$(stat -c %s "$dir/corpus.jsonl")
  awk -v n="$name" -v i="$issues" -v p="$page" -v h="$hwm" \
    'BEGIN { printf "| %-9s | %8d | %10.1f | %15.1f |\n", n, i, p / 1048576, h / 1024 }'
  peak_kib[$name]=$hwm
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
}

declare -A peak_kib
echo "| run       |   issues | corpus MiB | worker peak MiB |"
echo "|-----------|---------:|-----------:|----------------:|"
run_case baseline 1024
run_case large $(( mb * 1048576 / issues ))
added=$(awk -v a="${peak_kib[large]}" -v b="${peak_kib[baseline]}" 'BEGIN { print (a - b) / 1024 }')
ratio=$(awk -v d="$added" -v m="$mb" 'BEGIN { printf "%.2f", d / m }')
printf 'the %s MiB page added %.1f MiB to the worker peak: %s x the page\n' "$mb" "$added" "$ratio"
if [ -n "$max_ratio" ] && awk -v r="$ratio" -v m="$max_ratio" 'BEGIN { exit !(r > m) }'; then
  echo "page_memory_e2e: $ratio x the page is over --max-ratio $max_ratio" >&2
  exit 1
fi

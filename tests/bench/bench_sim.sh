# Shared by the crawler benchmark scripts (crawl_bench.sh, graphql_bench.sh); sourced, not run.
# Reads the common arguments `[--small] --bin BUILD/bin --work DIR` into SMALL, BIN and WORK
# (WORK is emptied), and defines start_sim NAME ARGS... (starts issuescope-simulator with ARGS,
# its rate limit SIM_RATE_LIMIT, default 100,000,000 per token, and sets PORT) and stop_sim,
# which also runs on exit.
SMALL=0; BIN=""; WORK=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --small) SMALL=1; shift;;
    --bin) BIN="$2"; shift 2;;
    --work) WORK="$2"; shift 2;;
    *) echo "unknown argument $1" >&2; exit 2;;
  esac
done
[[ -n "$BIN" && -n "$WORK" ]] || { echo "usage: $0 [--small] --bin DIR --work DIR" >&2; exit 2; }
rm -rf "$WORK"; mkdir -p "$WORK"

SIM_PID=""
start_sim() {  # start_sim NAME ARGS... ; sets PORT
  local name="$1"; shift
  rm -f "$WORK/$name.port"
  "$BIN/issuescope-simulator" --port-file="$WORK/$name.port" --threads=16 \
      --rate-limit="${SIM_RATE_LIMIT:-100000000}" --log-level=warn "$@" > "$WORK/$name.sim.log" 2>&1 &
  SIM_PID=$!
  for _ in $(seq 1 600); do [[ -s "$WORK/$name.port" ]] && break; sleep 0.1; done
  PORT=$(cat "$WORK/$name.port")
}
stop_sim() { kill "$SIM_PID" 2>/dev/null || true; wait "$SIM_PID" 2>/dev/null || true; }
trap stop_sim EXIT

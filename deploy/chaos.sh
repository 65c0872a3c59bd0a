#!/usr/bin/env bash
# Runs the chaos suite (label `chaos`): real processes on loopback, workers, the coordinator and
# the indexer killed or paused at random moments, workers added mid-run. Each test logs its seed;
# replay one with ISSUESCOPE_CHAOS_SEED=<seed>. ISSUESCOPE_CHAOS_KILLS sets the worker kills
# (default 6). Assumes deploy/build.sh has run.
set -euo pipefail
cd "$(dirname "$0")/.."
ctest --test-dir build --output-on-failure -L chaos --timeout 900 "$@"

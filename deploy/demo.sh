#!/usr/bin/env bash
# The newcomer's demo: installs dependencies, builds the programs (not the tests), and runs the
# whole cluster end to end on loopback over the tracker simulator (crawl → index → searches →
# incremental re-crawl), then exits. Extra arguments go to `issuescope up --demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
./deploy/install-deps.sh
./deploy/build.sh issuescope-binaries
exec ./build/bin/issuescope up --demo "$@"

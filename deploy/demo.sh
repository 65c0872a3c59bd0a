#!/usr/bin/env bash
# The newcomer's demo: installs dependencies, builds, and runs the whole cluster end to end on
# loopback over the tracker simulator (crawl → index → searches → incremental re-crawl), then exits.
set -euo pipefail
cd "$(dirname "$0")/.."
./deploy/install-deps.sh
./deploy/build.sh
exec ./build/issuescope up --demo "$@"

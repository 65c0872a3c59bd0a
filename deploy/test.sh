#!/usr/bin/env bash
# Installs dependencies, builds, and runs the test suite (unit + end-to-end; the slow `chaos` and
# `bench` labels are excluded here and run with deploy/chaos.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
./deploy/install-deps.sh
./deploy/build.sh
ctest --test-dir build --output-on-failure -j2 -LE 'chaos|bench' --timeout 900

#!/usr/bin/env bash
# Installs dependencies, builds, and runs the test suite (unit + end-to-end; the slow `chaos` and
# `bench` labels and the root-only `multihost` label are excluded here; .ci/run runs them).
set -euo pipefail
cd "$(dirname "$0")/.."
./deploy/install-deps.sh
./deploy/build.sh
ctest --test-dir build --output-on-failure -j2 -LE 'chaos|bench|multihost' --timeout 900

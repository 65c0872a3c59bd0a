#!/usr/bin/env bash
# Configures and builds issuescope into ./build (Ninja, RelWithDebInfo). With arguments, builds
# only those targets (e.g. `deploy/build.sh issuescope-binaries`: the programs, no tests).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" >/dev/null
if [ $# -gt 0 ]; then
  cmake --build build -j"$(nproc)" --target "$@"
else
  cmake --build build -j"$(nproc)"
fi

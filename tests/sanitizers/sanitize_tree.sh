# Sourced by tests/fuzz/run_fuzzers.sh and tests/sanitizers/run_asan.sh: sets $build to the
# sanitizer tree (BUILD_DIR, default build-sanitize) and configures it once with clang ($CXX,
# default clang++), -DISSUESCOPE_FUZZ=ON, -O1 with line tables (fast to compile and run, stack
# traces still name lines). $1 names the calling script in errors.
build="${BUILD_DIR:-build-sanitize}"
cxx="${CXX:-clang++}"
if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "$1: $cxx not found (install Debian's clang)" >&2
  exit 1
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DISSUESCOPE_FUZZ=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only"
fi

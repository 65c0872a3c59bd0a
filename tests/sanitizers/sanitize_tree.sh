# Sourced by tests/fuzz/run_fuzzers.sh, tests/sanitizers/run_asan.sh and run_tsan.sh: sets
# $build to the sanitizer tree and configures it once with clang ($CXX, default clang++), -O1 with
# line tables (fast to compile and run, stack traces still name lines). $1 names the calling
# script in errors. The tree is BUILD_DIR, else $sanitize_default_dir (default build-sanitize);
# its CMake switch is $sanitize_option (default ISSUESCOPE_FUZZ: ASan+UBSan and the fuzz targets;
# run_tsan.sh sets ISSUESCOPE_TSAN and build-tsan).
build="${BUILD_DIR:-${sanitize_default_dir:-build-sanitize}}"
cxx="${CXX:-clang++}"
if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "$1: $cxx not found (install Debian's clang)" >&2
  exit 1
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" "-D${sanitize_option:-ISSUESCOPE_FUZZ}=ON" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only"
fi

#!/usr/bin/env bash
# Installs issuescope's build and test dependencies from Debian 12's packages.
set -euo pipefail
PACKAGES=(
  build-essential cmake ninja-build pkg-config
  # LLVM's linker: links the test programs in a quarter of GNU ld's time (CMakeLists.txt).
  lld
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  librocksdb-dev libxapian-dev xapian-tools libabsl-dev libgtest-dev libgmock-dev libre2-dev
  libcurl4-openssl-dev nlohmann-json3-dev libcpp-httplib-dev libcli11-dev libtomlplusplus-dev
  libspdlog-dev libfmt-dev libzstd-dev zlib1g-dev
  # TLS: OpenSSL headers (common/tls.cc checks keys against certificates; cpp-httplib's HTTPS)
  # and the openssl command the TLS tests make their certificates with.
  libssl-dev openssl
  # Benchmarks (peak RSS, SQLite FTS5 baseline), the browser test and the example clients.
  time sqlite3 libsqlite3-dev xapian-omega chromium chromium-driver python3-grpcio python3-grpc-tools python3-protobuf
  # The relevance benchmark (tests/relevance): Xapian's stock BM25 as a peer.
  python3-xapian
  # The multi-host tests (network namespaces, tc) and the manifest check (deploy/k8s).
  iproute2 python3-yaml
  # libFuzzer targets and sanitizer runtimes (tests/fuzz; libclang-rt is only a recommendation
  # of clang, which --no-install-recommends skips).
  clang libclang-rt-14-dev
)
# Node.js with npm (browser test, Node client): Debian's packages unless a node is present.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  PACKAGES+=(nodejs npm)
fi
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
else
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# npm packages of the browser test (playwright-core, driving Debian's chromium) and the Node
# client, pinned by their package-lock.json files.
cd "$(dirname "$0")/.."
for dir in tests/web search/clients/node; do
  if [ ! -d "$dir/node_modules" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules" ]; then
    echo "install-deps: npm ci in $dir"
    npm ci --no-audit --no-fund --loglevel=error --prefix "$dir"
    touch "$dir/node_modules"
  fi
done

#!/usr/bin/env bash
# Builds the issuescope container image from Debian's packages only (issue 18): mmdebstrap makes
# a minimal Debian 12 root file system from this machine's apt sources (no image registry, no
# download beyond Debian's archive) with exactly the shared libraries the built daemons load
# (found with ldd, mapped to their packages with dpkg -S), and the daemons and the CLI go to
# /usr/local/bin without their debug information. Debian's xapian-tools is added for index
# replication (xapian-replicate-server on the index host, xapian-replicate run by
# issuescope-search --replicate-from). The result is a root file system tarball; with podman or
# docker present it is imported as an image.
#
#   deploy/container/build-image.sh [--build build] [--out issuescope-rootfs.tar]
#                                   [--tag issuescope:latest] [--check]
#
# --check unpacks the tarball and runs every program's --help in it with chroot (needs root),
# which proves the image has every library its programs need. Needs mmdebstrap (Debian package)
# and root (or mmdebstrap's unshare mode).
set -euo pipefail
cd "$(dirname "$0")/../.."

build=build
out=issuescope-rootfs.tar
tag=issuescope:latest
check=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --tag) tag="$2"; shift 2 ;;
    --check) check=yes; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "build-image: unknown option $1" >&2; exit 2 ;;
  esac
done
command -v mmdebstrap >/dev/null || { echo "build-image: install mmdebstrap" >&2; exit 2; }
PROGRAMS=(issuescope issuescope-coordinator issuescope-crawler issuescope-indexer
          issuescope-search issuescope-shard-server issuescope-bulk-index)
for p in "${PROGRAMS[@]}"; do
  [ -x "$build/bin/$p" ] || { echo "build-image: $build/bin/$p not built" >&2; exit 2; }
done

# The packages of every shared library the programs load.
mapfile -t packages < <(
  for p in "${PROGRAMS[@]}"; do ldd "$build/bin/$p"; done |
    awk '$3 ~ /^\// {print $3}' | sort -u |
    while read -r lib; do
      dpkg -S "$(readlink -f "$lib")" 2>/dev/null || dpkg -S "$lib" 2>/dev/null || true
    done | cut -d: -f1 | sort -u)
[ ${#packages[@]} -gt 0 ] || { echo "build-image: no package found for the libraries" >&2; exit 1; }
echo "build-image: ${#packages[@]} runtime packages: ${packages[*]}"

sources=$(mktemp)
stage=$(mktemp -d)
trap 'rm -rf "$sources" "$stage"' EXIT
# Without debug information (a RelWithDebInfo CLI is over 100 MB with it).
for p in "${PROGRAMS[@]}"; do strip --strip-debug -o "$stage/$p" "$build/bin/$p"; done
cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list \
  2>/dev/null > "$sources" || true
hooks=()
for p in "${PROGRAMS[@]}"; do
  hooks+=(--customize-hook="copy-in $stage/$p /usr/local/bin")
done
include=$(IFS=,; echo "${packages[*]},ca-certificates,xapian-tools")
mmdebstrap --variant=apt --include="$include" "${hooks[@]}" \
  --customize-hook='chroot "$1" useradd --system --home-dir /data --shell /usr/sbin/nologin issuescope' \
  bookworm "$out" - < "$sources"
echo "build-image: wrote $out ($(du -h "$out" | cut -f1))"

if [ -n "$check" ]; then
  root=$(mktemp -d)
  tar -C "$root" -xf "$out"
  for p in "${PROGRAMS[@]}"; do
    if ! chroot "$root" "/usr/local/bin/$p" --help >/dev/null 2>&1; then
      echo "build-image: $p does not run in the image:" >&2
      chroot "$root" "/usr/local/bin/$p" --help 2>&1 | head -5 >&2
      rm -rf "$root"
      exit 1
    fi
  done
  for p in /usr/bin/xapian-replicate-server /usr/bin/xapian-replicate; do
    if ! chroot "$root" "$p" --help >/dev/null 2>&1; then
      echo "build-image: $p does not run in the image (xapian-tools)" >&2
      rm -rf "$root"
      exit 1
    fi
  done
  rm -rf "$root"
  echo "build-image: every program runs in the image"
fi

for runtime in podman docker; do
  if command -v "$runtime" >/dev/null && "$runtime" info >/dev/null 2>&1; then
    "$runtime" import --change 'USER issuescope' --change 'WORKDIR /data' "$out" "$tag"
    echo "build-image: imported as $tag with $runtime"
    exit 0
  fi
done
echo "build-image: no running podman or docker; import $out with '<runtime> import $out $tag'"

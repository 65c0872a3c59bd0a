#!/bin/sh
# Makes the certificates of the Secret `issuescope-tls` the manifests mount (issue 18), offline,
# with openssl only:
#
#   deploy/k8s/make-tls-secret.sh DIR [WORKERS]        (WORKERS: the worker replicas, default 3)
#   kubectl create secret generic issuescope-tls --from-file=DIR/secret
#
#   deploy/k8s/make-tls-secret.sh DIR --issue FILE NAME...
#       one more certificate from the same CA, in DIR/issued (not in the Secret): FILE.crt and
#       FILE.key naming every NAME (IP:ADDRESS for an address), and ca.crt; for Prometheus, an operator's CLI, or the hosts
#       of deploy/systemd (deploy/systemd/README.md)
#
# DIR/ca holds the CA's key: keep it offline, never in a Secret. DIR/secret holds the Secret's
# keys, one file each:
#   ca.crt                          the CA every daemon trusts (servers: --tls-client-ca; clients:
#                                   --tls-ca, --store-tls-ca)
#   coordinator.crt, .key           server: issuescope-coordinator (gRPC 50050, metrics 9090)
#   issuescope-worker-N.crt, .key   one per worker pod, naming its --id (the pod's name), which
#                                   the coordinator (--tls-client-ca) requires of its calls, and
#                                   its store's address issuescope-worker-N.issuescope-workers,
#                                   which the indexer verifies: the store's server certificate
#                                   and the worker's client certificate at once. (A wildcard
#                                   *.issuescope-workers would not do: gRPC matches a wildcard
#                                   only under a name holding a dot.)
#   indexer.crt, .key               client: names the indexer's --id, issuescope-index-0; shown to
#                                   the coordinator and to the stores
#   search.crt, .key                server: issuescope-search, issuescope-search-replicas (gRPC
#                                   50051 and HTTPS 8080)
# With NAMESPACE set every name is also issued as NAME.NAMESPACE.svc. SEARCH_NAMES and
# COORDINATOR_NAMES (space-separated) add names the search service and the coordinator are
# reached at from outside the cluster (localhost for `kubectl port-forward`). Re-running
# keeps what exists and adds what is missing: after `kubectl scale statefulset issuescope-worker
# --replicas=5`, run it with 5 and replace the Secret (kubectl create secret ... --dry-run=client
# -o yaml | kubectl apply -f -). Delete a certificate's files to issue it again. Keys are ECDSA
# P-256; certificates last DAYS days (default 825), the CA 3650.
set -eu

usage() {
  echo "usage: $0 DIR [WORKERS] | $0 DIR --issue FILE NAME..." >&2
  exit 2
}
[ $# -ge 1 ] || usage
dir=$1
shift
days=${DAYS:-825}
namespace=${NAMESPACE:-}

umask 077
ca=$dir/ca
mkdir -p "$ca"
if [ ! -f "$ca/ca.key" ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
    -subj "/CN=issuescope CA" -keyout "$ca/ca.key" -out "$ca/ca.crt" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    2>/dev/null
fi

# issue FILE NAME... [-- NAME...]: $out/FILE.crt and $out/FILE.key, common name the first NAME,
# every NAME a DNS subject alternative name (and, before --, NAME.NAMESPACE.svc; IP:ADDRESS an
# address); a certificate for servers and clients alike. Kept when it exists.
issue() {
  file=$1
  shift
  if [ -f "$out/$file.crt" ] && [ -f "$out/$file.key" ]; then return 0; fi
  san=
  cluster=yes
  for name in "$@"; do
    if [ "$name" = -- ]; then cluster=no; continue; fi
    case $name in
      IP:*) san="${san:+$san,}$name"; continue ;;  # an address: IP:10.0.0.5
    esac
    san="${san:+$san,}DNS:$name"
    if [ -n "$namespace" ] && [ $cluster = yes ]; then san="$san,DNS:$name.$namespace.svc"; fi
  done
  printf '%s\n' "subjectAltName=$san" "basicConstraints=critical,CA:FALSE" \
    "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth,clientAuth" \
    > "$ca/$file.ext"
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$1" \
    -keyout "$out/$file.key" -out "$ca/$file.csr" 2>/dev/null
  openssl x509 -req -in "$ca/$file.csr" -CA "$ca/ca.crt" -CAkey "$ca/ca.key" \
    -CAcreateserial -CAserial "$ca/ca.srl" -days "$days" -extfile "$ca/$file.ext" \
    -out "$out/$file.crt" 2>/dev/null
  rm -f "$ca/$file.csr" "$ca/$file.ext"
  chmod 0644 "$out/$file.crt"
}

if [ "${1:-}" = --issue ]; then
  [ $# -ge 3 ] || usage
  shift
  out=$dir/issued
  mkdir -p "$out"
  cp "$ca/ca.crt" "$out/ca.crt"
  chmod 0644 "$out/ca.crt"
  issue "$@"
  echo "made $out/$1.crt and $out/$1.key"
  exit 0
fi

[ $# -le 1 ] || usage
workers=${1:-3}
case $workers in
  '' | *[!0-9]*) echo "$0: WORKERS must be a number, not '$workers'" >&2; exit 2 ;;
esac
out=$dir/secret
mkdir -p "$out"
cp "$ca/ca.crt" "$out/ca.crt"
chmod 0644 "$out/ca.crt"
# shellcheck disable=SC2086 # COORDINATOR_NAMES and SEARCH_NAMES are lists
issue coordinator issuescope-coordinator -- ${COORDINATOR_NAMES:-}
issue indexer issuescope-index-0
# shellcheck disable=SC2086
issue search issuescope-search issuescope-search-replicas -- ${SEARCH_NAMES:-}
i=0
while [ "$i" -lt "$workers" ]; do
  issue "issuescope-worker-$i" "issuescope-worker-$i" "issuescope-worker-$i.issuescope-workers"
  i=$((i + 1))
done
echo "made $out: kubectl create secret generic issuescope-tls --from-file=$out"

#!/usr/bin/env bash
# Rebuilds the shipped default model indexer/taxonomies/llm-dl-1.model (embedded in the binaries,
# indexer/embedded_model.h) from the labelled development sets devset-1, devset-2 and devset-3
# (1,820 real issues; our labels, texts joined from ../shared/data) plus NLBSE'24's training split
# (kind only), with the options chosen by leave-one-repository-out on devset-1 alone and tested on the
# held-out devset-2 (docs/TAXONOMY.md, "The shipped model"; evaluate-heldout.sh). Deterministic:
# the same inputs give the same bytes. Needs ../shared/data (or $ISSUESCOPE_SHARED_DATA).
#
#   indexer/taxonomies/train-default-model.sh [--bin BUILD/bin] [--out FILE] [--cv]
#
# --cv   also prints the leave-one-repository-out scores of these options on the three sets (6
#        folds, about 45 s).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=build/bin
out=indexer/taxonomies/llm-dl-1.model
cv=0
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --cv) cv=1; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "train-default-model: unknown argument $1" >&2; exit 2 ;;
  esac
done
# shellcheck source=model-options.sh
source indexer/taxonomies/model-options.sh train-default-model
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 tests/realdata/devset.py join indexer/taxonomies/devset/adjudicated.jsonl \
  --out "$work/devset1.jsonl"
python3 tests/realdata/devset.py join indexer/taxonomies/devset-2/adjudicated.jsonl \
  --out "$work/devset2.jsonl"
python3 tests/realdata/devset.py join indexer/taxonomies/devset-3/adjudicated.jsonl \
  --out "$work/devset3.jsonl"
cat "$work/devset1.jsonl" "$work/devset2.jsonl" "$work/devset3.jsonl" > "$work/devset.jsonl"
# No llm head: trained on devset-1 it learns "is it vLLM" (docs/TAXONOMY.md); the rules decide.
python3 -c 'import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line); r.pop("llm", None); print(json.dumps(r))' "$work/devset.jsonl" \
  > "$work/devset-nollm.jsonl"
if [ "$cv" = 1 ]; then
  "$bin/issuescope" taxonomy cv --data "$work/devset-nollm.jsonl" --folds 6 "${options[@]}"
fi
"$bin/issuescope" taxonomy train --data "$work/devset-nollm.jsonl" "${options[@]}" \
  --name llm-dl-1-devset123-nlbse24 --compact --out "$out"
ls -l "$out"

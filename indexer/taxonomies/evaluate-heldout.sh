#!/usr/bin/env bash
# The taxonomy tagger on held-out real issues (docs/TAXONOMY.md, "Held out: devset-2"): models
# with the shipped options (the ones train-default-model.sh uses, chosen on devset-1 alone) are
# trained on devset-1 (+ NLBSE'24's training split, kind only) and scored on devset-2, which no
# option choice has seen; rules and labels alone are scored beside them, and a model trained on
# devset-1 + devset-3 (600 more labelled issues, none from devset-2). Then the learning
# curve: devset-2 split in two halves by a hash of each reference; each half is scored by a
# model trained on devset-1 alone and by one trained on devset-1 plus the other half, so the
# gain from more labelled issues is measured on issues neither model saw. Needs ../shared/data
# (or $ISSUESCOPE_SHARED_DATA); about a minute.
#
#   indexer/taxonomies/evaluate-heldout.sh [--bin BUILD/bin]
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=build/bin
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "evaluate-heldout: unknown argument $1" >&2; exit 2 ;;
  esac
done
# shellcheck source=model-options.sh
source indexer/taxonomies/model-options.sh evaluate-heldout
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 tests/realdata/devset.py join indexer/taxonomies/devset/adjudicated.jsonl --out "$work/d1.jsonl"
python3 tests/realdata/devset.py join indexer/taxonomies/devset-2/adjudicated.jsonl --out "$work/d2.jsonl"
python3 tests/realdata/devset.py join indexer/taxonomies/devset-3/adjudicated.jsonl --out "$work/d3.jsonl"
# Training files without llm (the rules decide it), and devset-2's two halves.
python3 - "$work" <<'PY'
import hashlib, json, sys
w = sys.argv[1]
def rows(name):
    return [json.loads(l) for l in open(f"{w}/{name}.jsonl")]
def write(name, rs, drop_llm):
    with open(f"{w}/{name}.jsonl", "w") as f:
        for r in rs:
            r = dict(r)
            if drop_llm:
                r.pop("llm", None)
            f.write(json.dumps(r) + "\n")
d1, d2, d3 = rows("d1"), rows("d2"), rows("d3")
half = lambda r: int(hashlib.sha256(r["id"].encode()).hexdigest(), 16) % 2
h = [[r for r in d2 if half(r) == k] for k in (0, 1)]
write("d1-train", d1, True)
write("d13-train", d1 + d3, True)
for k in (0, 1):
    write(f"h{k}", h[k], False)
    write(f"d1h{k}-train", d1 + h[k], True)
print(f"devset-1 {len(d1)}, devset-2 {len(d2)} (halves {len(h[0])} and {len(h[1])}), "
      f"devset-3 {len(d3)}")
PY
train() {  # train DATA OUT
  "$bin/issuescope" taxonomy train --data "$1" "${options[@]}" --name heldout --compact \
    --out "$2" >/dev/null
}
score() {  # score MODEL DATA [RESAMPLES] -> accuracy per field (95% interval with RESAMPLES)
  "$bin/issuescope" taxonomy eval --model "$1" --data "$2" --bootstrap "${3:-0}" --json |
    python3 -c 'import json, sys
out = []
for line in sys.stdin:
    f = json.loads(line)
    s = "%s %.3f" % (f["field"], f["accuracy"])
    b = f.get("bootstrap", {}).get("accuracy")
    if b:
        s += " [%.3f, %.3f]" % tuple(b)
    out.append(s)
print(", ".join(out))'
}
train "$work/d1-train.jsonl" "$work/d1.model"
echo "== devset-2 held out (600 issues)"
echo "rules and labels only:  $(score none "$work/d2.jsonl" 1000)"
echo "model of devset-1:      $(score "$work/d1.model" "$work/d2.jsonl" 1000)"
train "$work/d13-train.jsonl" "$work/d13.model"
echo "model of devset-1 + 3:  $(score "$work/d13.model" "$work/d2.jsonl" 1000)"
echo "== learning curve: each half of devset-2, scored by models that did not see it"
for k in 0 1; do
  other=$((1 - k))
  train "$work/d1h$other-train.jsonl" "$work/d1h$other.model"
  echo "half $k, rules only:          $(score none "$work/h$k.jsonl")"
  echo "half $k, devset-1:            $(score "$work/d1.model" "$work/h$k.jsonl")"
  echo "half $k, devset-1 + half $other:   $(score "$work/d1h$other.model" "$work/h$k.jsonl")"
done

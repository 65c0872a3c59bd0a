#!/usr/bin/env python3
"""The labelled development set of real issues (docs/LABELLING.md).

  devset.py sample [--set 2] > indexer/taxonomies/devset[-2]/sample.txt  # the seeded choice of refs
  devset.py packets --out DIR [--chunks 3] [--set 2]         # annotator packets (texts, not kept)
  devset.py join LABELS.jsonl [--out FILE]                   # labels + texts -> training JSONL
  devset.py check LABELS.jsonl [--packet FILE]               # ids valid, every packet issue once
  devset.py disagreements A.jsonl B.jsonl --out FILE         # adjudication packet (texts, not kept)
  devset.py merge A.jsonl B.jsonl --decisions D.jsonl [--set 2] > adjudicated.jsonl

The project keeps the references and the labels; the texts stay in ../shared and are joined at run
time. Without ../shared every command says so and exits 0 with nothing written (`join` exits 2).
"""
import argparse
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import shared_issues  # noqa: E402

SEED = 20261203
# Per set and source: how many issues the set takes (sets 1 and 2: >= 40 % LLM-related, all of
# them vLLM). Sets 2 and 3 are drawn from what the earlier sets left, each with its own seed, so
# no two sets share an issue.
SETS = {
    1: dict(seed=SEED, dir="devset",
            quotas=[("vllm", 300), ("mhnurf-pytorch", 120), ("mhnurf-keras", 70),
                    ("mhnurf-incubator-mxnet", 50), ("mhnurf-caffe", 20), ("tf-silent", 60)]),
    2: dict(seed=SEED + 1001, dir="devset-2",
            quotas=[("vllm", 250), ("mhnurf-pytorch", 140), ("mhnurf-keras", 90),
                    ("mhnurf-incubator-mxnet", 70), ("mhnurf-caffe", 33), ("tf-silent", 17)]),
    # Set 3 takes every vLLM issue the first two left and fills up from MHNurf's threads: a
    # training set (fewer than 40 % LLM-related), labelled and adjudicated the same way.
    3: dict(seed=SEED + 2002, dir="devset-3",
            quotas=[("vllm", 126), ("mhnurf-pytorch", 200), ("mhnurf-keras", 120),
                    ("mhnurf-incubator-mxnet", 100), ("mhnurf-caffe", 54)]),
}
HERE = os.path.dirname(os.path.abspath(__file__))


def sample_path(set_no):
    return os.path.join(HERE, "../../indexer/taxonomies", SETS[set_no]["dir"], "sample.txt")


def read_refs(path):
    return [l.strip() for l in open(path) if l.strip() and not l.startswith("#")]


def need_shared():
    data = shared_issues.find_shared()
    if data is None:
        print("devset: ../shared/data not found; nothing to do (set ISSUESCOPE_SHARED_DATA)",
              file=sys.stderr)
    return data


def sample(issues, set_no=1):
    spec = SETS[set_no]
    taken = set()
    for earlier in range(1, set_no):
        taken.update(read_refs(sample_path(earlier)))
    rng = random.Random(spec["seed"])
    refs = []
    for source, quota in spec["quotas"]:
        pool = sorted((i for i in issues.values() if i["source"] == source and i["ref"] not in taken),
                      key=lambda i: i["number"])
        refs += [i["ref"] for i in rng.sample(pool, min(quota, len(pool)))]
    return refs


def clip(text, head, tail=600):
    text = text or ""
    if len(text) <= head + tail:
        return text
    return text[:head] + f"\n[... {len(text) - head - tail} characters cut ...]\n" + text[-tail:]


def packet_text(issue):
    parts = [f"=== {issue['ref']}", f"title: {issue['title']}",
             f"labels: {', '.join(issue['labels']) or '(none)'}", "body:", clip(issue["body"], 3500)]
    for k, c in enumerate(issue["comments"][:3]):
        parts += [f"comment {k + 1}:", clip(c, 700, 200)]
    return "\n".join(parts) + "\n"


def taxonomy_ids():
    import tomllib
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../indexer/taxonomies/llm-dl-1.toml")
    tax = tomllib.load(open(path, "rb"))
    kinds, themes, subs = set(), set(), set()
    for k in tax["kind"]:
        kinds.add(k["id"])
        for t in k.get("theme", []):
            themes.add(f"{k['id']}.{t['id']}")
            for s in t.get("subtheme", []):
                subs.add(f"{k['id']}.{t['id']}.{s['id']}")
    return kinds, themes, subs


def check(labels_path, packet):
    kinds, themes, subs = taxonomy_ids()
    errors, refs = [], []
    for n, line in enumerate(open(labels_path, encoding="utf-8"), 1):
        if not line.strip():
            continue
        try:
            x = json.loads(line)
        except json.JSONDecodeError as e:
            errors.append(f"line {n}: not JSON: {e}")
            continue
        refs.append(x.get("ref"))
        kind, theme, sub = x.get("kind"), x.get("theme"), x.get("subtheme") or ""
        if kind not in kinds:
            errors.append(f"line {n}: kind {kind!r} is not one of {sorted(kinds)}")
        if theme not in themes or not str(theme).startswith(f"{kind}."):
            errors.append(f"line {n}: theme {theme!r} is not a theme of kind {kind!r}")
        if sub and (sub not in subs or not sub.startswith(f"{theme}.")):
            errors.append(f"line {n}: subtheme {sub!r} is not a sub-theme of {theme!r}")
        if not isinstance(x.get("llm"), bool):
            errors.append(f"line {n}: llm must be true or false")
    if packet:
        want = [l[4:].strip() for l in open(packet, encoding="utf-8") if l.startswith("=== ")]
        missing = [r for r in want if r not in refs]
        extra = [r for r in refs if r not in want]
        dup = sorted({r for r in refs if refs.count(r) > 1})
        if missing:
            errors.append(f"{len(missing)} issues of the packet not labelled: {missing[:10]}")
        if extra:
            errors.append(f"{len(extra)} refs not in the packet: {extra[:10]}")
        if dup:
            errors.append(f"labelled more than once: {dup[:10]}")
    for e in errors:
        print(e)
    print(f"{len(refs)} labels, {len(errors)} problems")
    return 1 if errors else 0


FIELDS = ("kind", "theme", "subtheme", "llm")


def read_labels(path):
    out = {}
    for line in open(path, encoding="utf-8"):
        if line.strip():
            x = json.loads(line)
            x["subtheme"] = x.get("subtheme") or ""
            out[x["ref"]] = x
    return out


def differing(a, b):
    return [f for f in FIELDS if a.get(f) != b.get(f)]


def disagreements(issues, a_path, b_path, out_path):
    """Writes, for every issue the two passes label differently, both labels and the text."""
    a, b = read_labels(a_path), read_labels(b_path)
    n = 0
    with open(out_path, "w", encoding="utf-8") as f:
        for ref in a:
            if ref not in b or not differing(a[ref], b[ref]):
                continue
            n += 1
            show = lambda x: json.dumps({k: x.get(k) for k in FIELDS})
            f.write(f"### disagreement on {', '.join(differing(a[ref], b[ref]))}\n"
                    f"pass A: {show(a[ref])}\npass B: {show(b[ref])}\n")
            f.write(packet_text(issues[ref]) + "\n")
    print(f"{n} disagreements of {len(a)} issues written to {out_path}", file=sys.stderr)


def merge(a_path, b_path, decisions_path, set_no):
    """Prints the adjudicated labels in sample order: the agreed label, else the decision."""
    a, b = read_labels(a_path), read_labels(b_path)
    decided = read_labels(decisions_path) if decisions_path else {}
    problems = 0
    for ref in read_refs(sample_path(set_no)):
        if ref not in a or ref not in b:
            print(f"merge: {ref} is missing from a pass", file=sys.stderr)
            problems += 1
            continue
        if not differing(a[ref], b[ref]):
            row = {k: a[ref][k] for k in FIELDS}
            row["reason"] = "both passes agreed"
        elif ref in decided and decided[ref].get("reason"):
            row = {k: decided[ref][k] for k in FIELDS}
            row["reason"] = decided[ref]["reason"]
        else:
            print(f"merge: {ref}: the passes differ and no decision with a reason was given",
                  file=sys.stderr)
            problems += 1
            continue
        print(json.dumps({"ref": ref, **row}, ensure_ascii=False))
    return 1 if problems else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample")
    s.add_argument("--set", type=int, choices=sorted(SETS), default=1,
                   help="which development set (2 is disjoint from 1)")
    p = sub.add_parser("packets")
    p.add_argument("--out", required=True)
    p.add_argument("--chunks", type=int, default=3)
    p.add_argument("--set", type=int, choices=sorted(SETS), default=1)
    p.add_argument("--sample", help="a sample file (default: the set's sample.txt)")
    j = sub.add_parser("join")
    j.add_argument("labels")
    j.add_argument("--out", default="-")
    c = sub.add_parser("check")
    c.add_argument("labels")
    c.add_argument("--packet")
    d = sub.add_parser("disagreements")
    d.add_argument("a")
    d.add_argument("b")
    d.add_argument("--out", required=True)
    m = sub.add_parser("merge")
    m.add_argument("a")
    m.add_argument("b")
    m.add_argument("--decisions", help="JSONL of the adjudicator's labels, each with a reason")
    m.add_argument("--set", type=int, choices=sorted(SETS), default=1)
    args = ap.parse_args()
    if args.cmd == "check":
        sys.exit(check(args.labels, args.packet))
    if args.cmd == "merge":
        sys.exit(merge(args.a, args.b, args.decisions, args.set))

    data = need_shared()
    if data is None:
        sys.exit(2 if args.cmd == "join" else 0)
    issues = shared_issues.load_all(data)
    if args.cmd == "sample":
        print("\n".join(sample(issues, args.set)))
    elif args.cmd == "packets":
        refs = read_refs(args.sample or sample_path(args.set))
        os.makedirs(args.out, exist_ok=True)
        rng = random.Random(SETS[args.set]["seed"] + 1)
        order = refs[:]
        rng.shuffle(order)  # every chunk mixes sources
        size = -(-len(order) // args.chunks)
        for c in range(args.chunks):
            with open(os.path.join(args.out, f"chunk-{c + 1}.txt"), "w", encoding="utf-8") as f:
                for ref in order[c * size:(c + 1) * size]:
                    f.write(packet_text(issues[ref]) + "\n")
    elif args.cmd == "disagreements":
        disagreements(issues, args.a, args.b, args.out)
    elif args.cmd == "join":
        out = sys.stdout if args.out == "-" else open(args.out, "w", encoding="utf-8")
        missing = 0
        for line in open(args.labels, encoding="utf-8"):
            if not line.strip():
                continue
            label = json.loads(line)
            issue = issues.get(label["ref"])
            if issue is None:
                missing += 1
                continue
            rec = {"id": label["ref"], "repo": issue["repo"], "title": issue["title"],
                   "body": issue["body"], "labels": issue["labels"]}
            for field in ("kind", "theme", "subtheme", "llm"):
                if field in label and label[field] not in (None, ""):
                    rec[field] = label[field]
            out.write(json.dumps(rec, ensure_ascii=False) + "\n")
        if missing:
            print(f"devset join: {missing} labelled refs not found in ../shared", file=sys.stderr)


if __name__ == "__main__":
    main()

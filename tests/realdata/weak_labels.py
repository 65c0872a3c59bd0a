#!/usr/bin/env python3
"""Weakly labelled, training-only records from ../shared/data, for `issuescope taxonomy cv|train
--also-train FILE` (stdlib only).

  weak_labels.py --out /tmp/weak            # one JSONL per source/mapping, counts on stderr

Every record is {id, repo, title, body, labels, kind[, theme[, subtheme]], weak}: the kind and the
theme come from the source's own labels (GitHub labels, vLLM issue-template title prefixes, the
datasets' annotations) through the mappings below and the taxonomy's own [labels] tables; a record
gets a theme only where the label clearly implies one. Issues of the development set (the refs of
indexer/taxonomies/devset/sample.txt, and for sources without issue numbers every record whose
title equals a development-set title) are never emitted. The texts are read at run time and are
written only to --out (outside the project); nothing from ../shared is kept in the project.

Files (see SOURCES below): vllm (kind from template prefix / labels, theme where the label implies
it), vllm-kind (same records, kind only), mhnurf-perf (MHNurf class 1 -> bug.performance),
mhnurf-labels (MHNurf class 0 with a kind from its labels, theme from pytorch module labels),
tosem (TOSEM bug-fix PR titles, kind bug, theme from symptom/root cause where clear), tosem-kind,
tf-silent (the silent bugs not in the devset, kind bug), keras-voting (TF/Keras bug titles, kind
bug, theme from comp:/type: labels), gt (GT_torch/GT_tf: Is Bug True -> bug, False with a
feature/question label -> that kind), torch-open / tf-open (titles + labels, kind and theme
from labels only; the torch kind falls back to the study's predicted Final_Is_Bug only when the
labels allow both bug and another kind).
"""
import argparse
import ast
import csv
import glob
import json
import os
import re
import sys
import tomllib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import shared_issues  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TAXONOMY = os.path.join(HERE, "../../indexer/taxonomies/llm-dl-1.toml")
DEVSET = os.path.join(HERE, "../../indexer/taxonomies/devset/sample.txt")
TOSEM = "labeled/dl-framework-bugs-tosem/dataset.xlsx__data.csv"
GT_DIR = "labeled/tf-vs-pytorch-study/Evolution_Over_Bugs/Issues_classifier/ML_Model_Training/Mapped_Data"
VOTING = "labeled/silent-bugs-tf-keras/Manual_Labelling/Keras_Bugs_Sheets_r.xlsx__Issues_Voting.csv"
csv.field_size_limit(10**9)


def norm_label(l):
    return re.sub(r"\s*:\s*", ":", l.strip().lower())


class Taxonomy:
    def __init__(self, path=TAXONOMY):
        t = tomllib.load(open(path, "rb"))
        self.themes, self.subs = set(), set()
        for k in t["kind"]:
            for th in k.get("theme", []):
                self.themes.add(f"{k['id']}.{th['id']}")
                for s in th.get("subtheme", []):
                    self.subs.add(f"{k['id']}.{th['id']}.{s['id']}")
        self.labels = {}
        for scope, table in t.get("labels", {}).items():
            self.labels[scope] = {norm_label(k): ([v] if isinstance(v, str) else list(v))
                                  for k, v in table.items()}

    def targets(self, label, repo):
        l = norm_label(label)
        return self.labels.get(repo, {}).get(l) or self.labels["global"].get(l) or []


TAX = Taxonomy()

# Extra label -> node mappings for labels the taxonomy does not list, used only where the label
# clearly implies the node. Keys are normalised labels; values as in the taxonomy.
EXTRA = {
    "vllm-project/vllm": {
        "rocm": ["bug.hardware.other-backend", "requirement.capability.hardware-support"],
        "tpu": ["bug.hardware.other-backend", "requirement.capability.hardware-support"],
        "aws-neuron": ["bug.hardware.other-backend", "requirement.capability.hardware-support"],
        "x86-cpu": ["bug.hardware.other-backend", "requirement.capability.hardware-support"],
        "ray": ["bug.distributed"],
        "torch.compile": ["bug.compilation"],
        "structured-output": ["bug.inference.serving-api"],
        "tool-calling": ["bug.inference.serving-api"],
        "speculative-decoding": ["bug.inference.generation"],
        "release": ["requirement.ecosystem"],
        "startup-ux": ["bug.performance.startup", "requirement.efficiency.speed"],
        "usage": ["question.usage"],
        "installation": ["bug.environment.install-build", "question.environment.setup"],
        "new-model": ["requirement.capability.model-support"],
    },
    "tensorflow/tensorflow": {
        "comp:tpus": ["bug.hardware.other-backend", "requirement.capability.hardware-support"],
        "comp:autograph": ["bug.compilation.graph-capture"],
        "type:build/install": ["bug.environment.install-build", "question.environment.setup"],
    },
}

KIND_LABELS = {
    "bug": "bug", "type:bug": "bug", "kind/bug": "bug", "bug report": "bug",
    "type:docs-bug": "bug", "module: regression": "bug", "regression issue": "bug",
    "feature request": "requirement", "feature": "requirement", "enhancement": "requirement",
    "type:feature": "requirement", "rfc": "requirement", "new-model": "requirement",
    "question": "question", "usage": "question", "type:support": "question",
}


def label_kinds(labels):
    return {KIND_LABELS[norm_label(l)] for l in labels if norm_label(l) in KIND_LABELS}


def label_nodes(labels, repo):
    out = []
    for l in labels:
        out += EXTRA.get(repo, {}).get(norm_label(l), []) or TAX.targets(l, repo)
    return [n for n in out if n.count(".") >= 1]


def theme_of(nodes, kind):
    """(theme, subtheme) of the first node of `kind` (subtheme only when given)."""
    for n in nodes:
        parts = n.split(".")
        if parts[0] != kind:
            continue
        theme = ".".join(parts[:2])
        if theme not in TAX.themes:
            continue
        sub = n if len(parts) == 3 and n in TAX.subs else ""
        return theme, sub
    return "", ""


def record(rid, repo, title, body, labels, kind, theme="", sub="", weak=""):
    r = {"id": rid, "repo": repo, "title": title, "body": body, "labels": labels, "kind": kind}
    if theme:
        assert theme in TAX.themes and theme.startswith(kind + "."), theme
        r["theme"] = theme
        if sub:
            r["subtheme"] = sub
    r["weak"] = weak
    return r


def norm_title(t):
    return re.sub(r"\W+", " ", t.lower()).strip()


# ---------- vLLM ----------
PREFIX_KIND = {"bug": "bug", "feature": "requirement", "rfc": "requirement", "new model": "requirement",
               "usage": "question", "misc": "question", "installation": "bug", "ci failure": "bug",
               "performance": None, "doc": None}


def vllm(issues, dev):
    out, kind_only = [], []
    for i in issues.values():
        if i["source"] != "vllm" or i["ref"] in dev:
            continue
        m = re.match(r"\s*\[([^\]]+)\]", i["title"])
        prefix = m.group(1).strip().lower() if m else ""
        kinds = label_kinds(i["labels"])
        kind = PREFIX_KIND.get(prefix)
        if kind is None and len(kinds) == 1:
            kind = next(iter(kinds))
        if kind is None:
            continue
        nodes = label_nodes(i["labels"] + ([prefix] if prefix in ("installation", "usage") else []),
                            i["repo"])
        if prefix == "new model":
            nodes.append("requirement.capability.model-support")
        if prefix == "performance" and kind == "bug":
            nodes.append("bug.performance")
        theme, sub = theme_of(nodes, kind)
        why = f"prefix={prefix or '-'} labels={','.join(i['labels'])}"
        out.append(record(i["ref"], i["repo"], i["title"], i["body"], i["labels"], kind, theme, sub, why))
        kind_only.append(record(i["ref"], i["repo"], i["title"], i["body"], i["labels"], kind, weak=why))
    return {"vllm": out, "vllm-kind": kind_only}


# ---------- MHNurf ----------
def mhnurf(issues, dev):
    perf, lab = [], []
    for i in issues.values():
        if not i["source"].startswith("mhnurf") or i["ref"] in dev:
            continue
        text = " ".join(i["labels"])
        low = " " + text.lower() + " "
        if i.get("perf_class") == "1":
            perf.append(record(i["ref"], i["repo"], i["title"], i["body"], [], "bug",
                               "bug.performance", "", "mhnurf class 1"))
            continue
        # Labels are space-joined in the source: find the known label phrases in the joined text.
        kinds = set()
        if re.search(r" (feature|enhancement|feature request|type:feature) ", low):
            kinds.add("requirement")
        if re.search(r" (bug|type:bug) ", low):
            kinds.add("bug")
        if re.search(r" (question|type:support|how to) ", low):
            kinds.add("question")
        if len(kinds) != 1:
            continue
        kind = next(iter(kinds))
        found = [lab_ for lab_ in TAX.labels.get(i["repo"], {}) if f" {lab_} " in low.replace(": ", ":")]
        nodes = [n for l in found for n in TAX.targets(l, i["repo"])]
        theme, sub = theme_of(nodes, kind)
        lab.append(record(i["ref"], i["repo"], i["title"], i["body"], [], kind, theme, sub,
                          f"mhnurf class 0 labels={text}"))
    return {"mhnurf-perf": perf, "mhnurf-labels": lab}


# ---------- TF silent bugs not in the devset ----------
def tf_silent(issues, dev):
    out = []
    for i in issues.values():
        if i["source"] != "tf-silent" or i["ref"] in dev:
            continue
        theme, sub = theme_of(label_nodes(i["labels"], i["repo"]), "bug")
        out.append(record(i["ref"], i["repo"], i["title"], i["body"], i["labels"], "bug", theme, sub,
                          "tf silent bug"))
    return {"tf-silent": out}


# ---------- TOSEM DL-framework bug-fix PRs ----------
TOSEM_REPO = {"TensorFlow": "tensorflow/tensorflow", "PyTorch": "pytorch/pytorch",
              "MXNet": "apache/incubator-mxnet", "DL4J": "eclipse/deeplearning4j"}


def tosem_theme(x):
    sym, root, stage = x["symptom"], x["root_cause"], x["stage"]
    if sym == "Build Failure" or stage == "install":
        return "bug.environment", "bug.environment.install-build"
    if sym == "Poor Performance":
        return "bug.performance", ""
    if root == "Numerical Issue":
        return "bug.numerics", ""
    if root == "Environment Incompatibility":
        return "bug.environment", "bug.environment.version-compat"
    return "", ""


def tosem(data, dev, dev_titles):
    out, kind_only = [], []
    for x in csv.DictReader(open(os.path.join(data, TOSEM), encoding="utf-8")):
        repo = TOSEM_REPO.get(x["project"])
        if not repo:
            continue
        nums = {x["pr_id"].strip()} | set(re.findall(r"\d+", x.get("issue") or ""))
        if any(f"{repo}#{n}" in dev for n in nums) or norm_title(x["title"]) in dev_titles:
            continue
        rid = x["pr_url"] or f"{repo}#pr{x['pr_id']}"
        theme, sub = tosem_theme(x)
        why = f"tosem {x['symptom']}/{x['root_cause']}/{x['stage']}"
        out.append(record(rid, repo, x["title"], "", [], "bug", theme, sub, why))
        kind_only.append(record(rid, repo, x["title"], "", [], "bug", weak=why))
    return {"tosem": out, "tosem-kind": kind_only}


# ---------- Keras/TF issue voting sheet (titles + labels) ----------
def voting(data, dev, dev_titles):
    out = []
    for x in csv.DictReader(open(os.path.join(data, VOTING), encoding="utf-8")):
        m = re.search(r"github\.com/([^/]+/[^/]+)/issues/(\d+)", x.get("URL") or "")
        if not m:
            continue
        repo, n = m.group(1), m.group(2)
        if f"{repo}#{n}" in dev or norm_title(x["Title"]) in dev_titles:
            continue
        labels = [l for l in (x["Labels"] or "").split("^") if l]
        kinds = label_kinds(labels)
        if kinds != {"bug"}:
            continue
        theme, sub = theme_of(label_nodes(labels, repo), "bug")
        out.append(record(f"{repo}#{n}", repo, x["Title"], "", labels, "bug", theme, sub,
                          "keras voting labels=" + ",".join(labels)))
    return {"keras-voting": out}


# ---------- GT_torch / GT_tf (hand-labelled Is Bug; labels appended to the title) ----------
TRAILING = re.compile(r"(\s+(triaged|triage review|high priority|low priority|needs reproduction|"
                      r"(module|oncall): [\w./\-]+( [\w./\-()]+)?|type:[\w/\-]+|comp:[\w:.\-]+|"
                      r"stat:[\w ]+|TF ?[\d.]+|enhancement|feature))+\s*$")


def gt(data, dev_titles):
    out = []
    for name, repo in (("GT_torch_data.csv", "pytorch/pytorch"), ("GT_tf_data.csv", "tensorflow/tensorflow")):
        path = os.path.join(data, GT_DIR, "Manually_classified_data", name)
        for k, x in enumerate(csv.DictReader(open(path, encoding="utf-8"))):
            full = x["Issue Title"] or ""
            low = " " + full.lower() + " "
            m = TRAILING.search(full)
            title = full[:m.start()] if m and m.start() > 10 else full
            if norm_title(title) in dev_titles or norm_title(full) in dev_titles:
                continue
            found = [l for l in list(TAX.labels.get(repo, {})) + list(TAX.labels["global"])
                     if re.search(r"(?<![\w:])" + re.escape(l.replace(":", ": ") if repo == "pytorch/pytorch" else l)
                                  + r"(?![\w])", low)]
            if x["Is Bug"].strip() == "True":
                kind = "bug"
            else:
                kinds = {KIND_LABELS[l] for l in found if l in KIND_LABELS} - {"bug"}
                if re.search(r"\b(feature|enhancement|type:feature)\b", low):
                    kinds.add("requirement")
                if re.search(r"\b(type:support|question)\b", low):
                    kinds.add("question")
                if len(kinds) != 1:
                    continue
                kind = next(iter(kinds))
            nodes = [n for l in found for n in TAX.targets(l, repo)]
            theme, sub = theme_of(nodes, kind)
            out.append(record(f"{name}:{k}", repo, title, x["Issue Body"] or "", [], kind, theme, sub,
                              f"gt is_bug={x['Is Bug']}"))
    return {"gt": out}


# ---------- torch/tf open issues (titles + labels; Final_Is_Bug is a model's guess) ----------
def open_issues(data, dev, dev_titles):
    res = {}
    for name, repo, key in (("torch_open_issues_classified.csv", "pytorch/pytorch", "torch-open"),
                            ("tf_open_issues_classified.csv", "tensorflow/tensorflow", "tf-open")):
        out = []
        path = os.path.join(data, GT_DIR, "Final_Data", name)
        known = sorted(set(TAX.labels.get(repo, {})) | set(TAX.labels["global"]) | set(KIND_LABELS)
                       | set(EXTRA.get(repo, {})), key=len, reverse=True)
        for x in csv.DictReader(open(path, encoding="utf-8")):
            n, title, tags = x["Issue Number"], x["Issue Title"] or "", x["Tags"] or ""
            if f"{repo}#{n}" in dev:
                continue
            if tags.startswith("[Label("):
                labels = re.findall(r'name="([^"]*)"', tags)
            else:  # space-joined names: find the known ones
                low = " " + norm_label(tags) + " "
                labels = []
                for l in known:  # longest first; a found label is cut out ("module: memory usage" is not "usage")
                    if f" {norm_label(l)} " in low:
                        labels.append(l)
                        low = low.replace(f" {norm_label(l)} ", "  ")
                if tags and title.endswith(tags):
                    title = title[:-len(tags)].rstrip()
            if norm_title(title) in dev_titles:
                continue
            nodes = label_nodes(labels, repo)
            kinds = label_kinds(labels)
            node_kinds = {nd.split(".")[0] for nd in nodes}
            if len(kinds) == 1:
                kind = next(iter(kinds))
            elif not kinds and len(node_kinds) == 1:
                kind = next(iter(node_kinds))
            elif not kinds and "bug" in node_kinds:  # labels allow several kinds: the study's guess
                kind = "bug" if x["Final_Is_Bug"] == "True" else None
                if kind is None:
                    continue
            else:
                continue
            theme, sub = theme_of(nodes, kind)
            if kind == "bug" and not theme and not kinds:
                continue
            out.append(record(f"{repo}#{n}", repo, title, "", labels, kind, theme, sub,
                              "labels=" + ",".join(labels)))
        res[key] = out
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="/tmp/weak", help="output folder (one JSONL per source)")
    args = ap.parse_args()
    data = shared_issues.find_shared()
    if data is None:
        print("weak_labels: ../shared/data not found; nothing written", file=sys.stderr)
        return 0
    dev = {l.strip() for l in open(DEVSET) if l.strip() and not l.startswith("#")}
    issues = shared_issues.load_all(data)
    dev_titles = {norm_title(issues[r]["title"]) for r in dev if r in issues}
    sets = {}
    sets.update(vllm(issues, dev))
    sets.update(mhnurf(issues, dev))
    sets.update(tf_silent(issues, dev))
    sets.update(tosem(data, dev, dev_titles))
    sets.update(voting(data, dev, dev_titles))
    sets.update(gt(data, dev_titles))
    sets.update(open_issues(data, dev, dev_titles))
    os.makedirs(args.out, exist_ok=True)
    for name, recs in sets.items():
        leaked = [r["id"] for r in recs if r["id"] in dev]
        assert not leaked, (name, leaked[:5])
        with open(os.path.join(args.out, f"{name}.jsonl"), "w", encoding="utf-8") as f:
            for r in recs:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        kinds, themes = {}, {}
        for r in recs:
            kinds[r["kind"]] = kinds.get(r["kind"], 0) + 1
            if "theme" in r:
                themes[r["theme"]] = themes.get(r["theme"], 0) + 1
        print(f"{name}: {len(recs)} records; kinds {kinds}; themes {dict(sorted(themes.items(), key=lambda kv: -kv[1]))}",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

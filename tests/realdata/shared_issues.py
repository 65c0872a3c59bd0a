"""Loads the real issues of ../shared/data as plain dicts, for the relevance benchmark, the
labelled development set and the tagging tests.

Every issue is {ref, repo, number, title, body, labels, comments, state, source}, where `ref` is
`owner/name#number` and `comments` is a list of comment bodies (empty where the source has none).
The texts are read from ../shared at run time and never copied into the project.

find_shared() returns the data directory or None; callers skip, saying so, when it is None.
"""
import ast
import csv
import glob
import json
import os

csv.field_size_limit(10**9)

VLLM_DIR = "dl-issue-dumps/vllm-exp-bug-study/bug-study/analysis_llm/sample_results/vllm/label_based"
MHNURF_DIR = "labeled/mhnurf-perf-bugs/data"
MHNURF_REPOS = {
    "pytorch": "pytorch/pytorch",
    "keras": "keras-team/keras",
    "incubator-mxnet": "apache/incubator-mxnet",
    "caffe": "BVLC/caffe",
}
TF_SILENT_DIR = "labeled/silent-bugs-tf-keras/Artifacts/Bugs_in_JSON"


def find_shared(start=None):
    """Returns the path of shared/data beside the checkout (or $ISSUESCOPE_SHARED_DATA), or None."""
    env = os.environ.get("ISSUESCOPE_SHARED_DATA")
    if env:
        return env if os.path.isdir(env) else None
    here = os.path.abspath(start or os.path.dirname(__file__))
    while True:
        candidate = os.path.join(os.path.dirname(here), "shared", "data")
        if os.path.isdir(candidate):
            return candidate
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _labels(value):
    """Label names from a list of names or label objects, or the string repr of a list
    ("['bug', 'stale']", as the vLLM dumps store them)."""
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            value = [v.strip(" '\"") for v in value.strip("[]").split(",")]
    out = []
    for l in value or []:
        name = l if isinstance(l, str) else (l.get("name", "") if isinstance(l, dict) else "")
        if name:
            out.append(name)
    return out


def _vllm(data):
    seen = {}
    for path in sorted(glob.glob(os.path.join(data, VLLM_DIR, "*", "issues.json"))):
        for x in json.load(open(path, encoding="utf-8")):
            n = int(x["number"])
            if n in seen:
                continue
            seen[n] = {
                "ref": f"vllm-project/vllm#{n}", "repo": "vllm-project/vllm", "number": n,
                "title": x.get("title") or "", "body": x.get("body") or "",
                "labels": _labels(x.get("labels")),
                "comments": [], "state": x.get("state") or "", "source": "vllm",
            }
    return [seen[n] for n in sorted(seen)]


def _parse_comments(text):
    if not text:
        return []
    try:
        value = ast.literal_eval(text)
        if isinstance(value, list):
            return [str(c) for c in value]
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        pass
    return [text]


def _mhnurf(data):
    out = []
    for short, repo in MHNURF_REPOS.items():
        path = os.path.join(data, MHNURF_DIR, f"{short}.csv")
        if not os.path.exists(path):
            continue
        seen = set()
        for x in csv.DictReader(open(path, encoding="utf-8")):
            n = int(x["Number"])
            if n in seen:
                continue
            seen.add(n)
            out.append({
                "ref": f"{repo}#{n}", "repo": repo, "number": n, "title": x["Title"] or "",
                "body": x["Body"] or "", "labels": (x["Labels"] or "").split(),
                "comments": _parse_comments(x.get("Comments")), "state": x.get("State") or "",
                "source": f"mhnurf-{short}", "perf_class": x.get("class"),
            })
    return out


def _tf_silent(data):
    out = []
    for path in sorted(glob.glob(os.path.join(data, TF_SILENT_DIR, "issue_*.json"))):
        x = json.load(open(path, encoding="utf-8"))
        n = int(x["number"])
        out.append({
            "ref": f"tensorflow/tensorflow#{n}", "repo": "tensorflow/tensorflow", "number": n,
            "title": x.get("title") or "", "body": x.get("body") or "",
            "labels": [l["name"] for l in x.get("labels") or []], "comments": [],
            "state": x.get("state") or "", "source": "tf-silent",
        })
    return out


def load_all(data=None):
    """All real issues with text, keyed by ref (first source wins on a repeated ref)."""
    data = data or find_shared()
    if data is None:
        return {}
    issues = {}
    for issue in _vllm(data) + _mhnurf(data) + _tf_silent(data):
        issues.setdefault(issue["ref"], issue)
    return issues

#!/usr/bin/python3
"""Search relevance on real issues, side by side (issue 14): issuescope, SQLite FTS5 and Xapian's
stock BM25Weight on the same corpus and the same queries, in one run.

    /usr/bin/python3 tests/relevance/relevance_bench.py --bin build/bin --work /tmp/relevance \
        [--sets title-3,duplicates] [--per-set N] [--seed S] [--json out.json] [--failures FILE]

Run it with Debian's /usr/bin/python3 (python3-xapian, sqlite3 with FTS5, python3-grpcio). Without
../shared/data (tests/realdata/shared_issues.find_shared) it prints one line saying so and exits 0.
The texts are read from ../shared at run time and written only under --work (default: a temporary
directory, removed afterwards); --work, --json and --failures may not point into the checkout.

Corpus (about 6,000 documents): tests/realdata/shared_issues.load_all() (vLLM 676 issues without
comments, MHNurf's PyTorch/Keras/MXNet/Caffe threads with comments, 77 TF silent-bug issues), plus
NLBSE'24's 3,000 title+body pairs (issues_{train,test}.csv) numbered 1,000,000 + their row index
within their repository (train rows first), rows repeating an earlier (repo, title, body) dropped.

Systems:
  issuescope  `issuescope-bulk-index --jsonl` of IssueWithComments (proto3 JSON), queried through
              one `issuescope-search` over gRPC (stubs from $ISSUESCOPE_PYTHON_STUBS, the build's
              clients/python, or generated into --work with protoc + grpc_python_plugin), else
              per query with `issuescope search --data DIR --json` (--client cli).
              The query string is sent as the user typed it: a query that the query language
              rejects (`pin_memory()`, `key:value`) counts as an error and finds nothing.
  fts5        SQLite FTS5 table (title, body, comments), tokenize='porter unicode61', ranked by
              bm25(t, 10.0, 1.0, 1.0); every query word double-quoted, joined by implicit AND.
  fts5-or     the same with the quoted words joined by OR.
  xapian      python xapian: TermGenerator, English stemmer, STEM_SOME; title unprefixed with wdf
              increment 5 and again under prefix S, body and comments unprefixed; QueryParser with
              the stemmer, default op OR, FLAG_DEFAULT (retried with no flags on a parse error);
              xapian.BM25Weight() with its default parameters.

Query sets (deterministic for a seed; each query has one target, the issue it was made from):
  title-2/3/4     2/3/4 consecutive title words: template prefixes (`[Bug]:`, `[RFC]`, any leading
                  `[...]`) removed, lower-cased, surrounding punctuation stripped from each word
                  (`pin_memory()`, `extra_body`, `--enforce-eager` kept as written), words
                  without a letter or digit dropped. A window that starts or ends with a stop
                  word is skipped (nobody copies `interface and`; `cuda not available` is kept,
                  and issuescope reads its `not` as NOT); --windows any skips only windows of
                  stop words. So is a window that another document's title also contains (the
                  query must identify its target by title).
  body-fragment   5-8 consecutive words of one prose line of the body: not inside ``` / ~~~
                  fences, not indented code, headings, quotes, tables, HTML, shell prompts, log or
                  traceback lines (timestamps, INFO/ERROR..., `File "`, `at ...`, `XxxError:`),
                  `key: value` dumps, lines under 60 % letters; HTML tags, Markdown links and
                  emphasis removed; at least two words that are not stop words, none at either
                  edge (as above); no URL; the fragment occurs (as normalised words) in no other
                  document.
  paraphrase      3-4 title words (as title-N, unique in titles) with one change, stated per query
                  in --json/--failures as `kind: old -> new`:
                    variant   gpu<->cuda, oom<->"out of memory", slow<->slower, fast<->faster,
                              tf<->tensorflow
                    spelling  American<->British (-ize/-ise, -ization/-isation, behavior/behaviour,
                              color/colour, modeling/modelling, labeled/labelled, canceled/...)
                    number    plural<->singular (-s, -es, -ies/-y) of a word of 4+ letters, when
                              the new form occurs in 3+ documents
                    verb      another form of a common verb (fail/fails/failed/failing, run/ran...)
                    reorder   the window's words in reverse order
                  quotas 20/15/25/20/20 % where candidates exist; each kind spread over sources.
  duplicates      threads that say they duplicate another issue of the same repository in the
                  corpus ("duplicate of #N", "dup of #N", "closing as duplicate of #N",
                  "duplicates #N", "duplicate issue <url>", "same issue as #N"; in bodies and
                  comments): query = the duplicate's title (cleaned as above), relevant = #N, and
                  the query's own issue is removed from every system's ranking.
Sets are spread over the sources by round-robin over vllm, mhnurf (4 repos), tf-silent, nlbse (5
repos), one query per document and set. Defaults: 150 queries per set, 100 for paraphrase, every
duplicate pair; --per-set N caps each set at N.

Metrics per set and system: MRR@10, hit@1, hit@10, NDCG@10 (binary relevance), the number of
queries, how many returned nothing (`empty`, errors included) and how many were errors; and the
ratio of issuescope's MRR@10 to the best peer's. --failures writes, for issuescope, every query
whose target is not first: the query, the target's rank, its title, and the hits above it (with
their text length) and the peers' ranks. Exit status: 0 (also when scores are low), 1 on an error
(a build or query that fails for a reason other than the query language), 2 for a bad command line.
"""
import argparse
import ast
import bisect
import csv
import glob
import json
import math
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # never leave __pycache__ in the checkout
HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, "..", "realdata"))
import shared_issues  # noqa: E402

PROG = "relevance_bench"
ALL_SETS = ["title-2", "title-3", "title-4", "body-fragment", "paraphrase", "duplicates"]
SYSTEMS = ["issuescope", "fts5", "fts5-or", "xapian"]
PEERS = ["fts5", "fts5-or", "xapian"]
K = 10
NLBSE_DIR = "labeled/nlbse24-issue-classification/data"
NLBSE_BASE = 1_000_000
FAMILIES = ["vllm", "mhnurf", "tf-silent", "nlbse"]


class BenchError(Exception):
    pass


def log(msg):
    print(f"{PROG}: {msg}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------------------------
# Corpus


def _rfc3339(text):
    text = (text or "").strip()
    if not text or text == "None":
        return ""
    m = re.match(r"^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)", text)
    return f"{m.group(1)}T{m.group(2)}Z" if m else ""


def _raw_created(data):
    """created_at by ref for the sources whose raw files carry it (vLLM, TF silent bugs)."""
    out = {}
    for path in sorted(glob.glob(os.path.join(data, shared_issues.VLLM_DIR, "*", "issues.json"))):
        for x in json.load(open(path, encoding="utf-8")):
            out.setdefault(f"vllm-project/vllm#{int(x['number'])}", _rfc3339(x.get("created_at")))
    for path in sorted(glob.glob(os.path.join(data, shared_issues.TF_SILENT_DIR, "issue_*.json"))):
        x = json.load(open(path, encoding="utf-8"))
        out.setdefault(f"tensorflow/tensorflow#{int(x['number'])}", _rfc3339(x.get("created_at")))
    return out


def _fix_labels(labels):
    # The vLLM dump stores labels as a Python-list repr ("['bug', 'stale']"), which load_all
    # iterates character by character; join and parse it back.
    if labels and all(len(l) <= 1 for l in labels):
        text = "".join(labels)
        try:
            value = ast.literal_eval(text)
            if isinstance(value, list):
                return [str(v) for v in value]
        except (ValueError, SyntaxError):
            pass
    return list(labels)


def _nlbse(data, existing):
    out = []
    seen = {(d["repo"], d["title"], d["body"]) for d in existing}
    per_repo = {}
    for split in ("train", "test"):
        path = os.path.join(data, NLBSE_DIR, f"issues_{split}.csv")
        if not os.path.exists(path):
            continue
        for row in csv.DictReader(open(path, encoding="utf-8")):
            repo = row["repo"]
            index = per_repo.get(repo, 0)
            per_repo[repo] = index + 1
            key = (repo, row["title"] or "", row["body"] or "")
            if key in seen:
                continue
            seen.add(key)
            n = NLBSE_BASE + index
            out.append({"ref": f"{repo}#{n}", "repo": repo, "number": n, "title": key[1],
                        "body": key[2], "labels": [row.get("label") or ""], "comments": [],
                        "state": "", "source": "nlbse-" + repo.split("/")[1],
                        "created_at": _rfc3339(row.get("created_at"))})
    return out


def family(doc):
    s = doc["source"]
    return "mhnurf" if s.startswith("mhnurf") else "nlbse" if s.startswith("nlbse") else s


def load_corpus(data):
    issues = shared_issues.load_all(data)
    created = _raw_created(data)
    docs = []
    for ref, d in issues.items():
        d = dict(d)
        d["labels"] = _fix_labels(d["labels"])
        d["created_at"] = created.get(ref, "")
        docs.append(d)
    docs += _nlbse(data, docs)
    docs.sort(key=lambda d: (d["repo"], d["number"]))
    return docs


def write_jsonl(docs, path):
    states = {"open": "ISSUE_STATE_OPEN", "closed": "ISSUE_STATE_CLOSED"}
    comment_id = 1
    with open(path, "w", encoding="utf-8") as f:
        for d in docs:
            owner, name = d["repo"].split("/", 1)
            repo = {"tracker": "TRACKER_GITHUB", "owner": owner, "name": name}
            issue = {"repo": repo, "number": str(d["number"]), "title": d["title"],
                     "body": d["body"], "labels": [l for l in d["labels"] if l],
                     "commentCount": len(d["comments"]),
                     "url": f"https://github.com/{d['repo']}/issues/{d['number']}"}
            if d["state"].lower() in states:
                issue["state"] = states[d["state"].lower()]
            if d.get("created_at"):
                issue["createdAt"] = d["created_at"]
                issue["updatedAt"] = d["created_at"]
            comments = []
            for body in d["comments"]:
                comments.append({"repo": repo, "issueNumber": str(d["number"]),
                                 "id": str(comment_id), "body": body})
                comment_id += 1
            f.write(json.dumps({"issue": issue, "comments": comments}, ensure_ascii=False))
            f.write("\n")


# ----------------------------------------------------------------------------------------------
# Text normalisation for query making

STOP = set("""a about above after again against all am an and any are aren't as at be because been
before being below between both but by can can't cannot could couldn't did didn't do does doesn't
doing don't down during each few for from further had hadn't has hasn't have haven't having he her
here hers herself him himself his how i i'm if in into is isn't it it's its itself let's me more
most my myself no nor not of off on once only or other ought our ours ourselves out over own same
she should shouldn't so some such than that that's the their theirs them themselves then there
there's these they this those through to too under until up very was wasn't we were weren't what
when where which while who whom why will with won't would wouldn't you your yours yourself
yourselves via vs via also just get got""".split())

TEMPLATE_PREFIX = re.compile(r"^\s*(?:(?:\[[^\]]{1,40}\]|【[^】]{1,40}】)\s*:?\s*)+")
LEAD = set("\"'`([{<*,;:!?~|\u2018\u2019\u201c\u201d\u300c\u300d")
TRAIL = set("\"'`)]}>*,;:!?.~|\u2018\u2019\u201c\u201d\u300c\u300d")


def clean_token(t):
    """A word as a user would copy it: surrounding punctuation stripped, inner kept."""
    while t and (t[0] in LEAD or (t[0] == "-" and not t.startswith("--"))):
        t = t[1:]
    while t and t[-1] in TRAIL:
        c = t[-1]
        if c == ")" and 0 < t.count("(") >= t.count(")"):
            break
        if c == "]" and 0 < t.count("[") >= t.count("]"):
            break
        t = t[:-1]
    if not any(ch.isalnum() for ch in t):
        return ""
    return t.lower()


def words(text):
    return [w for w in (clean_token(t) for t in text.split()) if w]


def title_words(title):
    return words(TEMPLATE_PREFIX.sub("", title or ""))


def all_stop(ws):
    return all(w in STOP for w in ws)


WINDOW_RULE = ["content"]  # "content": no stop word at either edge; "any": not all stop words


def bad_window(ws):
    if WINDOW_RULE[0] == "content":
        return ws[0] in STOP or ws[-1] in STOP
    return all_stop(ws)


FENCE = re.compile(r"^\s*(```|~~~)")
LOGLIKE = re.compile(
    r"^\s*(\[?\d{4}[-/]\d\d[-/]\d\d|\[?\d\d:\d\d:\d\d|\(?\w*\s?pid=|\[rank\d|"
    r"(INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL|NOTE|E\d{4}|W\d{4}|I\d{4})\b|"
    r"[\w.]*(Error|Exception|Warning)\b|Traceback|File \"|at\s|\.\.\.|>>>|\$\s|\+|=)")
KEYVAL = re.compile(r"^\s*[-*•]?\s*[\w][\w ./()+\-]{0,40}:(\s|$)")
HTML = re.compile(r"<[^>]{0,200}>")
MDLINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
URLISH = re.compile(r"https?:|://|www\.")


def prose_lines(body):
    fence = False
    for line in (body or "").replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if FENCE.match(line):
            fence = not fence
            continue
        if fence or line.startswith(("    ", "\t")):
            continue
        s = line.strip()
        if not s or s[0] in "#>|<$":
            continue
        if LOGLIKE.match(s) or KEYVAL.match(s):
            continue
        if re.search(r"[{};]|\s=\s|==|->|^\w+\(", s):
            continue
        s = HTML.sub(" ", MDLINK.sub(r"\1", s)).replace("`", " ").replace("**", " ")
        if sum(c.isalpha() or c.isspace() for c in s) < 0.85 * len(s) or \
                sum(c.isalpha() for c in s) < 0.6 * len(s.replace(" ", "")):
            continue
        yield s


class TextIndex:
    """Every document's normalised words in one string, to check that a fragment is unique, and
    each word's document frequency."""

    def __init__(self, docs):
        parts, self.starts, pos = [], [], 0
        self.df = {}
        for d in docs:
            ws = words(" ".join([d["title"], d["body"]] + d["comments"]))
            for w in set(ws):
                self.df[w] = self.df.get(w, 0) + 1
            text = " " + " ".join(ws) + " \n"
            self.starts.append(pos)
            parts.append(text)
            pos += len(text)
        self.text = "".join(parts)

    def docs_containing(self, fragment, limit=2):
        needle, found, start = " " + fragment + " ", set(), 0
        while len(found) < limit:
            i = self.text.find(needle, start)
            if i < 0:
                break
            found.add(bisect.bisect_right(self.starts, i) - 1)
            start = i + 1
        return found


# ----------------------------------------------------------------------------------------------
# Query sets


def round_robin(docs, rng):
    """Documents interleaved by source family, each family shuffled (deterministic for rng)."""
    pools = []
    for fam in FAMILIES:
        pool = [i for i, d in enumerate(docs) if family(d) == fam]
        rng.shuffle(pool)
        pools.append(pool)
    out, k = [], 0
    while any(pools):
        pool = pools[k % len(pools)]
        if pool:
            out.append(pool.pop())
        k += 1
    return out


def title_windows_index(docs, sizes):
    index = {}
    for i, d in enumerate(docs):
        ws = title_words(d["title"])
        for n in sizes:
            for s in range(len(ws) - n + 1):
                index.setdefault(" ".join(ws[s:s + n]), set()).add(i)
    return index


def unique_title_windows(ws, n, tindex):
    out = []
    for s in range(len(ws) - n + 1):
        win = ws[s:s + n]
        if bad_window(win) or len(tindex.get(" ".join(win), ())) != 1:
            continue
        out.append(win)
    return out


def make_title_set(docs, n, count, rng, tindex):
    queries = []
    for i in round_robin(docs, rng):
        if len(queries) >= count:
            break
        wins = unique_title_windows(title_words(docs[i]["title"]), n, tindex)
        if wins:
            win = rng.choice(wins)
            queries.append({"query": " ".join(win), "targets": [docs[i]["ref"]],
                            "ref": docs[i]["ref"]})
    return queries


def make_body_set(docs, count, rng, tindex_text):
    queries = []
    for i in round_robin(docs, rng):
        if len(queries) >= count:
            break
        candidates = []
        for line in prose_lines(docs[i]["body"]):
            ws = words(line)
            for n in range(5, 9):
                for s in range(len(ws) - n + 1):
                    win = ws[s:s + n]
                    if bad_window(win) or sum(w not in STOP for w in win) < 2 or \
                            any(URLISH.search(w) for w in win):
                        continue
                    candidates.append(win)
        rng.shuffle(candidates)
        for win in candidates[:40]:
            if tindex_text.docs_containing(" ".join(win)) == {i}:
                queries.append({"query": " ".join(win), "targets": [docs[i]["ref"]],
                                "ref": docs[i]["ref"]})
                break
    return queries


VARIANTS = [("gpu", "cuda"), ("slow", "slower"), ("fast", "faster"), ("tf", "tensorflow")]
IZE_STEMS = """optim initial normal serial deserial quant token visual util synchron parallel
vector custom final material recogn special summar regular random organ minim maxim author categor
real general standard priorit""".split()
IZE_SUFFIXES = ["ize", "ized", "izes", "izing", "ization", "izations", "izer", "izers"]
SPELLING = [(s + x, s + x.replace("z", "s")) for s in IZE_STEMS for x in IZE_SUFFIXES] + [
    ("analyze", "analyse"), ("analyzed", "analysed"), ("analyzer", "analyser"),
    ("analyzing", "analysing"), ("behavior", "behaviour"), ("behaviors", "behaviours"),
    ("color", "colour"), ("colors", "colours"), ("center", "centre"), ("modeling", "modelling"),
    ("labeled", "labelled"), ("labeling", "labelling"), ("canceled", "cancelled"),
    ("canceling", "cancelling"), ("favor", "favour"), ("gray", "grey"), ("catalog", "catalogue"),
    ("dialog", "dialogue"), ("traveled", "travelled"), ("signaling", "signalling")]
VERBS = [v.split() for v in """fail fails failed failing
crash crashes crashed crashing
hang hangs hung hanging
load loads loaded loading
save saves saved saving
run runs ran running
use uses used using
train trains trained training
work works worked working
support supports supported supporting
compile compiles compiled compiling
install installs installed installing
build builds built building
export exports exported exporting
convert converts converted converting
return returns returned returning
raise raises raised raising
throw throws threw throwing
freeze freezes froze freezing
leak leaks leaked leaking
get gets got getting
stop stops stopped stopping
start starts started starting
break breaks broke breaking
cause causes caused causing
call calls called calling
import imports imported importing
read reads reading
write writes wrote writing
allocate allocates allocated allocating
increase increases increased increasing
decrease decreases decreased decreasing
produce produces produced producing
generate generates generated generating
match matches matched matching
ignore ignores ignored ignoring
skip skips skipped skipping
print prints printed printing
download downloads downloaded downloading
serve serves served serving
launch launches launched launching
execute executes executed executing
exceed exceeds exceeded exceeding
take takes took taking
make makes made making
find finds found finding
lose loses lost losing
show shows showed showing
change changes changed changing
add adds added adding
remove removes removed removing
slow slows slowed slowing""".split("\n")]


def _pair_map(pairs):
    m = {}
    for a, b in pairs:
        m.setdefault(a, b)
        m.setdefault(b, a)
    return m


VARIANT_MAP = _pair_map(VARIANTS)
SPELLING_MAP = _pair_map(SPELLING)
VERB_FORMS = {}
for forms in VERBS:
    for f in forms:
        VERB_FORMS.setdefault(f, forms)


def number_variant(w):
    if not w.isalpha() or len(w) < 4 or w in STOP or w.endswith(("ing", "ed", "ly", "ness")):
        return None
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("sses", "xes", "ches", "shes")):
        return w[:-2]
    if w.endswith("s") and not w.endswith(("ss", "us", "is", "ous", "ics")):
        return w[:-1]
    if w.endswith("s") or w.endswith(("x", "ch", "sh")):
        return w + "es"
    if w.endswith("y") and w[-2] not in "aeiou":
        return w[:-1] + "ies"
    return w + "s"


def paraphrases(win, df):
    """Candidate (kind, new words, description) for a window of title words. A plural/singular
    form is offered only when it occurs in at least 3 documents (so `hidden` gives no
    `hiddens`)."""
    out = []
    text = " ".join(win)
    for k, w in enumerate(win):
        if w in VARIANT_MAP:
            new = win[:k] + [VARIANT_MAP[w]] + win[k + 1:]
            out.append(("variant", new, f"{w} -> {VARIANT_MAP[w]}"))
        if w == "oom":
            new = win[:k] + ["out", "of", "memory"] + win[k + 1:]
            out.append(("variant", new, "oom -> out of memory"))
        if w in SPELLING_MAP:
            new = win[:k] + [SPELLING_MAP[w]] + win[k + 1:]
            out.append(("spelling", new, f"{w} -> {SPELLING_MAP[w]}"))
        if w in VERB_FORMS:
            for f in VERB_FORMS[w]:
                if f != w:
                    out.append(("verb", win[:k] + [f] + win[k + 1:], f"{w} -> {f}"))
        elif w not in VARIANT_MAP and w not in SPELLING_MAP:
            v = number_variant(w)
            if v and df.get(v, 0) >= 3:
                out.append(("number", win[:k] + [v] + win[k + 1:], f"{w} -> {v}"))
    if " out of memory" in " " + text + " " or text.startswith("out of memory"):
        k = win.index("out") if "out" in win else -1
        if 0 <= k <= len(win) - 3 and win[k:k + 3] == ["out", "of", "memory"]:
            out.append(("variant", win[:k] + ["oom"] + win[k + 3:], "out of memory -> oom"))
    if len(set(win)) > 1:
        out.append(("reorder", list(reversed(win)), "words reversed"))
    return out


PARAPHRASE_QUOTAS = [("variant", 0.20), ("spelling", 0.15), ("number", 0.25), ("verb", 0.20),
                     ("reorder", 0.20)]


def make_paraphrase_set(docs, count, rng, tindex, df):
    by_kind = {k: [] for k, _ in PARAPHRASE_QUOTAS}
    for i in round_robin(docs, rng):
        ws = title_words(docs[i]["title"])
        seen_kinds = set()
        cands = []
        for n in (3, 4):
            for win in unique_title_windows(ws, n, tindex):
                cands += paraphrases(win, df)
        rng.shuffle(cands)
        for kind, new, how in cands:
            if kind in seen_kinds:
                continue
            seen_kinds.add(kind)
            by_kind[kind].append((i, new, how))
    quotas = {k: int(round(q * count)) for k, q in PARAPHRASE_QUOTAS}
    # Kinds short of candidates give their quota to the others, in order.
    spare = sum(max(0, quotas[k] - len(by_kind[k])) for k in quotas)
    for k in quotas:
        quotas[k] = min(quotas[k], len(by_kind[k]))
    for k, _ in PARAPHRASE_QUOTAS[::-1]:
        extra = min(spare, len(by_kind[k]) - quotas[k])
        quotas[k] += extra
        spare -= extra
    used, queries = set(), []
    for kind, _ in PARAPHRASE_QUOTAS:
        taken = 0
        for i, new, how in by_kind[kind]:  # already interleaved by family
            if taken >= quotas[kind]:
                break
            if i in used:
                continue
            used.add(i)
            taken += 1
            queries.append({"query": " ".join(new), "targets": [docs[i]["ref"]],
                            "ref": docs[i]["ref"], "how": f"{kind}: {how}"})
    return queries[:count]


DUP_REF = r"(?:#|https?://github\.com/(?P<repo>[\w.-]+/[\w.-]+)/issues/)(?P<n>\d+)"
DUP_PATTERNS = [
    ("duplicate of #N", re.compile(
        r"(?i)\b(?:closing\s+(?:this\s+)?(?:issue\s+)?as\s+(?:a\s+)?)?(?:duplicate|dup|dupe)d?"
        r"\s+(?:of|to)\s+(?:issue\s+)?" + DUP_REF)),
    ("duplicates #N", re.compile(r"(?i)\b(?:this\s+)?duplicates\s+(?:issue\s+)?" + DUP_REF)),
    ("duplicate issue #N", re.compile(r"(?i)\b(?:possible\s+|likely\s+)?duplicate\s*(?:issue)?"
                                      r"\s*[:,-]?\s*" + DUP_REF)),
    ("same issue as #N", re.compile(r"(?i)\bsame\s+(?:issue|problem|bug)\s+as\s+(?:in\s+)?"
                                    + DUP_REF)),
]


def find_duplicates(docs):
    by_ref = {d["ref"]: i for i, d in enumerate(docs)}
    pairs, mentions, per_pattern = {}, 0, {}
    for i, d in enumerate(docs):
        if family(d) == "nlbse":
            continue  # synthetic numbers: "#N" in these bodies names no corpus document reliably
        for text in [d["body"]] + d["comments"]:
            for name, rx in DUP_PATTERNS:
                for m in rx.finditer(text or ""):
                    repo = m.group("repo") or d["repo"]
                    if repo.lower() != d["repo"].lower():
                        continue
                    mentions += 1
                    ref = f"{d['repo']}#{int(m.group('n'))}"
                    if ref == d["ref"] or ref not in by_ref or d["ref"] in pairs:
                        continue
                    pairs[d["ref"]] = (ref, name)
                    per_pattern[name] = per_pattern.get(name, 0) + 1
    queries = []
    for ref in sorted(pairs):
        target, name = pairs[ref]
        q = " ".join(title_words(docs[by_ref[ref]]["title"]))
        if q:
            queries.append({"query": q, "targets": [target], "ref": ref, "exclude": [ref],
                            "how": f"'{name}' in {ref}"})
    return queries, {"mentions": mentions, "pairs": len(queries), "by_pattern": per_pattern}


# ----------------------------------------------------------------------------------------------
# Systems


def inside_checkout(path):
    real, root = os.path.realpath(path), os.path.realpath(REPO_ROOT)
    return real == root or real.startswith(root + os.sep)


def require_binaries(bindir, names):
    """Fails at once, naming what is missing, unless every program is in `bindir`."""
    missing = [n for n in names if not os.access(os.path.join(bindir, n), os.X_OK)]
    if missing:
        raise BenchError(f"missing in {bindir}: {', '.join(missing)} (build them first)")


def run_checked(cmd, what):
    """Runs `cmd` once; BenchError with its output when it fails."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        raise BenchError(f"{what} failed: {e}")
    if p.returncode != 0:
        raise BenchError(f"{what} failed: {(p.stderr or p.stdout).strip()[-2000:]}")
    return p


class Issuescope:
    name = "issuescope"

    def __init__(self, bindir, work, client):
        self.bindir, self.work, self.client = bindir, work, client
        self.data = os.path.join(work, "issuescope")
        self.index = os.path.join(self.data, "index")
        self.server = None
        self.stub = None
        self.mode = None

    def build(self, jsonl):
        shutil.rmtree(self.data, ignore_errors=True)
        os.makedirs(self.data)
        run_checked([os.path.join(self.bindir, "issuescope-bulk-index"), "--index", self.index,
                      "--jsonl", jsonl, "--quiet"], "issuescope-bulk-index")

    def _load_stubs(self):
        import importlib.util
        if importlib.util.find_spec("grpc") is None:
            return None
        candidates = [os.environ.get("ISSUESCOPE_PYTHON_STUBS", ""),
                      os.path.join(os.path.dirname(os.path.abspath(self.bindir)), "clients",
                                   "python")]
        gen = os.path.join(self.work, "stubs")
        for path in candidates + [gen]:
            if path and os.path.exists(os.path.join(path, "issuescope", "v1",
                                                    "search_pb2_grpc.py")):
                break
        else:
            protoc, plugin = shutil.which("protoc"), shutil.which("grpc_python_plugin")
            if not protoc or not plugin:
                return None
            os.makedirs(gen, exist_ok=True)
            p = subprocess.run([protoc, "-I", os.path.join(REPO_ROOT, "proto"),
                                f"--python_out={gen}", f"--grpc_out={gen}",
                                f"--plugin=protoc-gen-grpc={plugin}",
                                "issuescope/v1/model.proto", "issuescope/v1/search.proto"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if p.returncode != 0:
                log(f"protoc failed, using the CLI: {p.stdout.strip()[-300:]}")
                return None
            path = gen
        sys.path.insert(0, path)
        try:
            import grpc
            from issuescope.v1 import search_pb2, search_pb2_grpc
        except ImportError as e:
            log(f"stubs in {path} do not import ({e}); using the CLI")
            return None
        return grpc, search_pb2, search_pb2_grpc

    def start(self):
        if self.client in ("auto", "grpc"):
            stubs = self._load_stubs()
            if stubs is None and self.client == "grpc":
                raise BenchError("--client grpc: python3-grpcio or the stubs are missing")
            if stubs is not None:
                self._start_server(*stubs)
                self.mode = "grpc"
                return
        require_binaries(self.bindir, ["issuescope"])
        self.mode = "cli"

    def _start_server(self, grpc, search_pb2, search_pb2_grpc):
        self.grpc, self.pb = grpc, search_pb2
        port_file = os.path.join(self.work, "search.port")
        if os.path.exists(port_file):
            os.remove(port_file)
        require_binaries(self.bindir, ["issuescope-search"])
        logf = open(os.path.join(self.work, "search.log"), "w")
        try:
            self.server = subprocess.Popen(
                [os.path.join(self.bindir, "issuescope-search"), "--index", self.index,
                 "--listen", "127.0.0.1:0", "--port-file", port_file, "--log-level", "warn"],
                stdout=logf, stderr=subprocess.STDOUT)
        except OSError as e:
            raise BenchError(f"issuescope-search did not start ({e})")
        # Wait for the port file (a condition with a deadline).
        deadline = time.time() + 30
        while time.time() < deadline and self.server.poll() is None:
            if os.path.exists(port_file) and open(port_file).read().strip():
                port = open(port_file).read().strip()
                channel = grpc.insecure_channel(f"127.0.0.1:{port}")
                self.stub = search_pb2_grpc.SearchStub(channel)
                return
            time.sleep(0.1)
        self.stop()
        raise BenchError("issuescope-search did not start; see " + os.path.join(self.work,
                                                                                  "search.log"))

    def stop(self):
        if self.server is not None:
            self.server.terminate()
            try:
                self.server.wait(10)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()
            self.server = None

    def search(self, query, n):
        """(refs, error message or None)."""
        if self.mode == "grpc":
            try:
                r = self.stub.Search(self.pb.SearchRequest(query=query, page_size=n), timeout=30)
            except self.grpc.RpcError as e:
                if e.code() == self.grpc.StatusCode.INVALID_ARGUMENT:
                    return [], e.details()
                raise BenchError(f"issuescope Search({query!r}): {e.code()} {e.details()}")
            return [f"{h.repo}#{h.number}" for h in r.hits], None
        p = subprocess.run([os.path.join(self.bindir, "issuescope"), "search", "--data", self.data,
                            query, "--json", "--limit", str(n)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            msg = p.stderr.strip()
            if p.returncode == 2 or "INVALID_ARGUMENT" in msg or " at column " in msg:
                return [], msg.replace("issuescope: ", "")
            raise BenchError(f"issuescope search {query!r}: exit {p.returncode}: {msg}")
        return [f"{h['repo']}#{h['number']}" for h in map(json.loads, p.stdout.splitlines())
                if h], None


class Fts5:
    def __init__(self, op):
        self.name = "fts5" if op == "AND" else "fts5-or"
        self.op = op
        self.db = None
        self.refs = []

    def build(self, docs, path):
        if os.path.exists(path):
            os.remove(path)
        self.db = sqlite3.connect(path)
        self.db.execute("CREATE VIRTUAL TABLE t USING fts5(title, body, comments, "
                        "tokenize='porter unicode61')")
        self.db.executemany("INSERT INTO t(rowid, title, body, comments) VALUES (?, ?, ?, ?)",
                            ((i, d["title"], d["body"], "\n\n".join(d["comments"]))
                             for i, d in enumerate(docs)))
        self.db.commit()
        self.refs = [d["ref"] for d in docs]

    def share(self, other):
        self.db, self.refs = other.db, other.refs

    def search(self, query, n):
        terms = ['"' + w.replace('"', '""') + '"' for w in query.split()]
        expr = (" OR " if self.op == "OR" else " ").join(terms)
        try:
            rows = self.db.execute("SELECT rowid FROM t WHERE t MATCH ? "
                                   "ORDER BY bm25(t, 10.0, 1.0, 1.0) LIMIT ?", (expr, n)).fetchall()
        except sqlite3.OperationalError as e:
            return [], str(e)
        return [self.refs[r[0]] for r in rows], None


class XapianBM25:
    name = "xapian"

    def build(self, docs, path):
        import xapian
        self.x = xapian
        shutil.rmtree(path, ignore_errors=True)
        db = xapian.WritableDatabase(path, xapian.DB_CREATE_OR_OVERWRITE)
        tg = xapian.TermGenerator()
        tg.set_stemmer(xapian.Stem("english"))
        tg.set_stemming_strategy(xapian.TermGenerator.STEM_SOME)
        for d in docs:
            doc = xapian.Document()
            tg.set_document(doc)
            tg.index_text(d["title"], 5)
            tg.index_text(d["title"], 1, "S")
            tg.increase_termpos()
            tg.index_text(d["body"])
            for c in d["comments"]:
                tg.increase_termpos()
                tg.index_text(c)
            doc.set_data(d["ref"])
            doc.add_boolean_term("Q" + d["ref"])
            db.add_document(doc)
        db.commit()
        db.close()
        self.db = xapian.Database(path)
        self.qp = xapian.QueryParser()
        self.qp.set_stemmer(xapian.Stem("english"))
        self.qp.set_stemming_strategy(xapian.QueryParser.STEM_SOME)
        self.qp.set_database(self.db)
        self.qp.set_default_op(xapian.Query.OP_OR)
        self.enquire = xapian.Enquire(self.db)
        self.enquire.set_weighting_scheme(xapian.BM25Weight())

    def search(self, query, n):
        x = self.x
        try:
            q = self.qp.parse_query(query, x.QueryParser.FLAG_DEFAULT)
        except x.QueryParserError:
            try:
                q = self.qp.parse_query(query, 0)
            except x.QueryParserError as e:
                return [], str(e)
        self.enquire.set_query(q)
        return [m.document.get_data().decode() for m in self.enquire.get_mset(0, n)], None


# ----------------------------------------------------------------------------------------------
# Metrics and report


def score(ranked, targets):
    rank = next((k + 1 for k, r in enumerate(ranked[:K]) if r in targets), None)
    dcg = sum(1 / math.log2(k + 2) for k, r in enumerate(ranked[:K]) if r in targets)
    idcg = sum(1 / math.log2(k + 2) for k in range(min(len(targets), K)))
    return rank, dcg / idcg if idcg else 0.0


def summarise(results):
    n = len(results)
    if n == 0:
        return {"n": 0}
    ranks = [r["rank"] for r in results]
    return {"n": n,
            "mrr10": sum(1 / r for r in ranks if r) / n,
            "hit1": sum(1 for r in ranks if r == 1) / n,
            "hit10": sum(1 for r in ranks if r) / n,
            "ndcg10": sum(r["ndcg"] for r in results) / n,
            "empty": sum(1 for r in results if not r["hits"]),
            "errors": sum(1 for r in results if r["error"])}


def markdown(metrics, sets):
    lines = ["| set | system | queries | MRR@10 | hit@1 | hit@10 | NDCG@10 | empty | errors | "
             "MRR ÷ best peer |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s in sets:
        best = max((metrics[s][p].get("mrr10", 0) for p in PEERS), default=0)
        for sysname in SYSTEMS:
            m = metrics[s][sysname]
            if not m.get("n"):
                lines.append(f"| {s} | {sysname} | 0 | | | | | | | |")
                continue
            ratio = ""
            if sysname == "issuescope" and best > 0:
                ratio = f"{m['mrr10'] / best:.2f}"
            lines.append(f"| {s} | {sysname} | {m['n']} | {m['mrr10']:.3f} | {m['hit1']:.3f} | "
                         f"{m['hit10']:.3f} | {m['ndcg10']:.3f} | {m['empty']} | {m['errors']} | "
                         f"{ratio} |")
    return "\n".join(lines)


def doc_len(d):
    return len(d["body"]) + sum(len(c) for c in d["comments"])


def write_failures(path, sets, per_set, docs_by_ref):
    with open(path, "w", encoding="utf-8") as f:
        for s in sets:
            for q in per_set[s]:
                r = q["results"]["issuescope"]
                if r["rank"] == 1:
                    continue
                target = q["targets"][0]
                t = docs_by_ref.get(target, {})
                where = r["rank"] or ("error" if r["error"] else "not in top 10" if r["hits"]
                                      else "no results")
                f.write(f"[{s}] {q['query']!r}  ->  target {target} rank {where}\n")
                if q.get("how"):
                    f.write(f"    made by: {q['how']}\n")
                if r["error"]:
                    f.write(f"    error: {r['error']}\n")
                f.write(f"    target title: {t.get('title', '?')!r} ({doc_len(t) // 1000}k chars,"
                        f" {len(t.get('comments', []))} comments)\n")
                peers = ", ".join(f"{p} {q['results'][p]['rank'] or '-'}" for p in PEERS)
                f.write(f"    peers: {peers}\n")
                above = r["hits"][:(r["rank"] - 1) if r["rank"] else K]
                for k, ref in enumerate(above):
                    d = docs_by_ref.get(ref, {})
                    f.write(f"    {k + 1:2d}. {ref} {d.get('title', '?')!r} ({doc_len(d) // 1000}k"
                            f" chars, {len(d.get('comments', []))} comments)\n")
                f.write("\n")


# ----------------------------------------------------------------------------------------------


def main(argv):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(REPO_ROOT, "build", "bin"),
                    help="directory of issuescope, issuescope-bulk-index, issuescope-search")
    ap.add_argument("--work", help="scratch directory (default: a temporary one, removed after)")
    ap.add_argument("--sets", default=",".join(ALL_SETS), help="comma list of " +
                    ", ".join(ALL_SETS))
    ap.add_argument("--per-set", type=int, default=0, help="cap on queries per set")
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--json", help="write metrics, queries and ranks as JSON here")
    ap.add_argument("--failures", help="write issuescope's queries whose target is not first here")
    ap.add_argument("--windows", choices=["content", "any"], default="content",
                    help="title/body windows: no stop word at either edge (content, default) or "
                    "merely not all stop words (any)")
    ap.add_argument("--client", choices=["auto", "grpc", "cli"], default="auto",
                    help="how issuescope is queried (auto: gRPC when stubs are available)")
    ap.add_argument("--min-ratio", type=float, default=0.0,
                    help="fail (exit 1) when issuescope's MRR@10 on a set of at least "
                    "--min-ratio-queries queries is below X times the best peer's (0: never)")
    ap.add_argument("--min-ratio-queries", type=int, default=20)
    args = ap.parse_args(argv)
    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    WINDOW_RULE[0] = args.windows
    for s in sets:
        if s not in ALL_SETS:
            ap.error(f"unknown set {s!r}; known: {', '.join(ALL_SETS)}")
    for path, what in ((args.work, "--work"), (args.json, "--json"),
                       (args.failures, "--failures")):
        if path and inside_checkout(path):
            ap.error(f"{what} {path} is inside the checkout {REPO_ROOT}; write it outside "
                     "(the texts of ../shared are never copied into the project)")

    data = shared_issues.find_shared()
    if data is None:
        print(f"{PROG}: skipped: ../shared/data not found (set ISSUESCOPE_SHARED_DATA); "
              "nothing measured")
        return 0

    t_start = time.time()
    work = args.work or tempfile.mkdtemp(prefix="relevance-")
    os.makedirs(work, exist_ok=True)
    timings = {}
    issuescope = None
    try:
        require_binaries(args.bin, ["issuescope-bulk-index", "issuescope-search"])
        t = time.time()
        docs = load_corpus(data)
        docs_by_ref = {d["ref"]: d for d in docs}
        fams = {}
        for d in docs:
            fams[family(d)] = fams.get(family(d), 0) + 1
        timings["load corpus"] = time.time() - t
        log(f"corpus: {len(docs)} documents ({', '.join(f'{k} {v}' for k, v in fams.items())})")

        t = time.time()
        tindex = title_windows_index(docs, (2, 3, 4))
        tindex_text = TextIndex(docs) if {"body-fragment", "paraphrase"} & set(sets) else None
        per_set, dup_stats = {}, None
        for s in sets:
            rng = random.Random(f"{args.seed}/{s}")
            default = 100 if s == "paraphrase" else 150
            count = args.per_set or default
            if s.startswith("title-"):
                per_set[s] = make_title_set(docs, int(s[-1]), count, rng, tindex)
            elif s == "body-fragment":
                per_set[s] = make_body_set(docs, count, rng, tindex_text)
            elif s == "paraphrase":
                per_set[s] = make_paraphrase_set(docs, count, rng, tindex, tindex_text.df)
            else:
                qs, dup_stats = find_duplicates(docs)
                per_set[s] = qs[:args.per_set] if args.per_set else qs
        timings["make queries"] = time.time() - t
        if dup_stats is not None:
            log(f"duplicates: {dup_stats['pairs']} pairs in the corpus from "
                f"{dup_stats['mentions']} duplicate mentions ({dup_stats['by_pattern']})")

        jsonl = os.path.join(work, "corpus.jsonl")
        write_jsonl(docs, jsonl)
        issuescope = Issuescope(args.bin, work, args.client)
        t = time.time()
        issuescope.build(jsonl)
        timings["index issuescope"] = time.time() - t
        t = time.time()
        fts = Fts5("AND")
        fts.build(docs, os.path.join(work, "fts5.db"))
        fts_or = Fts5("OR")
        fts_or.share(fts)
        timings["index fts5"] = time.time() - t
        t = time.time()
        xap = XapianBM25()
        xap.build(docs, os.path.join(work, "xapian"))
        timings["index xapian"] = time.time() - t
        issuescope.start()
        log(f"issuescope queried through {issuescope.mode}")

        systems = {"issuescope": issuescope, "fts5": fts, "fts5-or": fts_or, "xapian": xap}
        qtime = {s: 0.0 for s in SYSTEMS}
        nq = 0
        for s in sets:
            for q in per_set[s]:
                q["results"] = {}
                exclude = set(q.get("exclude", []))
                for name in SYSTEMS:
                    t = time.time()
                    hits, err = systems[name].search(q["query"], K + len(exclude))
                    qtime[name] += time.time() - t
                    hits = [h for h in hits if h not in exclude][:K]
                    rank, ndcg = score(hits, set(q["targets"]))
                    q["results"][name] = {"hits": hits, "rank": rank, "ndcg": ndcg, "error": err}
                nq += 1
        metrics = {s: {name: summarise([q["results"][name] for q in per_set[s]])
                       for name in SYSTEMS} for s in sets}
        for name in SYSTEMS:
            timings[f"query {name}"] = qtime[name]
    finally:
        if issuescope is not None:
            issuescope.stop()
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    wall = time.time() - t_start

    print(f"## Search relevance: {len(docs)} documents, {nq} queries, seed {args.seed}\n")
    print(markdown(metrics, sets))
    if dup_stats is not None:
        print(f"\nduplicates: {dup_stats['pairs']} pairs found ({dup_stats['mentions']} duplicate "
              f"mentions; by pattern {dup_stats['by_pattern']})"
              + ("; fewer than 20, read that row as anecdotal" if dup_stats["pairs"] < 20 else ""))
    print("\n| step | seconds |\n|---|---:|")
    for k, v in timings.items():
        extra = f", {1000 * v / nq:.2f} ms a query" if k.startswith("query") and nq else ""
        if k == "query issuescope":
            extra += f", over {issuescope.mode}"
        print(f"| {k}{extra} | {v:.2f} |")
    print(f"| wall | {wall:.2f} |")

    if args.json:
        out = {"seed": args.seed, "documents": len(docs), "families": fams, "metrics": metrics,
               "timings": timings, "wall_s": wall, "duplicates": dup_stats,
               "issuescope_client": issuescope.mode,
               "queries": {s: [{"query": q["query"], "targets": q["targets"], "ref": q["ref"],
                                "how": q.get("how"),
                                "ranks": {n: q["results"][n]["rank"] for n in SYSTEMS},
                                "errors": {n: q["results"][n]["error"] for n in SYSTEMS
                                           if q["results"][n]["error"]}}
                               for q in per_set[s]] for s in sets}}
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1, ensure_ascii=False)
    if args.failures:
        write_failures(args.failures, sets, per_set, docs_by_ref)
    if args.min_ratio > 0:
        below = []
        for s in sets:
            if len(per_set[s]) < args.min_ratio_queries:
                continue
            ours = metrics[s]["issuescope"]["mrr10"]
            best = max(metrics[s][n]["mrr10"] for n in SYSTEMS if n != "issuescope")
            if ours < args.min_ratio * best:
                below.append(f"{s}: issuescope MRR@10 {ours:.3f} < {args.min_ratio} x best "
                             f"peer {best:.3f}")
        if below:
            log("relevance below the required ratio: " + "; ".join(below))
            return 1
        log(f"every set of {args.min_ratio_queries}+ queries at least {args.min_ratio}x the "
            "best peer's MRR@10")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BenchError as e:
        log(f"error: {e}")
        sys.exit(1)

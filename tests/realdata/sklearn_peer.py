#!/usr/bin/python3
"""A peer for the taxonomy tagger: scikit-learn's linear text classifiers on the same split.

  /usr/bin/python3 tests/realdata/sklearn_peer.py [--bin build/bin]

Trains on devset-1 + devset-3 (1,220 labelled real issues) and scores devset-2 (600 held out),
the split of docs/TAXONOMY.md "devset-3", with TF-IDF features (title words and bigrams, body
words and bigrams, title character 3-5-grams) and logistic regression or a linear SVM, the
label being the primary theme (whose kind is its first part); a body with and without its code,
log and <details> blocks; the title weighted 1 or 2. It prints each configuration's theme and
kind accuracy beside issuescope's model trained and scored on the same split with the shipped
options (indexer/taxonomies/model-options.sh), so the two are side by side in one run.

Then NLBSE'24 (bug / feature / question): TF-IDF (title and body words and bigrams, character
2-5-grams of the title and the body's start) with logistic regression or a linear SVM, the
configuration chosen on a stratified 20 % validation part of the training split, retrained on
the whole split and scored once on the test split (macro-F1), as docs/TAXONOMY.md does for
issuescope.

Needs Debian's python3-sklearn (not installed by deploy/install-deps.sh: `apt-get install
python3-sklearn`) and ../shared/data; says so and exits 0 without them. About a minute.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import shared_issues  # noqa: E402

PROG = "sklearn_peer"


def join(name, out):
    subprocess.run([sys.executable, os.path.join(HERE, "devset.py"), "join",
                    os.path.join(REPO, "indexer", "taxonomies", name, "adjudicated.jsonl"),
                    "--out", out], check=True, stdout=subprocess.DEVNULL)
    return [json.loads(line) for line in open(out, encoding="utf-8")]


def without_blocks(body):
    body = re.sub(r"```.*?```", " ", body or "", flags=re.S)
    body = re.sub(r"<details>.*?</details>", " ", body, flags=re.S)
    return re.sub(r"https?://\S+", " ", body)


def label(r):
    return r.get("theme") or r["kind"]


def main(argv):
    ap = argparse.ArgumentParser(prog=PROG)
    ap.add_argument("--bin", default=os.path.join(REPO, "build", "bin"))
    args = ap.parse_args(argv)
    try:
        from scipy.sparse import hstack
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.svm import LinearSVC
    except ImportError:
        print(f"{PROG}: skipped: scikit-learn not installed (apt-get install python3-sklearn)")
        return 0
    if shared_issues.find_shared() is None:
        print(f"{PROG}: skipped: ../shared/data not found; nothing measured")
        return 0
    work = tempfile.mkdtemp(prefix="sklearn-peer-")
    d1 = join("devset", os.path.join(work, "d1.jsonl"))
    d2 = join("devset-2", os.path.join(work, "d2.jsonl"))
    d3 = join("devset-3", os.path.join(work, "d3.jsonl"))
    train, test = d1 + d3, d2
    ytr, yte = [label(r) for r in train], [label(r) for r in test]

    def accuracy(pred):
        theme = sum(p == g for p, g in zip(pred, yte)) / len(yte)
        kind = sum(p.split(".")[0] == g.split(".")[0] for p, g in zip(pred, yte)) / len(yte)
        return theme, kind

    print(f"train devset-1 + devset-3 ({len(train)}), test devset-2 ({len(test)})\n")
    print("| system | theme accuracy | kind accuracy |\n|---|---:|---:|")
    # issuescope with the shipped options, on the same split.
    with open(os.path.join(work, "train.jsonl"), "w", encoding="utf-8") as f:
        for r in train:
            f.write(json.dumps({k: v for k, v in r.items() if k != "llm"}) + "\n")
    opts = subprocess.run(["bash", "-c", "source indexer/taxonomies/model-options.sh peer && "
                           "printf '%s\\n' \"${options[@]}\""], cwd=REPO, check=True,
                          capture_output=True, text=True).stdout.split("\n")
    opts = [o for o in opts if o]
    issuescope = os.path.join(args.bin, "issuescope")
    model = os.path.join(work, "m.model")
    subprocess.run([issuescope, "taxonomy", "train", "--data", os.path.join(work, "train.jsonl"),
                    *opts, "--name", "peer", "--compact", "--out", model], check=True,
                   cwd=REPO, stdout=subprocess.DEVNULL)
    out = subprocess.run([issuescope, "taxonomy", "eval", "--model", model, "--data",
                          os.path.join(work, "d2.jsonl"), "--json"], check=True, cwd=REPO,
                         capture_output=True, text=True).stdout
    ev = {f["field"]: f for f in (json.loads(line) for line in out.splitlines() if line.strip())}
    print(f"| issuescope (shipped options: model + rules + labels) | "
          f"{ev['theme']['accuracy']:.3f} | {ev['kind']['accuracy']:.3f} |")
    for body_name, body in (("whole body", lambda r: (r["body"] or "")[:3000]),
                            ("body without code/logs", lambda r: without_blocks(r["body"])[:3000])):
        vt = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)
        vb = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=2, max_features=50000)
        vc = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True, min_df=2)
        xt = vt.fit_transform([r["title"] for r in train])
        xb = vb.fit_transform([body(r) for r in train])
        xc = vc.fit_transform([r["title"] for r in train])
        tt = vt.transform([r["title"] for r in test])
        tb = vb.transform([body(r) for r in test])
        tc = vc.transform([r["title"] for r in test])
        for weight in (1.0, 2.0):
            x = hstack([weight * xt, xb, xc]).tocsr()
            t = hstack([weight * tt, tb, tc]).tocsr()
            for name, clf in (("logistic regression C=10", LogisticRegression(C=10, max_iter=3000)),
                              ("linear SVM C=0.5", LinearSVC(C=0.5)),
                              ("linear SVM C=1", LinearSVC(C=1))):
                clf.fit(x, ytr)
                theme, kind = accuracy(list(clf.predict(t)))
                print(f"| scikit-learn TF-IDF, {body_name}, title x{weight:g}, {name} | "
                      f"{theme:.3f} | {kind:.3f} |", flush=True)
    nlbse(shared_issues.find_shared())
    return 0


def nlbse(data):
    import csv
    from scipy.sparse import hstack
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import f1_score
    from sklearn.model_selection import train_test_split
    from sklearn.svm import LinearSVC
    csv.field_size_limit(10**9)
    d = os.path.join(data, "labeled", "nlbse24-issue-classification", "data")
    train = list(csv.DictReader(open(os.path.join(d, "issues_train.csv"), encoding="utf-8")))
    test = list(csv.DictReader(open(os.path.join(d, "issues_test.csv"), encoding="utf-8")))
    y, yt = [r["label"] for r in train], [r["label"] for r in test]

    def feats(fit, apply):
        title = lambda r: r["title"]
        body = lambda r: (r["body"] or "")[:4000]
        start = lambda r: r["title"] + " " + (r["body"] or "")[:500]
        vs = [(TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True), title),
              (TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=2), body),
              (TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True,
                               min_df=2), start)]
        x = hstack([v.fit_transform([f(r) for r in fit]) for v, f in vs]).tocsr()
        t = hstack([v.transform([f(r) for r in apply]) for v, f in vs]).tocsr()
        return x, t

    fit_idx, val_idx = train_test_split(list(range(len(train))), test_size=0.2, random_state=1,
                                        stratify=y)
    x, v = feats([train[i] for i in fit_idx], [train[i] for i in val_idx])
    best = None
    print(f"\nNLBSE'24: train {len(train)}, test {len(test)}\n")
    print("| scikit-learn configuration | validation macro-F1 |\n|---|---:|")
    for name, make in (("logistic regression C=1", lambda: LogisticRegression(C=1, max_iter=3000)),
                       ("logistic regression C=10", lambda: LogisticRegression(C=10, max_iter=3000)),
                       ("linear SVM C=0.1", lambda: LinearSVC(C=0.1)),
                       ("linear SVM C=0.5", lambda: LinearSVC(C=0.5))):
        clf = make()
        clf.fit(x, [y[i] for i in fit_idx])
        f1 = f1_score([y[i] for i in val_idx], clf.predict(v), average="macro")
        print(f"| {name} | {f1:.4f} |", flush=True)
        if best is None or f1 > best[0]:
            best = (f1, name, make)
    x, t = feats(train, test)
    clf = best[2]()
    clf.fit(x, y)
    print(f"\nNLBSE'24 test macro-F1, scikit-learn ({best[1]}, chosen on validation): "
          f"{f1_score(yt, clf.predict(t), average='macro'):.4f}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

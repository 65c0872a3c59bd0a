#!/usr/bin/env python3
"""Writes a simulator corpus (JSONL, tests/simulator/corpus_loader.h) whose threads have the
comment counts of real PyTorch issues: the 12,214 open PyTorch issues (12,220 rows) of the tf-vs-pytorch study
(../shared/data, labeled/tf-vs-pytorch-study/.../torch_open_issues_classified.csv: number, title,
creation time and comment count of each; no comment texts). Each issue keeps its real number,
title and creation time and gets as many placeholder comments as it really had, so a crawl of the
corpus asks the tracker for what a crawl of those issues asks for.

Usage: real_threads_corpus.py OUT.jsonl [--repo OWNER/NAME] [--limit N]
Prints one JSON line describing the corpus; when ../shared/data is absent it prints a line
saying so and exits 3 (the caller skips its section, saying why). Reads ../shared at run time;
nothing from it is kept in the project.
"""
import argparse
import csv
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "realdata"))
import shared_issues  # noqa: E402

CSV = ("labeled/tf-vs-pytorch-study/Evolution_Over_Bugs/Issues_classifier/ML_Model_Training/"
       "Mapped_Data/Final_Data/torch_open_issues_classified.csv")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--repo", default="pytorch/pytorch")
    ap.add_argument("--limit", type=int, default=0, help="the first N issues only (0: all)")
    args = ap.parse_args()
    data = shared_issues.find_shared()
    path = os.path.join(data, CSV) if data else None
    if not path or not os.path.isfile(path):
        print(json.dumps({"skipped": "no ../shared/data (or $ISSUESCOPE_SHARED_DATA) with " + CSV}))
        return 3
    rows = list(csv.DictReader(open(path, newline="", encoding="utf-8")))
    if args.limit > 0:
        rows = rows[:args.limit]
    comment_id = 1
    counts = []
    seen = set()  # the file lists 6 issues twice: the first row counts
    with open(args.out, "w", encoding="utf-8") as out:
        for row in rows:
            number = int(row["Issue Number"])
            if number in seen:
                continue
            seen.add(number)
            created = row["Time created"].replace(" ", "T").replace("+00:00", "Z")
            n = int(float(row["Number of Comments"] or 0))
            counts.append(n)
            comments = []
            for k in range(n):
                comments.append({"id": comment_id, "user": "commenter", "body": f"comment {k + 1}",
                                 "created_at": created, "updated_at": created})
                comment_id += 1
            out.write(json.dumps({"repo": args.repo, "number": number, "title": row["Issue Title"],
                                  "state": "open", "user": "author", "created_at": created,
                                  "updated_at": created, "comments": comments}) + "\n")
    print(json.dumps({"source": CSV, "issues": len(counts), "comments": sum(counts),
                      "without_comments": sum(1 for c in counts if c == 0),
                      "over_100": sum(1 for c in counts if c > 100)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

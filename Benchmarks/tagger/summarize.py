#!/usr/bin/env python3
"""Markdown tables of one or more compare.py runs: each method's scores, and mlkit's ratios
against CRFsuite, run by run.

    python3 Benchmarks/tagger/summarize.py results/run-a.json [results/run-b.json ...]

Training time is given twice: wall seconds, and the CPU seconds of the method's whole child
process (reading the data, training, writing and loading the model, tagging), which the
other work of a shared machine moves much less. mlkit trains on all cores, so its CPU seconds
add up both threads'. Tokens/s is the tagging of the test set from its tokens in memory:
mlkit's on all cores (best of three passes) and on one thread, CRFsuite's on its one thread.
"""

from __future__ import annotations

import json
import sys


def fmt(value, digits=4):
    return "—" if value is None else f"{value:.{digits}f}"


def ratio(a, b, digits=2):
    return "—" if not a or not b else f"{a / b:.{digits}f}×"


def main(paths: list[str]) -> None:
    runs = [json.load(open(path, encoding="utf-8")) for path in paths]
    print("| set | method | token accuracy | entity / word F1 | train s (wall) | CPU s | peak RSS MB | tokens/s |")
    print("|---|---|---|---|---|---|---|---|")
    for run in runs[:1]:
        for row in run["rows"]:
            score = (row.get("entity") or row.get("word") or {}).get("f1")
            speed = f"{row['tokens_per_s']:,.0f}" if row.get("tokens_per_s") else "—"
            print(f"| {row['dataset']} | {row['method']} | {fmt(row.get('token_accuracy'))} | {fmt(score)} | "
                  f"{row['train_s']:.1f} | {row['cpu_s']:.1f} | {row['peak_rss_mb']:.0f} | {speed} |")
    print()
    print("| run | set | accuracy − CRFsuite's | F1 − CRFsuite's | train (wall) | CPU | peak RSS | tokens/s, all cores | tokens/s, 1 thread |")
    print("|---|---|---|---|---|---|---|---|---|")
    for number, run in enumerate(runs, 1):
        by = {(row["dataset"], row["method"]): row for row in run["rows"]}
        for dataset in dict.fromkeys(row["dataset"] for row in run["rows"]):
            mlkit, peer = by.get((dataset, "mlkit-default")), by.get((dataset, "crfsuite"))
            if not mlkit or not peer:
                continue
            f1 = lambda row: (row.get("entity") or row.get("word") or {}).get("f1")
            gap = (f"{f1(mlkit) - f1(peer):+.4f}" if f1(mlkit) is not None and f1(peer) is not None else "—")
            print(f"| {number} | {dataset} | {mlkit['token_accuracy'] - peer['token_accuracy']:+.4f} | {gap} | "
                  f"{ratio(mlkit['train_s'], peer['train_s'])} | {ratio(mlkit['cpu_s'], peer['cpu_s'])} | "
                  f"{ratio(mlkit['peak_rss_mb'], peer['peak_rss_mb'])} | "
                  f"{ratio(mlkit.get('tokens_per_s'), peer.get('tokens_per_s'), 1)} | "
                  f"{ratio(mlkit.get('tokens_per_s_1thread'), peer.get('tokens_per_s'), 1)} |")


if __name__ == "__main__":
    main(sys.argv[1:])

"""Batch prediction of mlkit against fastText, pass by pass, interleaved.

    .venv/bin/python interleaved.py [--datasets vader-sentiment ...] [--rounds 15]

The comparison (compare.py) measures each method in its own process, minutes apart; on a
machine whose speed drifts by tens of percent within minutes (this one), the ratio of two
documents/s figures taken minutes apart moves by as much. Here both run side by side: fastText
(the peer with the most documents/s on every dataset; its defaults, 2 threads for training) in
this process, and mlkit's default model in an `MLKitProbe passes` child. Each round times one
pass of fastText's `predict` over the whole test set, as compare.py does (lowercasing and
whitespace joining included), and one pass of mlkit's `predictions(for:)`, alternating which
goes first. A pass covers the test set repeated up to at least 20,000 documents (the same
list for both), so that a pass lasts tens of milliseconds rather than a few. The ratio of each round is mlkit's documents/s over fastText's; the median over
the rounds is the figure to quote, with its range.

Needs the release builds of `mlkit` (`swift build -c release --product mlkit`) and of
`MLKitProbe` (`swift build -c release --package-path Benchmarks --product MLKitProbe`), the
datasets (datasets/out/) and this folder's venv. Writes results/interleaved-<UTC time>.json and prints a Markdown table.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
from compare import ALL_DATASETS, fasttext_clean, load_split, train_fasttext  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=ALL_DATASETS)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--min-documents", type=int, default=20_000, help="documents per pass, at least")
    ap.add_argument("--data-dir", default=str(REPO / "datasets/out"))
    ap.add_argument("--bin", default=str(REPO / ".build/release"), help="folder of the release mlkit binary")
    ap.add_argument("--probe", default=str(REPO / "Benchmarks/.build/release/MLKitProbe"),
                    help="the release MLKitProbe binary")
    args = ap.parse_args()

    data = Path(args.data_dir)
    rows = []
    for dataset in args.datasets:
        (xtr, ytr), (xte, _) = load_split(data, dataset, "train"), load_split(data, dataset, "test")
        repeat = -(-args.min_documents // len(xte))
        batch = xte * repeat
        with tempfile.TemporaryDirectory() as work:
            work = Path(work)
            peer, _ = train_fasttext(xtr, ytr, work, dict(thread=2, verbose=0))
            model = work / "model.mlkit"
            subprocess.run([f"{args.bin}/mlkit", "train", str(data / f"{dataset}.train.json"), "-o", str(model)],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            child = subprocess.Popen([args.probe, "passes", str(model),
                                      str(data / f"{dataset}.test.json"), str(repeat)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
            ready = child.stdout.readline().split()
            assert ready[:1] == ["ready"] and int(ready[1]) == len(batch), ready

            def mlkit_pass() -> float:
                child.stdin.write("\n")
                child.stdin.flush()
                return float(child.stdout.readline())

            def fasttext_pass() -> float:
                start = time.perf_counter()
                peer.predict([fasttext_clean(t) for t in batch], k=1)
                return time.perf_counter() - start

            mlkit_pass(), fasttext_pass()  # warm-up: page in the models, fill the caches
            rounds = []
            for index in range(args.rounds):
                if index % 2 == 0:
                    ours, theirs = mlkit_pass(), fasttext_pass()
                else:
                    theirs, ours = fasttext_pass(), mlkit_pass()
                rounds.append({"mlkit_s": ours, "fasttext_s": theirs, "ratio": theirs / ours})
            child.stdin.close()
            child.wait()
        ratios = [r["ratio"] for r in rounds]
        row = {"dataset": dataset, "documents": len(batch), "test_set_repeated": repeat, "rounds": rounds,
               "ratio_median": statistics.median(ratios), "ratio_min": min(ratios), "ratio_max": max(ratios),
               "mlkit_docs_per_s_median": statistics.median(len(batch) / r["mlkit_s"] for r in rounds),
               "fasttext_docs_per_s_median": statistics.median(len(batch) / r["fasttext_s"] for r in rounds),
               "load_avg": os.getloadavg()}
        rows.append(row)
        print(f"{dataset}: mlkit {row['mlkit_docs_per_s_median']:,.0f} docs/s, fastText "
              f"{row['fasttext_docs_per_s_median']:,.0f} docs/s, ratio median {row['ratio_median']:.1f}x "
              f"({row['ratio_min']:.1f}-{row['ratio_max']:.1f}x over {len(rounds)} rounds)", flush=True)

    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = HERE / "results" / f"interleaved-{stamp}.json"
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short=10", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    out.write_text(json.dumps({"kind": "mlkit-interleaved-prediction", "created_utc": stamp, "commit": commit,
                               "rounds": args.rounds, "rows": rows}, indent=1) + "\n", encoding="utf-8")
    print(f"\n| dataset | mlkit docs/s | fastText docs/s | ratio, median (range) |\n|---|---:|---:|---|")
    for row in rows:
        print(f"| {row['dataset']} | {row['mlkit_docs_per_s_median']:,.0f} | {row['fasttext_docs_per_s_median']:,.0f} "
              f"| {row['ratio_median']:.1f}× ({row['ratio_min']:.1f}–{row['ratio_max']:.1f}×) |")
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()

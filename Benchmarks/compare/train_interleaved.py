"""Training time of mlkit's default against one peer, run by run, interleaved.

    .venv/bin/python train_interleaved.py DATASET PEER [--rounds 9]
    .venv/bin/python train_interleaved.py debian-sections sklearn-linearsvc --rounds 3

The comparison (compare.py) trains each method in its own process, minutes apart; on a machine
whose speed drifts by tens of percent within minutes, the ratio of two training times taken
minutes apart drifts as much. Here each round trains both, one after the other in fresh
processes, alternating which goes first: mlkit's default (`MLKitProbe compare --algorithm
default`) and the peer (`compare.py --worker PEER`). Each side reports its own in-process
training time, as in the comparison (`train_s`: TextClassifier(trainingData:) in memory for
mlkit, the pipeline's `fit` for a scikit-learn peer). It prints the median of the per-round
ratios (mlkit over the peer) with its range.

PEER is one of compare.py's peer methods (sklearn-linearsvc, sklearn-complementnb, ...). Needs
the release build, the datasets (datasets/out/) and this folder's venv, as `run.sh` sets up.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DATA = REPO / "datasets" / "out"


def mlkit_train_seconds(dataset: str) -> float:
    """One training of mlkit's default in a fresh `MLKitProbe compare` process."""
    with tempfile.TemporaryDirectory(prefix="train-interleaved-") as work:
        result = Path(work) / "result.json"
        subprocess.run([str(REPO / "Benchmarks" / ".build" / "release" / "MLKitProbe"), "compare",
                        str(DATA / f"{dataset}.train.json"), str(DATA / f"{dataset}.test.json"),
                        "--algorithm", "default", "--model", str(Path(work) / "model.mlkit"),
                        "--result", str(result), "--latency-calls", "1", "--predict-passes", "1"],
                       check=True, capture_output=True)
        return json.loads(result.read_text(encoding="utf-8"))["train_s"]


def peer_train_seconds(dataset: str, peer: str) -> float:
    """One training of `peer` in a fresh compare.py worker process."""
    with tempfile.TemporaryDirectory(prefix="train-interleaved-") as work:
        result = Path(work) / "result.json"
        subprocess.run([sys.executable, str(HERE / "compare.py"), "--worker", peer, dataset,
                        "--data-dir", str(DATA), "--result", str(result),
                        "--latency-calls", "1", "--predict-passes", "1"],
                       check=True, capture_output=True, env=dict(os.environ, PYTHONHASHSEED="0"))
        return json.loads(result.read_text(encoding="utf-8"))["train_s"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset")
    ap.add_argument("peer")
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args()
    mlkit, peer, ratios = [], [], []
    for round_ in range(args.rounds):
        if round_ % 2:
            m = mlkit_train_seconds(args.dataset)
            p = peer_train_seconds(args.dataset, args.peer)
        else:
            p = peer_train_seconds(args.dataset, args.peer)
            m = mlkit_train_seconds(args.dataset)
        mlkit.append(m)
        peer.append(p)
        ratios.append(m / p)
    print(f"{args.dataset}: mlkit {statistics.median(mlkit):.3f} s, {args.peer} {statistics.median(peer):.3f} s, "
          f"ratio median {statistics.median(ratios):.3f}× (range {min(ratios):.3f}–{max(ratios):.3f}×, "
          f"{args.rounds} rounds)")


if __name__ == "__main__":
    main()

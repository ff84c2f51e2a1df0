"""Training of two mlkit builds, run by run, interleaved.

    python3 ab_train.py OLD/mlkit NEW/mlkit DATA.json [--rounds 9] [-- TRAIN OPTIONS...]

For a change to the training path: each round runs `mlkit train DATA` with each build, in
alternating order, and takes each run's wall time and CPU time (user and system, from the
child's resource usage). It prints both builds' medians, and the median of the per-round time
ratio (new over old) with its interquartile range, for the wall time and for the CPU time. On a
machine shared with other jobs the wall time drifts with the load; the CPU time drifts less. The
options after `--` go to both runs (default: `--time-budget 100000`, so that `auto` tries the
same candidates whatever the load). Needs only the two release builds.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("data")
    ap.add_argument("--rounds", type=int, default=9)
    arguments = sys.argv[1:]
    split = arguments.index("--") if "--" in arguments else len(arguments)
    args = ap.parse_args(arguments[:split])
    options = arguments[split + 1:] or ["--time-budget", "100000"]

    def run(binary: str, folder: str) -> tuple[float, float]:
        command = [binary, "train", args.data, "-o", os.path.join(folder, "model.mlkit"), *options]
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        if status != 0:
            raise SystemExit(f"{' '.join(command)} exited with status {status}")
        return wall, usage.ru_utime + usage.ru_stime

    old, new = [], []
    with tempfile.TemporaryDirectory(prefix="ab-train-") as folder:
        for round_ in range(args.rounds):
            if round_ % 2:
                old.append(run(args.old, folder))
                new.append(run(args.new, folder))
            else:
                new.append(run(args.new, folder))
                old.append(run(args.old, folder))
            print(f"round {round_ + 1}: old {old[-1][0]:.2f} s, new {new[-1][0]:.2f} s", flush=True)

    def summary(index: int, name: str) -> str:
        ratios = [n[index] / o[index] for o, n in zip(old, new)]
        low, _, high = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else (ratios[0],) * 3
        return (f"{name}: old {statistics.median(o[index] for o in old):.2f} s, new "
                f"{statistics.median(n[index] for n in new):.2f} s, new/old median {statistics.median(ratios):.3f} "
                f"(interquartile {low:.3f}-{high:.3f})")

    print(summary(0, "wall"))
    print(summary(1, "cpu"))
    print(f"{args.rounds} rounds, load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

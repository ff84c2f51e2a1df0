#!/usr/bin/env python3
"""Load a model and answer one text, whole process, mlkit against fastText's command line.

Runs each command in turn, `--rounds` times (interleaved, so that load on a shared machine falls
on all of them alike), and prints for each the wall and CPU (user + system) milliseconds, best /
median / worst, and the largest peak RSS:

  * `mlkit --version`: the process's start alone, the floor under every other mlkit row;
  * `mlkit predict "hello world"` with the bundled model;
  * `mlkit predict --model MODEL "hello world"`, for each `--model`;
  * `fasttext predict-prob FTMODEL FILE` with one line, for each `--fasttext-model` (Debian's
    `fasttext` package).

    python3 Benchmarks/compare/load_latency.py --mlkit .build/release/mlkit \\
        --model debian-30.mlkit --fasttext-model debian-30.bin --rounds 15
"""

import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mlkit", required=True, help="the mlkit binary (a release build)")
    parser.add_argument("--model", action="append", default=[], help="an mlkit model file (repeatable)")
    parser.add_argument("--fasttext-model", action="append", default=[], help="a fastText .bin (repeatable)")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--text", default="hello world")
    args = parser.parse_args()

    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as handle:
        handle.write(args.text + "\n")
        text_file = handle.name
    commands = [[args.mlkit, "--version"], [args.mlkit, "predict", args.text]]
    commands += [[args.mlkit, "predict", "--model", model, args.text] for model in args.model]
    fasttext = shutil.which("fasttext")
    if args.fasttext_model and not fasttext:
        print("fasttext is not installed (apt-get install fasttext); its rows are skipped", file=sys.stderr)
    if fasttext:
        commands += [[fasttext, "predict-prob", model, text_file] for model in args.fasttext_model]

    wall = [[] for _ in commands]
    cpu = [[] for _ in commands]
    rss = [0 for _ in commands]
    for _ in range(args.rounds):
        for index, command in enumerate(commands):
            start = time.perf_counter()
            process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _, status, usage = os.wait4(process.pid, 0)
            wall[index].append((time.perf_counter() - start) * 1000)
            cpu[index].append((usage.ru_utime + usage.ru_stime) * 1000)
            rss[index] = max(rss[index], usage.ru_maxrss)
            if status != 0:
                print(f"failed ({status}): {shlex.join(command)}", file=sys.stderr)
                return 1
    os.unlink(text_file)

    def spread(values):
        values = sorted(values)
        return f"{values[0]:.1f} / {statistics.median(values):.1f} / {values[-1]:.1f}"

    print(f"{args.rounds} rounds, load average {os.getloadavg()[0]:.1f}")
    print("| command | wall ms (best / median / worst) | CPU ms (best / median / worst) | peak RSS |")
    print("|---|---|---|---|")
    for index, command in enumerate(commands):
        print(f"| `{shlex.join(command)}` | {spread(wall[index])} | {spread(cpu[index])} | {rss[index] / 1024:.0f} MB |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

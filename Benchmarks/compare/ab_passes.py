"""Batch prediction of two mlkit builds, pass by pass, interleaved.

    .venv/bin/python ab_passes.py OLD/MLKitProbe NEW/MLKitProbe MODEL.mlkit TEST.json [--rounds 61]

For a change to the prediction path: both builds' `MLKitProbe passes` children load the same
model and the same test texts (repeated up to at least 20,000 documents), and each round times
one pass of each, alternating which goes first, after three warm-up rounds. It prints both
builds' median documents/s and the median of the per-round speed ratio (new over old) with its
interquartile range. Needs only the two release builds; the model file must be one both read.
"""
import argparse
import json
import statistics
import subprocess


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("model")
    ap.add_argument("test")
    ap.add_argument("--rounds", type=int, default=61)
    ap.add_argument("--min-documents", type=int, default=20_000, help="documents per pass, at least")
    args = ap.parse_args()

    with open(args.test, encoding="utf-8") as file:
        count = len(json.load(file))
    repeat = str(-(-args.min_documents // count))

    def start(binary: str) -> tuple[subprocess.Popen, int]:
        child = subprocess.Popen([binary, "passes", args.model, args.test, repeat],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        return child, int(child.stdout.readline().split()[1])

    def timed_pass(child: subprocess.Popen) -> float:
        child.stdin.write("\n")
        child.stdin.flush()
        return float(child.stdout.readline())

    old, documents = start(args.old)
    new, _ = start(args.new)
    for _ in range(3):
        timed_pass(old)
        timed_pass(new)
    old_s, new_s = [], []
    for round_ in range(args.rounds):
        if round_ % 2:
            old_s.append(timed_pass(old))
            new_s.append(timed_pass(new))
        else:
            new_s.append(timed_pass(new))
            old_s.append(timed_pass(old))
    old.stdin.close()
    new.stdin.close()
    ratios = [o / n for o, n in zip(old_s, new_s)]
    low, _, high = statistics.quantiles(ratios, n=4)
    print(f"old {documents / statistics.median(old_s):,.0f} docs/s, new {documents / statistics.median(new_s):,.0f} "
          f"docs/s, speed new/old median {statistics.median(ratios):.3f} (interquartile {low:.3f}-{high:.3f}, "
          f"{args.rounds} rounds)")


if __name__ == "__main__":
    main()

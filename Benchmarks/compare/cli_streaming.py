"""The command line against the library and against fastText's own command line, whole process.

    python3 Benchmarks/compare/cli_streaming.py [--dataset debian-sections] [--documents 500000]
                                                [--rounds 5] [--nice-peer]

Writes, in a temporary folder, the dataset's test texts repeated to at least --documents lines
(mlkit reads them as they are; fastText reads them lowercased and whitespace-joined, as
compare.py feeds it), trains mlkit with no flags and fastText with its command line's defaults
(`fasttext supervised`, as compare.py's fasttext-default: lr 0.1, dim 100, epoch 5, wordNgrams 1,
softmax, minCount 1, 2 threads) on the training split, then times, round after round, in
alternating order:

- `mlkit predict --input FILE` (a memory-mapped file),
- `mlkit predict < FILE` (standard input, a file),
- `cat FILE | mlkit predict` (standard input, a pipe),
- `fasttext predict MODEL.bin FILE` (Debian's `fasttext` package),
- one pass of the library's `predictions(for:)` over the same texts, in process
  (`MLKitProbe passes`), the texts already in memory.

Each command's output goes to /dev/null. For each process: wall seconds, user and system CPU
seconds (wait4), and CPU use, (user + system) / wall. The load average is printed at the start
and the end. Needs `swift build -c release --product mlkit`, `swift build -c release
--package-path Benchmarks --product MLKitProbe`, the dataset in datasets/out/, and `fasttext` on
the PATH.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
from compare import fasttext_clean, load_split, shuffled  # noqa: E402


def timed(command: str) -> dict:
    """Runs `command` in a shell; its wall, user and system seconds, its children's included."""
    start = time.perf_counter()
    child = subprocess.Popen(["/bin/sh", "-c", command])
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"{command}: exit status {status}")
    return {"wall": wall, "user": usage.ru_utime, "sys": usage.ru_stime, "max_rss_mb": usage.ru_maxrss / 1024}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", default="debian-sections")
    ap.add_argument("--documents", type=int, default=500_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--data-dir", default=str(REPO / "datasets/out"))
    ap.add_argument("--bin", default=str(REPO / ".build/release"), help="folder of the release mlkit binary")
    ap.add_argument("--probe", default=str(REPO / "Benchmarks/.build/release/MLKitProbe"),
                    help="the release MLKitProbe binary")
    ap.add_argument("--fasttext", default="fasttext")
    ap.add_argument("--nice-peer", action="store_true", help="also run each mlkit command beside a niced busy loop")
    args = ap.parse_args()

    data = Path(args.data_dir)
    (xtr, ytr), (xte, _) = load_split(data, args.dataset, "train"), load_split(data, args.dataset, "test")
    repeat = -(-args.documents // len(xte))
    mlkit, probe = f"{args.bin}/mlkit", args.probe
    print(f"load average at start: {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        texts, cleaned = work / "texts.txt", work / "texts.fasttext.txt"
        with open(texts, "w", encoding="utf-8") as plain, open(cleaned, "w", encoding="utf-8") as lower:
            for _ in range(repeat):
                for text in xte:
                    plain.write(" ".join(text.split()) + "\n")
                    lower.write(fasttext_clean(text) + "\n")
        count = repeat * len(xte)
        print(f"{count:,} texts, {texts.stat().st_size / 1e6:.1f} MB", flush=True)
        train = work / "train.txt"
        with open(train, "w", encoding="utf-8") as f:
            for text, label in zip(*shuffled(xtr, ytr)):
                f.write(f"__label__{label} {fasttext_clean(text)}\n")
        subprocess.run([args.fasttext, "supervised", "-input", str(train), "-output", str(work / "ft"), "-thread", "2",
                        "-verbose", "0"], check=True)
        model = work / "model.mlkit"
        subprocess.run([mlkit, "train", str(data / f"{args.dataset}.train.json"), "-o", str(model)], check=True,
                       stdout=subprocess.DEVNULL)
        print(f"models: mlkit {model.stat().st_size / 1e6:.1f} MB, fastText {(work / 'ft.bin').stat().st_size / 1e6:.1f} MB",
              flush=True)
        commands = {
            "mlkit predict --input FILE": f"'{mlkit}' predict --model '{model}' --input '{texts}' > /dev/null",
            "mlkit predict < FILE": f"'{mlkit}' predict --model '{model}' < '{texts}' > /dev/null",
            "cat FILE | mlkit predict": f"cat '{texts}' | '{mlkit}' predict --model '{model}' > /dev/null",
            "fasttext predict": f"'{args.fasttext}' predict '{work / 'ft.bin'}' '{cleaned}' > /dev/null",
        }
        # The library's side: the same texts, one line each, as a JSON dataset for MLKitProbe.
        probe_texts = work / "texts.json"
        with open(probe_texts, "w", encoding="utf-8") as f:
            json.dump([{"text": t, "label": "x"} for t in xte], f)
        child = subprocess.Popen([probe, "passes", str(model), str(probe_texts), str(repeat)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        assert child.stdout.readline().split() == ["ready", str(count)]

        def library_pass() -> dict:
            child.stdin.write("\n")
            child.stdin.flush()
            return {"wall": float(child.stdout.readline())}

        names = list(commands) + ["library, in process"]
        runs = {name: [] for name in names}

        def run(name: str) -> dict:
            return library_pass() if name == "library, in process" else timed(commands[name])

        for name in names:  # warm-up: the files and models in the page cache
            run(name)
        for index in range(args.rounds):
            order = names if index % 2 == 0 else list(reversed(names))
            for name in order:
                runs[name].append(run(name))
        busy = {name: [] for name in commands if name.startswith(("mlkit", "cat"))} if args.nice_peer else {}
        if busy:
            # Another job on the cores: a niced busy loop per core.
            loops = [subprocess.Popen(["nice", "-n", "10", "sh", "-c", "while :; do :; done"]) for _ in range(os.cpu_count() or 2)]
            try:
                for index in range(args.rounds):
                    for name in list(busy) + ["fasttext predict"]:
                        busy.setdefault(name, []).append(timed(commands[name]))
            finally:
                for loop in loops:
                    loop.kill()
                    loop.wait()
        child.stdin.close()
        child.wait()

    print(f"load average at end: {os.getloadavg()}\n")
    library_best = min(r["wall"] for r in runs["library, in process"])
    fasttext_best = min(r["wall"] for r in runs["fasttext predict"])
    print("| command | wall s (best–worst) | documents/s, best | CPU use | peak RSS MB | × library | × fastText |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name in names:
        rows = runs[name]
        best = min(rows, key=lambda r: r["wall"])
        cpu = f"{(best['user'] + best['sys']) / best['wall']:.2f}" if "user" in best else ""
        rss = f"{best['max_rss_mb']:.0f}" if "max_rss_mb" in best else ""
        print(f"| {name} | {best['wall']:.2f}–{max(r['wall'] for r in rows):.2f} | {count / best['wall']:,.0f} | {cpu} | "
              f"{rss} | {library_best / best['wall']:.2f} | {fasttext_best / best['wall']:.1f} |")
    if busy:
        print("\nWith a niced busy loop on each core:\n")
        print("| command | wall s (best–worst) | documents/s, best | CPU use | × fastText (same conditions) |")
        print("|---|---|---:|---:|---:|")
        peer = min(r["wall"] for r in busy["fasttext predict"])
        for name, rows in busy.items():
            best = min(rows, key=lambda r: r["wall"])
            print(f"| {name} | {best['wall']:.2f}–{max(r['wall'] for r in rows):.2f} | {count / best['wall']:,.0f} | "
                  f"{(best['user'] + best['sys']) / best['wall']:.2f} | {peer / best['wall']:.1f} |")


if __name__ == "__main__":
    main()

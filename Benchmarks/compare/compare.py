#!/usr/bin/env python3
"""Run mlkit and peer text classifiers (scikit-learn, fastText, Vowpal
Wabbit) on the mlkit datasets and record accuracy, macro-F1, speed, memory and
model size.  Benchmarks/compare/run.sh calls it; on its own:

    python3 Benchmarks/compare/compare.py --datasets vader-sentiment fortunes-topic \
        --out results/compare.json [--quick] \
        [--mlkit-probe Benchmarks/.build/release/MLKitProbe --mlkit-cli .build/release/mlkit]

Each (dataset, method) pair runs in fresh child processes, one method at a
time, up to REPS times (default 3): a repetition is repeated only while the
last one took less than --repeat-below seconds (default 10), because a long
run's timing varies little relative to its length and repeating it costs
most of the run's time.  Repetitions after the first re-measure training:
they make one prediction pass (for their accuracy) and only LATENCY_MIN_CALLS
latency calls, and the reported latency is the first repetition's.  Per
dataset the peers run first, then mlkit.

A peer child (this script with --worker) loads the dataset's train/test JSON,
trains, saves the model to disk, predicts the whole test set (best of PASSES
passes), then measures single-document latency and writes its predictions.
An mlkit child is `MLKitProbe compare` (Benchmarks/Sources/MLKitProbe/Comparison.swift),
a release binary that does the same steps in Swift.  The parent waits for
each child with os.wait4, whose rusage gives that child's own peak RSS.
Reported per method:

  accuracy, macro_f1   of the first repetition's predictions (the per-rep
                       values are kept in `reps`; fastText is multi-threaded
                       and not bit-reproducible);
  train_s              best of the repetitions (minimum);
  predict_docs_per_s   best over the passes over the test set (PASSES in the
                       first repetition, no further pass once they add up
                       to 5 s; one in each later repetition), model already
                       loaded in memory;
  latency_us           the first repetition's median over LATENCY_CALLS
                       calls that predict one short test text, in-process
                       (fewer if they add up to more than 3 s, at least 20);
  peak_rss_mb          largest peak RSS over the children (whole process:
                       interpreter or binary, libraries, data and model);
  model_bytes          size of the saved model file(s).

The parent computes accuracy and macro-F1 itself (macro-F1 over the union of
true and predicted labels, as scikit-learn's f1_score(average="macro")), so
the fastText and VW children never import scikit-learn.  For mlkit it also
runs `mlkit evaluate --json` on the first repetition's model file, when
--mlkit-cli is given, and records the CLI's accuracy beside the probe's.

Relative --out and --data-dir paths are taken relative to this folder's
parent repo layout: --out relative to Benchmarks/compare/, --data-dir
relative to the repo root.  See results/README.md for the JSON format.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent

ALL_DATASETS = ["vader-sentiment", "vader-sentiment-3", "fortunes-topic",
                "fortunes-language", "debian-sections", "wordnet-lexnames", "wordnet-hypernyms"]
QUICK_DATASETS = ["vader-sentiment"]

# method name -> short description (written into the result file)
METHODS = {
    "sklearn-multinomialnb":
        "CountVectorizer() + MultinomialNB() (all defaults)",
    "sklearn-complementnb":
        "CountVectorizer() + ComplementNB() (all defaults)",
    "sklearn-linearsvc":
        "TfidfVectorizer(ngram_range=(1,2), sublinear_tf=True) + LinearSVC() "
        "(C=1, squared hinge, one-vs-rest, dual='auto')",
    "sklearn-logreg":
        "TfidfVectorizer(ngram_range=(1,2), sublinear_tf=True) + "
        "LogisticRegression(C=1, solver='sag', max_iter=1000) (multinomial; lbfgs "
        "reached the same accuracy but took ~20x longer on fortunes-topic)",
    "fasttext-default":
        "fasttext.train_supervised defaults (lr=0.1, dim=100, epoch=5, "
        "wordNgrams=1, loss=softmax, minCount=1) with thread=2; text lowercased, "
        "whitespace-tokenised by fastText; training examples shuffled (seed 42)",
    "fasttext-tuned":
        "fasttext.train_supervised(epoch=25, lr=1.0, wordNgrams=2, thread=2), "
        "other defaults (dim=100, bucket=2000000); text lowercased; training "
        "examples shuffled (seed 42)",
    "vw-oaa":
        "vowpalwabbit: --oaa K --ngram 2 -b 24 --passes 5 -c -k "
        "--loss_function logistic (VW's default 1-in-10 holdout for passes); "
        "features = lowercased whitespace tokens, '|' and ':' replaced; training "
        "examples shuffled (seed 42)",
}
LOGREG_MAX_ITER = 1000
PASSES = 3          # passes over the test set per child (--predict-passes)
PREDICT_BUDGET_S = 5.0   # no further test-set pass once the passes add up to this
LATENCY_BUDGET_S = 3.0   # most seconds of timed latency calls per child
LATENCY_MIN_CALLS = 20   # fewest latency calls, whatever the budget
LAST_LATENCY_CALLS = 0   # calls the last median_latency_us made


# ---------------------------------------------------------------- helpers --

def load_split(data_dir: Path, dataset: str, part: str) -> tuple[list[str], list[str]]:
    with open(data_dir / f"{dataset}.{part}.json", encoding="utf-8") as f:
        rows = json.load(f)
    return [r["text"] for r in rows], [r["label"] for r in rows]


def latency_text(texts: list[str]) -> str:
    """The test text whose length is closest to 80 characters (first wins)."""
    return min(texts, key=lambda t: abs(len(t) - 80))


def fasttext_clean(text: str) -> str:
    # fastText splits on whitespace only; a typical user lowercases and makes
    # sure there is no newline in a line.  Punctuation stays attached.
    return " ".join(text.lower().split())


def vw_features(text: str) -> str:
    # '|' starts a namespace and ':' introduces a feature value in VW's text
    # format, so they must not appear inside a feature name.
    return " ".join(text.lower().replace("|", "_PIPE_").replace(":", "_COLON_").split())


def accuracy(y_true: list[str], y_pred: list[str]) -> float:
    return sum(a == b for a, b in zip(y_true, y_pred)) / len(y_true)


def macro_f1(y_true: list[str], y_pred: list[str]) -> float:
    labels = sorted(set(y_true) | set(y_pred))
    f1s = []
    for lab in labels:
        tp = sum(1 for a, b in zip(y_true, y_pred) if a == lab and b == lab)
        fp = sum(1 for a, b in zip(y_true, y_pred) if a != lab and b == lab)
        fn = sum(1 for a, b in zip(y_true, y_pred) if a == lab and b != lab)
        denom = 2 * tp + fp + fn
        f1s.append(2 * tp / denom if denom else 0.0)
    return sum(f1s) / len(f1s)


def file_bytes(path: Path) -> int:
    return path.stat().st_size


def time_best(fn, passes: int):
    """Run fn() up to `passes` times, stopping early once the passes add up
    to PREDICT_BUDGET_S (at least one pass); return (best seconds, last result)."""
    best, out, total = float("inf"), None, 0.0
    for _ in range(passes):
        t0 = time.perf_counter()
        out = fn()
        elapsed = time.perf_counter() - t0
        best, total = min(best, elapsed), total + elapsed
        if total > PREDICT_BUDGET_S:
            break
    return best, out


def median_latency_us(fn, text: str, calls: int) -> float:
    """Median of `calls` timed calls after a warm-up, both cut short by a time
    budget (LATENCY_BUDGET_S of timed calls, a tenth of it for the warm-up,
    never fewer than LATENCY_MIN_CALLS calls): a few peers take tens of ms per
    call on the large datasets, and 1,000 of those would cost minutes."""
    global LAST_LATENCY_CALLS
    start = time.perf_counter()
    for i in range(min(50, calls)):          # warm-up
        fn(text)
        if i + 1 >= LATENCY_MIN_CALLS and time.perf_counter() - start > LATENCY_BUDGET_S / 10:
            break
    samples, total = [], 0
    for _ in range(calls):
        t0 = time.perf_counter_ns()
        fn(text)
        samples.append(time.perf_counter_ns() - t0)
        total += samples[-1]
        if len(samples) >= LATENCY_MIN_CALLS and total > LATENCY_BUDGET_S * 1e9:
            break
    LAST_LATENCY_CALLS = len(samples)
    return statistics.median(samples) / 1000.0


# ---------------------------------------------------------------- workers --

def work_sklearn(method, train, test, work, calls, quantize):
    import joblib
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import ComplementNB, MultinomialNB
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import LinearSVC
    import warnings

    def build():
        if method == "sklearn-multinomialnb":
            return make_pipeline(CountVectorizer(), MultinomialNB())
        if method == "sklearn-complementnb":
            return make_pipeline(CountVectorizer(), ComplementNB())
        tfidf = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)
        if method == "sklearn-linearsvc":
            return make_pipeline(tfidf, LinearSVC())
        return make_pipeline(tfidf, LogisticRegression(solver="sag",
                                                       max_iter=LOGREG_MAX_ITER))

    (xtr, ytr), (xte, _) = train, test
    notes = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        model = build()
        t0 = time.perf_counter()
        model.fit(xtr, ytr)
        train_s = time.perf_counter() - t0
    notes["converged"] = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    clf = model[-1]
    if hasattr(clf, "n_iter_"):
        import numpy as np
        notes["n_iter"] = [int(x) for x in np.atleast_1d(clf.n_iter_)]
    notes["n_features"] = len(model[0].vocabulary_)

    path = work / "model.joblib"
    joblib.dump(model, path)
    predict_s, pred = time_best(lambda: model.predict(xte), PASSES)
    lat = median_latency_us(lambda t: model.predict([t]), latency_text(xte), calls)
    return dict(train_s=train_s, predict_s=predict_s, latency_us=lat,
                model_bytes=file_bytes(path), pred=[str(p) for p in pred], notes=notes)


def shuffled(xtr, ytr):
    """The training examples in a random order (seed 42), for the online learners.

    fastText and Vowpal Wabbit learn by SGD in the order of their input file,
    and fastText's docs advise shuffling it. Some datasets keep their source's
    order, one label after another (fortunes-topic, fortunes-language), and in
    that order the online learners scored up to 0.3 lower. The batch learners
    (scikit-learn, mlkit) read the examples as they are.
    """
    order = list(range(len(xtr)))
    random.Random(42).shuffle(order)
    return [xtr[i] for i in order], [ytr[i] for i in order]


def train_fasttext(xtr, ytr, work: Path, params: dict):
    """Write fastText's training file into `work`, the examples shuffled, and train on it;
    returns (model, its path)."""
    import fasttext

    train_file = work / "train.txt"
    with open(train_file, "w", encoding="utf-8") as f:
        for text, label in zip(*shuffled(xtr, ytr)):
            f.write(f"__label__{label} {fasttext_clean(text)}\n")
    return fasttext.train_supervised(input=str(train_file), **params), train_file


def work_fasttext(method, train, test, work, calls, quantize):
    (xtr, ytr), (xte, yte) = train, test
    params = dict(thread=2, verbose=0)
    if method == "fasttext-tuned":
        params.update(epoch=25, lr=1.0, wordNgrams=2)

    t0 = time.perf_counter()
    model, train_file = train_fasttext(xtr, ytr, work, params)
    train_s = time.perf_counter() - t0

    bin_path = work / "model.bin"
    model.save_model(str(bin_path))

    def predict_all(m):
        labels, _ = m.predict([fasttext_clean(t) for t in xte], k=1)
        return [ls[0][len("__label__"):] if ls else "" for ls in labels]

    predict_s, pred = time_best(lambda: predict_all(model), PASSES)
    lat = median_latency_us(lambda t: model.predict(fasttext_clean(t)),
                            latency_text(xte), calls)

    notes = {"args": {k: v for k, v in params.items() if k != "verbose"}}
    if not quantize:
        return dict(train_s=train_s, predict_s=predict_s, latency_us=lat,
                    model_bytes=file_bytes(bin_path), pred=pred, notes=notes)

    # Quantized model, the way the fastText docs show it:
    #   quantize(input=train, qnorm=True, retrain=True, cutoff=100000)
    # Its product-quantizer k-means costs minutes even for small models, so
    # the parent asks for it in the first repetition only.
    t0 = time.perf_counter()
    model.quantize(input=str(train_file), qnorm=True, retrain=True, cutoff=100000)
    quantize_s = time.perf_counter() - t0
    ftz_path = work / "model.ftz"
    model.save_model(str(ftz_path))
    ftz_pred = predict_all(model)
    notes.update(ftz_bytes=file_bytes(ftz_path), quantize_s=quantize_s,
                 ftz_accuracy=accuracy(yte, ftz_pred), ftz_macro_f1=macro_f1(yte, ftz_pred))
    return dict(train_s=train_s, predict_s=predict_s, latency_us=lat,
                model_bytes=file_bytes(bin_path), pred=pred, notes=notes)


def work_vw(method, train, test, work, calls, quantize):
    import vowpalwabbit

    (xtr, ytr), (xte, _) = train, test
    labels = sorted(set(ytr))
    index = {lab: i + 1 for i, lab in enumerate(labels)}
    model_path = work / "model.vw"
    cache_path = work / "train.cache"
    args = (f"--oaa {len(labels)} --ngram 2 -b 24 --passes 5 -c -k "
            f"--loss_function logistic --quiet")

    t0 = time.perf_counter()
    train_file = work / "train.vw"
    with open(train_file, "w", encoding="utf-8") as f:
        for text, label in zip(*shuffled(xtr, ytr)):
            f.write(f"{index[label]} | {vw_features(text)}\n")
    ws = vowpalwabbit.Workspace(f"{args} -d {train_file} --cache_file {cache_path} "
                                f"-f {model_path}")
    ws.finish()
    train_s = time.perf_counter() - t0

    model = vowpalwabbit.Workspace(f"-i {model_path} -t --quiet")

    def predict_all():
        return [labels[model.predict("| " + vw_features(t)) - 1] for t in xte]

    predict_s, pred = time_best(predict_all, PASSES)
    lat = median_latency_us(lambda t: model.predict("| " + vw_features(t)),
                            latency_text(xte), calls)
    model.finish()
    return dict(train_s=train_s, predict_s=predict_s, latency_us=lat,
                model_bytes=file_bytes(model_path), pred=pred,
                notes={"args": args.replace(" --quiet", "")})


def worker(method: str, dataset: str, data_dir: Path, result: Path, calls: int,
           quantize: bool) -> None:
    train = load_split(data_dir, dataset, "train")
    test = load_split(data_dir, dataset, "test")
    if method == "baseline":        # interpreter + data only, for RSS reference
        out = {}
    else:
        fn = (work_sklearn if method.startswith("sklearn") else
              work_fasttext if method.startswith("fasttext") else work_vw)
        with tempfile.TemporaryDirectory(prefix="compare-") as work:
            out = fn(method, train, test, Path(work), calls, quantize)
        out["notes"]["latency_calls"] = LAST_LATENCY_CALLS
    result.write_text(json.dumps(out), encoding="utf-8")


# ----------------------------------------------------------------- parent --

def wait_child(cmd: list[str], what: str, timeout: float,
               env: dict | None = None) -> tuple[float, float, float]:
    """Run cmd to completion; return (wall seconds, its peak RSS in MiB, its
    CPU seconds, user + system)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, env=env)
    deadline = t0 + timeout
    while True:
        pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            proc.kill()
            os.wait4(proc.pid, 0)
            raise RuntimeError(f"{what}: timed out after {timeout:.0f} s")
        time.sleep(0.02)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise RuntimeError(f"{what}: child exited with {code}")
    return time.monotonic() - t0, rusage.ru_maxrss / 1024.0, rusage.ru_utime + rusage.ru_stime


def run_child(method: str, dataset: str, data_dir: Path, calls: int, timeout: float,
              quantize: bool = False, mlkit: dict | None = None,
              check_cli: bool = False, passes: int | None = None) -> tuple[dict, float, tuple[float, float]]:
    """Run one repetition in a fresh process; return (its result, peak RSS MB,
    (the child's wall seconds, its CPU seconds)).  `passes` defaults to PASSES."""
    passes = passes or PASSES
    what = f"{method} on {dataset}"
    with tempfile.TemporaryDirectory(prefix="compare-") as work:
        result = Path(work) / "result.json"
        if is_mlkit(method):
            model = Path(work) / "model.mlkit"
            cmd = [mlkit["probe"], "compare",
                   str(data_dir / f"{dataset}.train.json"), str(data_dir / f"{dataset}.test.json"),
                   "--algorithm", method[len("mlkit-"):], "--model", str(model),
                   "--result", str(result), "--latency-calls", str(calls),
                   "--predict-passes", str(passes)]
            wall, rss, cpu = wait_child(cmd, what, timeout)
        else:
            cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", method, dataset,
                   "--predict-passes", str(passes),
                   "--data-dir", str(data_dir), "--result", str(result),
                   "--latency-calls", str(calls)] + (["--quantize"] if quantize else [])
            wall, rss, cpu = wait_child(cmd, what, timeout, env=dict(os.environ, PYTHONHASHSEED="0"))
        out = json.loads(result.read_text(encoding="utf-8"))
        if check_cli and is_mlkit(method) and mlkit.get("cli"):
            # The same model file through the command users run.
            proc = subprocess.run([mlkit["cli"], "evaluate", str(model),
                                   str(data_dir / f"{dataset}.test.json"), "--json"],
                                  capture_output=True, text=True, timeout=timeout)
            if proc.returncode != 0:
                raise RuntimeError(f"{what}: mlkit evaluate exited with {proc.returncode}: "
                                   f"{proc.stderr.strip()}")
            metrics = json.loads(proc.stdout)
            out["notes"]["cli_evaluate_accuracy"] = round(metrics["accuracy"], 5)
            out["notes"]["cli_evaluate_macro_f1"] = round(metrics["macroF1"], 5)
    return out, rss, (wall, cpu)


def is_mlkit(method: str) -> bool:
    return method.startswith("mlkit")


def mlkit_version(mlkit: dict | None) -> dict | None:
    """The commit of the working tree the probe was built from, and the Swift compiler."""
    if not mlkit:
        return None

    def first_line(cmd: list[str]) -> str:
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=60)
            return out.stdout.strip().splitlines()[0] if out.returncode == 0 else "?"
        except (OSError, IndexError, subprocess.TimeoutExpired):
            return "?"
    return {"commit": first_line(["git", "describe", "--always", "--dirty", "--abbrev=10"]),
            "swift": first_line(["swift", "--version"])}


def mlkit_methods(probe: str) -> dict[str, str]:
    """mlkit's methods, as the probe lists them: the default, then each algorithm."""
    names = subprocess.run([probe, "compare", "--algorithms"], check=True,
                           capture_output=True, text=True).stdout.split()
    return {f"mlkit-{n}": ("TextClassifier(trainingData:) with default parameters, as "
                           "`mlkit train DATA` with no flags" if n == "default" else
                           f"TextClassifierParameters(algorithm: {n}), as "
                           f"`mlkit train DATA --algorithm {n}`") for n in names}


def package_versions() -> dict:
    from importlib import metadata
    out = {}
    for name in ("fasttext-wheel", "fasttext", "scikit-learn", "vowpalwabbit", "numpy",
                 "scipy", "matplotlib"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return out


def machine() -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gib = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_gib = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    os_name = platform.platform()
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                os_name = line.split("=", 1)[1].strip('"') + f" (Linux {platform.release()})"
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "cores_available": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "memory_gib": mem_gib,
        "os": os_name,
        "python": platform.python_version(),
        "packages": package_versions(),
        "load_avg_start": [round(x, 2) for x in os.getloadavg()],
    }


def resolve(path: str, base: Path) -> Path:
    p = Path(path)
    return p if p.is_absolute() else base / p


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", help=f"default: {' '.join(ALL_DATASETS)} "
                    f"(with --quick: {' '.join(QUICK_DATASETS)})")
    ap.add_argument("--methods", nargs="+",
                    help=f"default: all; peers: {' '.join(METHODS)}; mlkit: mlkit-default and "
                    "mlkit-<algorithm> as `MLKitProbe compare --algorithms` lists them")
    ap.add_argument("--out", help="result JSON (relative to Benchmarks/compare/); "
                    "default results/compare-<UTC time>.json")
    ap.add_argument("--data-dir", default="datasets/out",
                    help="folder with NAME.train.json / NAME.test.json (relative to the repo root)")
    ap.add_argument("--mlkit-probe", help="release MLKitProbe binary (swift build -c release "
                    "--package-path Benchmarks --product MLKitProbe): runs the mlkit methods "
                    "(without it, only the peers run)")
    ap.add_argument("--mlkit-cli", help="release mlkit binary: `mlkit evaluate` checks the "
                    "first repetition's model file")
    ap.add_argument("--setup-seconds", type=float,
                    help="seconds run.sh spent before (venv, datasets, release build), recorded")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: vader-sentiment only, 1 repetition, 1 prediction "
                    "pass, 200 latency calls")
    ap.add_argument("--reps", type=int, help="most repetitions per method (default 3, quick 1)")
    ap.add_argument("--repeat-below", type=float, default=10.0,
                    help="repeat a method only while its last child took less than this many "
                    "seconds (default 10)")
    ap.add_argument("--latency-calls", type=int, help="default 1000 (quick 200)")
    ap.add_argument("--predict-passes", type=int,
                    help="timed passes over the test set per child (default 3, quick 1)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per child (default 900)")
    ap.add_argument("--ftz", action="store_true",
                    help="also quantize fastText models (.ftz) in the first repetition; "
                    "minutes per dataset, so off by default")
    ap.add_argument("--quantize", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--worker", nargs=2, metavar=("METHOD", "DATASET"), help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    args = ap.parse_args()

    data_dir = resolve(args.data_dir, REPO)
    calls = args.latency_calls or (200 if args.quick else 1000)
    global PASSES
    PASSES = args.predict_passes or (1 if args.quick else 3)
    if args.worker:
        worker(args.worker[0], args.worker[1], data_dir, Path(args.result), calls,
               args.quantize)
        return

    mlkit = None
    available = dict(METHODS)
    if args.mlkit_probe:
        mlkit = {"probe": str(Path(args.mlkit_probe).resolve()),
                 "cli": str(Path(args.mlkit_cli).resolve()) if args.mlkit_cli else None}
        available.update(mlkit_methods(mlkit["probe"]))
    unknown = [m for m in args.methods or [] if m not in available]
    if unknown:
        sys.exit(f"unknown methods {' '.join(unknown)}; available: {' '.join(available)}"
                 + ("" if mlkit else " (mlkit methods need --mlkit-probe)"))
    datasets = args.datasets or (QUICK_DATASETS if args.quick else ALL_DATASETS)
    methods = args.methods or list(available)
    reps = args.reps or (1 if args.quick else 3)
    ftz = args.ftz
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = resolve(args.out or f"results/compare-{stamp}.json", HERE)
    for ds in datasets:
        for part in ("train", "test"):
            if not (data_dir / f"{ds}.{part}.json").exists():
                sys.exit(f"missing {data_dir / f'{ds}.{part}.json'}: run bash datasets/build_all.sh")

    doc = {"kind": "mlkit-compare", "version": 1, "created_utc": stamp,
           "quick": args.quick, "reps": reps, "repeat_below_s": args.repeat_below,
           "latency_calls": calls, "predict_passes": PASSES,
           "setup_s": args.setup_seconds, "mlkit": mlkit_version(mlkit),
           "machine": machine(), "methods": {m: available[m] for m in methods},
           "baselines": {}, "rows": []}
    started = time.monotonic()

    def save():
        doc["machine"]["load_avg_end"] = [round(x, 2) for x in os.getloadavg()]
        doc["wall_s"] = round(time.monotonic() - started, 1)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(out.suffix + ".tmp")
        tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, out)

    print(f"compare: {len(datasets)} datasets x {len(methods)} methods x up to {reps} reps "
          f"(repeated while a child takes < {args.repeat_below:g} s) -> {out}", flush=True)
    for ds in datasets:
        _, yte = load_split(data_dir, ds, "test")
        xtr, _ = load_split(data_dir, ds, "train")
        _, base_rss, _ = run_child("baseline", ds, data_dir, calls, args.timeout)
        doc["baselines"][ds] = {"peak_rss_mb": round(base_rss, 1), "n_train": len(xtr),
                                "n_test": len(yte), "n_labels": len(set(yte))}
        # peers first, then mlkit, each group in the order given
        for method in sorted(methods, key=is_mlkit):
            load = [round(x, 2) for x in os.getloadavg()]
            t0 = time.monotonic()
            results, rsss, walls = [], [], []
            try:
                for rep in range(reps):
                    if rep and walls[-1][0] >= args.repeat_below:
                        break
                    # Later repetitions re-measure training: one prediction pass, few
                    # latency calls (the first repetition's latency is the one reported).
                    res, rss, wall = run_child(method, ds, data_dir,
                                               calls if rep == 0 else min(calls, LATENCY_MIN_CALLS),
                                               args.timeout, quantize=(rep == 0 and ftz), mlkit=mlkit,
                                               check_cli=(rep == 0), passes=(None if rep == 0 else 1))
                    results.append(res)
                    rsss.append(rss)
                    walls.append(wall)
            except RuntimeError as e:
                print(f"  {ds:18} {method:22} FAILED: {e}", flush=True)
                doc["rows"].append({"dataset": ds, "method": method, "error": str(e),
                                    "load_avg": load})
                save()
                continue
            quantized = [("ftz_bytes" in r.get("notes", {})) for r in results]
            rss_plain = [m for m, q in zip(rsss, quantized) if not q] or rsss
            if any(quantized):
                results[0]["notes"]["ftz_peak_rss_mb"] = round(rsss[quantized.index(True)], 1)
            accs = [accuracy(yte, r["pred"]) for r in results]
            f1s = [macro_f1(yte, r["pred"]) for r in results]
            row = {
                "dataset": ds, "method": method,
                "accuracy": round(accs[0], 5), "macro_f1": round(f1s[0], 5),
                "train_s": round(min(r["train_s"] for r in results), 4),
                "predict_docs_per_s": round(len(yte) / min(r["predict_s"] for r in results), 1),
                "latency_us": round(results[0]["latency_us"], 2),
                # the repetition that also quantized (fastText, rep 1) is left
                # out of peak RSS when there are others: its peak is the
                # quantizer's, reported in notes.ftz_peak_rss_mb
                "peak_rss_mb": round(max(rss_plain), 1),
                "model_bytes": results[0]["model_bytes"],
                "load_avg": load,
                "wall_s": round(time.monotonic() - t0, 1),
                "reps": [{"accuracy": round(a, 5), "macro_f1": round(f, 5),
                          "train_s": round(r["train_s"], 4),
                          "predict_s": round(r["predict_s"], 5),
                          "latency_us": round(r["latency_us"], 2),
                          "peak_rss_mb": round(m, 1), "child_s": round(w[0], 1),
                          "child_cpu_s": round(w[1], 1)}
                         for a, f, r, m, w in zip(accs, f1s, results, rsss, walls)],
                "notes": results[0].get("notes", {}),
            }
            doc["rows"].append(row)
            save()
            print(f"  {ds:18} {method:22} acc {row['accuracy']:.4f} F1 {row['macro_f1']:.4f} "
                  f"train {row['train_s']:8.2f}s {row['predict_docs_per_s']:10.0f} docs/s "
                  f"{row['latency_us']:8.1f}us {row['peak_rss_mb']:7.1f}MB "
                  f"{row['model_bytes']:>11,}B  load {load[0]:.2f} "
                  f"({len(results)} reps, {row['wall_s']:.0f}s)", flush=True)
    save()
    print(f"compare: done in {doc['wall_s']:.0f} s, wrote {out}")


if __name__ == "__main__":
    main()

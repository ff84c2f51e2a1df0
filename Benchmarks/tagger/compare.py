#!/usr/bin/env python3
"""mlkit's word tagger against its peers on the People's Daily sets
(datasets/build_peoples_daily.py): token accuracy, entity F1, word F1,
training time, peak memory and tokens/s, each method in a child process of
its own.

    .venv-tagger/bin/python Benchmarks/tagger/compare.py [--datasets pku-entities ...]
        [--methods crfsuite mlkit-default ...] [--limit TRAIN TEST] [--out results/tagger-TIME.json]

--limit keeps the first TRAIN training and TEST test sentences of each set (the
splits are already seeded and shuffled), written beside the results, for a run
that fits in minutes rather than hours.

The peers (Benchmarks/tagger/requirements.txt, in the git-ignored .venv-tagger):

    crfsuite         python-crfsuite: a first-order CRF trained with L-BFGS and its
                     defaults (c1 = 0, c2 = 1, stopping when the objective moves by less
                     than 1e-5 over 10 iterations), on mlkit's features (features.py)
    nltk-perceptron  NLTK's averaged perceptron tagger, trained on the same sentences
                     with its own features and defaults (5 iterations)
    jieba            jieba's default segmenter (dictionary and HMM), segmentation only
    icu              ICU's dictionary word break, as `mlkit tokenize --tokenizer icu
                     --locale zh` finds words; segmentation only

and mlkit through `MLKitProbe tagger` (Benchmarks/Sources/MLKitProbe/TaggerComparison.swift):
mlkit-default (`auto`, what `mlkit train` does with no flags), mlkit-crf and
mlkit-perceptron.

Each method runs in a child (`compare.py --worker ...`) that reads the splits
(not timed), trains from the sentences in memory, and tags the test set with
the whole pipeline from the tokens in memory: features and decoding (for the
peers, their Python feature function and their tagger). The parent takes the
child's peak RSS and CPU time from os.wait4, and scores its labels. Methods
run one at a time, dataset by dataset, the peers just before mlkit.

Scores: token accuracy; entity F1 (pku-entities: a run of tokens with one
label other than NONE is an entity, which counts when predicted with the same
span and label); word F1 (pku-segmentation: words are spans of characters,
from B/M/E/S labels or from a segmenter's words, and words made only of
punctuation or symbols are left out on both sides, since ICU's word break
returns none).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DATA = REPO / "datasets" / "out"
DATASETS = ["pku-entities", "pku-segmentation", "pku-pos"]
TAGGING = ["crfsuite", "nltk-perceptron", "mlkit-default", "mlkit-crf", "mlkit-perceptron"]
SEGMENTERS = ["jieba", "icu"]


def read(name: str, part: str) -> list[dict]:
    with open(DATA / f"{name}.{part}.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


# MARK: - Workers (child processes)

def work_crfsuite(train: list[dict], test: list[dict], out: Path) -> dict:
    sys.path.insert(0, str(HERE))
    import pycrfsuite
    from features import sentence_keys
    start = time.perf_counter()
    trainer = pycrfsuite.Trainer(verbose=False)
    for row in train:
        trainer.append(sentence_keys(row["tokens"]), row["labels"])
    trainer.set_params({"c1": 0.0, "c2": 1.0})
    model = str(out.with_suffix(".crfsuite"))
    trainer.train(model)
    train_s = time.perf_counter() - start
    iterations = trainer.logparser.last_iteration["num"] if trainer.logparser.last_iteration else None
    tagger = pycrfsuite.Tagger()
    tagger.open(model)
    start = time.perf_counter()
    predictions = [tagger.tag(sentence_keys(row["tokens"])) for row in test]
    predict_s = time.perf_counter() - start
    return {"train_s": train_s, "predict_s": predict_s, "pred": predictions, "model_bytes": os.path.getsize(model),
            "notes": {"iterations": iterations}}


def work_nltk(train: list[dict], test: list[dict], out: Path) -> dict:
    from nltk.tag.perceptron import PerceptronTagger
    start = time.perf_counter()
    tagger = PerceptronTagger(load=False)
    tagger.train([list(zip(row["tokens"], row["labels"])) for row in train], nr_iter=5)
    train_s = time.perf_counter() - start
    start = time.perf_counter()
    predictions = [[tag for _, tag in tagger.tag(row["tokens"])] for row in test]
    predict_s = time.perf_counter() - start
    return {"train_s": train_s, "predict_s": predict_s, "pred": predictions, "notes": {"iterations": 5}}


def work_jieba(train: list[dict], test: list[dict], out: Path) -> dict:
    import jieba
    jieba.setLogLevel(60)
    start = time.perf_counter()
    jieba.initialize()
    train_s = time.perf_counter() - start
    texts = ["".join(row["tokens"]) for row in test]
    start = time.perf_counter()
    words = [list(jieba.cut(text)) for text in texts]
    predict_s = time.perf_counter() - start
    return {"train_s": train_s, "predict_s": predict_s, "words": words, "notes": {"training": "none: its dictionary"}}


def work_icu(train: list[dict], test: list[dict], out: Path, cli: str) -> dict:
    texts = ["".join(row["tokens"]) for row in test]
    start = time.perf_counter()
    result = subprocess.run([cli, "tokenize", "--tokenizer", "icu", "--locale", "zh", "--keep-case", "--json"],
                            input="\n".join(texts).encode("utf-8"), capture_output=True, check=True)
    predict_s = time.perf_counter() - start
    # One token a line with UTF-8 byte offsets into the joined input: split them back by line.
    joined = "\n".join(texts).encode("utf-8")
    line_starts = [0]
    for text in texts:
        line_starts.append(line_starts[-1] + len(text.encode("utf-8")) + 1)
    words: list[list[str]] = [[] for _ in texts]
    line = 0
    for raw in result.stdout.decode("utf-8").splitlines():
        token = json.loads(raw)
        while token["start"] >= line_starts[line + 1]:
            line += 1
        words[line].append(joined[token["start"]:token["end"]].decode("utf-8"))
    return {"train_s": 0.0, "predict_s": predict_s, "words": words, "notes": {"training": "none: ICU's dictionary"}}


def work_mlkit(method: str, name: str, out: Path, probe: str) -> dict:
    algorithm = {"mlkit-default": "default", "mlkit-crf": "crf", "mlkit-perceptron": "perceptron"}[method]
    result_path = out.with_suffix(".mlkit.json")
    subprocess.run([probe, "tagger", str(DATA / f"{name}.train.jsonl"), str(DATA / f"{name}.test.jsonl"),
                    "--algorithm", algorithm, "--model", str(out.with_suffix(".mlkit")), "--result", str(result_path)],
                   check=True)
    result = json.loads(result_path.read_text())
    result["model_bytes"] = result.get("model_bytes")
    return result


def worker(method: str, name: str, out: Path, probe: str, cli: str) -> None:
    if method.startswith("mlkit-"):
        result = work_mlkit(method, name, out, probe)
    else:
        train, test = read(name, "train"), read(name, "test")
        if method == "crfsuite":
            result = work_crfsuite(train, test, out)
        elif method == "nltk-perceptron":
            result = work_nltk(train, test, out)
        elif method == "jieba":
            result = work_jieba(train, test, out)
        elif method == "icu":
            result = work_icu(train, test, out, cli)
        else:
            raise SystemExit(f"unknown method {method}")
    out.write_text(json.dumps(result, ensure_ascii=False))


# MARK: - Scoring

def spans(labels: list[str], outside=("NONE", "O")) -> set[tuple[int, int, str]]:
    """Runs of one label other than NONE or O, as mlkit's TaggingMetrics reads plain labels."""
    found, start = set(), None
    for t, label in enumerate(labels + ["NONE"]):
        if start is not None and (label != labels[start] or t == len(labels)):
            found.add((start, t, labels[start]))
            start = None
        if start is None and t < len(labels) and label not in outside:
            start = t
    return found


def words_from_tags(chars: list[str], tags: list[str]) -> list[str]:
    words, word = [], ""
    for t, (char, tag) in enumerate(zip(chars, tags)):
        if word and (tag in ("B", "S") or (t > 0 and tags[t - 1] in ("E", "S"))):
            words.append(word)
            word = ""
        word += char
    if word:
        words.append(word)
    return words


def punctuation(word: str) -> bool:
    return all(unicodedata.category(c)[0] in "PSZ" for c in word)


def word_spans(words: list[str], text: str) -> set[tuple[int, int]]:
    """Character spans of the words in `text`, found in order, leaving out words of punctuation
    alone (a segmenter that skips punctuation, as ICU's word break does, gives the same spans)."""
    found, position = set(), 0
    for word in words:
        word = "".join(word.split())
        if not word:
            continue
        start = text.find(word, position)
        if start < 0:
            continue
        position = start + len(word)
        if not punctuation(word):
            found.add((start, position))
    return found


def f1(correct: int, predicted: int, actual: int) -> dict:
    p = correct / predicted if predicted else 0.0
    r = correct / actual if actual else 0.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0}


def score(name: str, test: list[dict], result: dict) -> dict:
    scores: dict = {}
    tokens = sum(len(row["tokens"]) for row in test)
    if "pred" in result:
        correct = sum(a == b for row, p in zip(test, result["pred"]) for a, b in zip(row["labels"], p))
        scores["token_accuracy"] = correct / tokens
        if name == "pku-entities":
            c = p = a = 0
            for row, pred in zip(test, result["pred"]):
                gold, guess = spans(row["labels"]), spans(list(pred))
                c, p, a = c + len(gold & guess), p + len(guess), a + len(gold)
            scores["entity"] = f1(c, p, a)
    if name == "pku-segmentation":
        c = p = a = 0
        for i, row in enumerate(test):
            text = "".join(row["tokens"])
            gold = word_spans(words_from_tags(row["tokens"], row["labels"]), text)
            words = result["words"][i] if "words" in result else words_from_tags(row["tokens"], result["pred"][i])
            guess = word_spans(words, text)
            c, p, a = c + len(gold & guess), p + len(guess), a + len(gold)
        scores["word"] = f1(c, p, a)
    scores["tokens_per_s"] = tokens / result["predict_s"] if result.get("predict_s") else None
    if result.get("predict_1thread_s"):
        scores["tokens_per_s_1thread"] = tokens / result["predict_1thread_s"]
    if result.get("text_predict_s"):
        scores["tokens_per_s_from_text"] = tokens / result["text_predict_s"]
    return scores


# MARK: - Parent

def run_one(method: str, name: str, folder: Path, probe: str, cli: str) -> dict:
    out = folder / f"{name}.{method}.json"
    command = [sys.executable, str(Path(__file__)), "--worker", method, name, str(out), "--probe", probe, "--cli", cli,
               "--data", str(DATA)]
    start = time.perf_counter()
    process = subprocess.Popen(command)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        return {"method": method, "dataset": name, "error": f"exit status {status}"}
    result = json.loads(out.read_text())
    test = read(name, "test")
    row = {"method": method, "dataset": name, "wall_s": wall, "train_s": result["train_s"],
           "predict_s": result.get("predict_s"), "cpu_s": usage.ru_utime + usage.ru_stime,
           "peak_rss_mb": usage.ru_maxrss / 1024, "model_bytes": result.get("model_bytes"),
           "notes": result.get("notes", {}), "load": os.getloadavg()}
    row.update(score(name, test, result))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worker", nargs=3, metavar=("METHOD", "DATASET", "OUT"))
    parser.add_argument("--datasets", nargs="+", default=DATASETS)
    parser.add_argument("--methods", nargs="+")
    parser.add_argument("--probe", default=str(REPO / "Benchmarks/.build/release/MLKitProbe"))
    parser.add_argument("--cli", default=str(REPO / ".build/release/mlkit"))
    parser.add_argument("--out")
    parser.add_argument("--data", help="the folder of the datasets (default datasets/out)")
    parser.add_argument("--limit", nargs=2, type=int, metavar=("TRAIN", "TEST"),
                        help="keep the first TRAIN training and TEST test sentences of each set")
    args = parser.parse_args()
    global DATA
    if args.data:
        DATA = Path(args.data).resolve()
    if args.worker:
        method, name, out = args.worker
        worker(method, name, Path(out), args.probe, args.cli)
        return
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    scratch = results / f"work-{stamp}"
    scratch.mkdir()
    out = Path(args.out) if args.out else results / f"tagger-{stamp}.json"
    if args.limit:
        subset = scratch / "data"
        subset.mkdir()
        for name in args.datasets:
            for part, count in zip(("train", "test"), args.limit):
                with open(DATA / f"{name}.{part}.jsonl", encoding="utf-8") as source:
                    lines = [line for line in source if line.strip()][:count]
                (subset / f"{name}.{part}.jsonl").write_text("".join(lines), encoding="utf-8")
        DATA = subset
    rows = []
    for name in args.datasets:
        methods = args.methods or (TAGGING + (SEGMENTERS if name == "pku-segmentation" else []))
        if name != "pku-segmentation":
            methods = [m for m in methods if m not in SEGMENTERS]
        for method in methods:
            print(f"== {name} {method} (load {os.getloadavg()[0]:.1f})", flush=True)
            row = run_one(method, name, scratch, args.probe, args.cli)
            print(json.dumps({k: v for k, v in row.items() if k != "notes"}), flush=True)
            rows.append(row)
            out.write_text(json.dumps({"machine": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                                       "date": stamp, "limit": args.limit, "rows": rows}, indent=1, ensure_ascii=False))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

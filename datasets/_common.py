"""Shared helpers for the dataset builders (standard library only).

Every dataset is a JSON array of {"text": ..., "label": ...} objects (the
format Create ML reads).  Each builder writes three files into datasets/out/:

    <name>.json        all examples
    <name>.train.json  80 % (stratified by label, seed 42)
    <name>.test.json   20 %
"""

from __future__ import annotations

import json
import os
import random
import tempfile
from collections import Counter
from pathlib import Path

DATASETS_DIR = Path(__file__).resolve().parent
OUT_DIR = DATASETS_DIR / "out"
CACHE_DIR = DATASETS_DIR / "cache"

SEED = 42
TEST_FRACTION = 0.2
# The labels that balance_labels names when it drops more.
SHOWN_LABELS = 20


def write_json_atomic(path: Path, records: list[dict]) -> None:
    """Write `records` as a UTF-8 JSON array, one object per line.

    The data go to a temporary file in the same folder first and are then
    moved over `path` with os.replace, so a reader never sees half a file.
    The output depends only on `records`, so re-running is byte-identical.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"text": r["text"], "label": r["label"]}, ensure_ascii=False)
             for r in records]
    body = "[\n" + ",\n".join(lines) + "\n]\n" if lines else "[]\n"
    fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(body)
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


def stratified_split(records: list[dict], test_fraction: float = TEST_FRACTION,
                     seed: int = SEED) -> tuple[list[dict], list[dict]]:
    """Deterministic stratified train/test split.

    For each label (in sorted order) that label's indices are shuffled with a
    fresh random.Random(seed), and the first round(test_fraction * n) of them
    go to test.  A fresh generator per label means one label's split does not
    depend on which other labels exist.  Train and test keep the original
    order of `records`.
    """
    by_label: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        by_label.setdefault(r["label"], []).append(i)
    test_idx: set[int] = set()
    for label in sorted(by_label):
        idx = list(by_label[label])
        random.Random(seed).shuffle(idx)
        test_idx.update(idx[:round(test_fraction * len(idx))])
    train = [r for i, r in enumerate(records) if i not in test_idx]
    test = [r for i, r in enumerate(records) if i in test_idx]
    return train, test


def dedupe(records: list[dict]) -> tuple[list[dict], int, int]:
    """Remove exact duplicate texts.

    A text that occurs more than once with one label keeps its first
    occurrence; a text that occurs with different labels is dropped entirely
    (its label is ambiguous, and copies would leak between train and test).
    Returns (records, same-label copies removed, conflicting examples removed).
    """
    labels: dict[str, set[str]] = {}
    for r in records:
        labels.setdefault(r["text"], set()).add(r["label"])
    seen: set[str] = set()
    out = []
    same = conflict = 0
    for r in records:
        if len(labels[r["text"]]) > 1:
            conflict += 1
            continue
        if r["text"] in seen:
            same += 1
            continue
        seen.add(r["text"])
        out.append(r)
    return out, same, conflict


def balance_labels(records: list[dict], min_per_label: int, cap_per_label: int,
                   noun: str) -> list[dict]:
    """Drop the labels with fewer than `min_per_label` examples and cap the others.

    A label over the cap keeps `cap_per_label` examples chosen with
    random.Random(SEED).sample, in their order in `records`.  Prints what it
    drops (the first SHOWN_LABELS by name) and caps (`noun` names the
    examples: "descriptions", "glosses") and the text lengths; returns the records as {"text", "label"} only.
    """
    counts = Counter(r["label"] for r in records)
    small = sorted(label for label, n in counts.items() if n < min_per_label)
    shown = ", ".join(f"{label} ({counts[label]})" for label in small[:SHOWN_LABELS])
    more = len(small) - SHOWN_LABELS
    if more > 0:
        shown += f" and {more} more labels ({sum(counts[label] for label in small)} {noun} in all)"
    print(f"left out (< {min_per_label} {noun}): " + shown)
    records = [r for r in records if r["label"] not in small]

    keep: set[int] = set()
    by_label: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        by_label.setdefault(r["label"], []).append(i)
    for label in sorted(by_label):
        idx = by_label[label]
        if len(idx) > cap_per_label:
            print(f"{label}: {len(idx)} usable, keeping {cap_per_label}")
            idx = random.Random(SEED).sample(idx, cap_per_label)
        keep.update(idx)
    records = [{"text": r["text"], "label": r["label"]}
               for i, r in enumerate(records) if i in keep]
    lengths = sorted(len(r["text"]) for r in records)
    print(f"text length in characters: median {lengths[len(lengths) // 2]}, "
          f"mean {sum(lengths) / len(lengths):.0f}, max {lengths[-1]}")
    return records


def clean_and_write(name: str, records: list[dict], *, group: str, noun: str,
                    min_per_label: int, cap_per_label: int) -> None:
    """Remove duplicates, drop rare labels, cap the others, and write the dataset.

    The steps of the builders whose labels are many and uneven (debian-sections,
    wordnet-lexnames, wordnet-hypernyms): `dedupe`, then `balance_labels`, then `write_dataset`.
    `group` names a label in the duplicates line ("section": "same-section
    copies"), `noun` the examples ("descriptions").
    """
    records, same, conflict = dedupe(records)
    print(f"duplicates: {same} same-{group} copies removed, "
          f"{conflict} examples with conflicting {group}s removed")
    write_dataset(name, balance_labels(records, min_per_label, cap_per_label, noun))


def write_dataset(name: str, records: list[dict], out_dir: Path = OUT_DIR) -> dict:
    """Write <name>.json, <name>.train.json and <name>.test.json; print a summary."""
    train, test = stratified_split(records)
    out_dir = Path(out_dir)
    write_json_atomic(out_dir / f"{name}.json", records)
    write_json_atomic(out_dir / f"{name}.train.json", train)
    write_json_atomic(out_dir / f"{name}.test.json", test)

    total, tr, te = (Counter(r["label"] for r in rs) for rs in (records, train, test))
    width = max([len("label")] + [len(label) for label in total])
    print(f"\n{name}: {len(records)} examples, {len(total)} labels "
          f"(train {len(train)}, test {len(test)})")
    print(f"  {'label':<{width}}  {'total':>6}  {'train':>6}  {'test':>6}")
    for label in sorted(total):
        print(f"  {label:<{width}}  {total[label]:>6}  {tr[label]:>6}  {te[label]:>6}")
    try:
        shown = out_dir.relative_to(Path.cwd())
    except ValueError:
        shown = out_dir
    print(f"  wrote {shown}/{name}.json, {name}.train.json, {name}.test.json")
    return {"total": total, "train": len(train), "test": len(test)}

#!/usr/bin/env python3
"""Build `fortunes-topic`: English fortunes labelled with their category.

Source: Debian's packages `fortunes` and `fortunes-min` (installed with
apt-get when missing and running as root).  Every top-level category file
those two packages install in /usr/share/games/fortunes becomes a label
(the file name).  Not used: the offensive set (`fortunes-off`, anything
under an off/ folder), the .dat/.u8 companion files, sub-folders, and the
top-level links that other language packages (e.g. fortunes-it) add there.

Cleaning:
  * fortunes are separated by lines holding only "%"; each one has its
    mojibake repaired (a few UTF-8-decoded-twice quotes), every whitespace run
    (newlines and tabs included) collapsed to one space, and is stripped;
    empty ones are skipped;
  * exact duplicate texts: kept once if all copies share a category, dropped
    altogether if they appear in different categories;
  * categories with fewer than MIN_PER_LABEL fortunes are left out.

Run from the repo root:  python3 datasets/build_fortunes.py
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import dedupe, write_dataset  # noqa: E402
from _fortunes import (FORTUNE_DIR, decode_file, ensure_packages,  # noqa: E402
                       fix_mojibake, fortune_data_files,
                       has_c1_or_replacement, split_fortunes)

NAME = "fortunes-topic"
PACKAGES = ["fortunes", "fortunes-min"]
MIN_PER_LABEL = 50


def main() -> None:
    versions = ensure_packages(PACKAGES)
    for p, v in versions.items():
        print(f"using Debian package {p} {v}")

    records = []
    repaired = 0
    encodings = Counter()
    for pkg in PACKAGES:
        for path in fortune_data_files(pkg):
            if path.parent != FORTUNE_DIR:      # top-level category files only
                continue
            text, enc = decode_file(path, legacy=("cp1252", "latin-1"),
                                    check=lambda t: not has_c1_or_replacement(fix_mojibake(t)))
            encodings[enc] += 1
            fortunes, n = split_fortunes(text)
            repaired += n
            records += [{"text": t, "label": path.name} for t in fortunes]

    print(f"read {len(records)} fortunes from {sum(encodings.values())} files "
          f"(encodings: {dict(encodings)}); repaired mojibake in {repaired}")
    records, same, conflict = dedupe(records)
    print(f"duplicates: {same} same-category copies removed, "
          f"{conflict} examples with conflicting categories removed")

    counts = Counter(r["label"] for r in records)
    small = sorted(label for label, n in counts.items() if n < MIN_PER_LABEL)
    if small:
        print(f"left out (< {MIN_PER_LABEL} fortunes): " +
              ", ".join(f"{label} ({counts[label]})" for label in small))
    records = [r for r in records if r["label"] not in small]

    bad = [r for r in records if has_c1_or_replacement(r["text"])]
    if bad:
        sys.exit(f"{len(bad)} fortunes still hold control/replacement characters")
    write_dataset(NAME, records)


if __name__ == "__main__":
    main()

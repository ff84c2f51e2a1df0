#!/usr/bin/env python3
"""Build `debian-sections`: Debian package long descriptions labelled with
the package's archive section (libs, perl, games, science, ...).

Source: the package indices of the Debian release this machine's apt points
at (only index files whose Origin is "Debian", from the release's own suite,
e.g. `bookworm`: not -updates or -security, so the data change only with a
point release).  Two index files are joined:

  * `Packages` (component main, this machine's architecture): Package,
    Section and Description-md5 of every binary package;
  * `Translation-en`: the English long description of each (Package,
    Description-md5).

Debian images often switch Translation-en off (Acquire::Languages "none").
If it is missing, the builder runs `apt-get update -o Acquire::Languages=en`
when it is root, and otherwise prints that command and stops.

Text: the long description only (the lines after the one-line synopsis).
The " ." paragraph separators are dropped and every whitespace run becomes
one space, as in the other datasets.  Label: the Section field without a
`contrib/`, `non-free/` or `non-free-firmware/` prefix.

Cleaning, in this order:
  * packages with no long description, or one shorter than MIN_CHARS
    characters, are skipped;
  * exact duplicate texts: kept once if all copies share a section, dropped
    altogether if they occur in different sections (`_common.dedupe`);
  * sections with fewer than MIN_PER_LABEL descriptions left are dropped;
  * each section is capped at CAP_PER_LABEL descriptions, chosen with
    random.Random(42).sample and kept in package-name order.

Run from the repo root:  python3 datasets/build_debian_sections.py
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import clean_and_write  # noqa: E402

NAME = "debian-sections"
MIN_CHARS = 40
MIN_PER_LABEL = 200
CAP_PER_LABEL = 2000
SECTION_PREFIXES = ("contrib/", "non-free/", "non-free-firmware/")
APT_HELPER = "/usr/lib/apt/apt-helper"
UPDATE_CMD = ["apt-get", "update", "-o", "Acquire::Languages=en"]
FIELDS = ("FILENAME", "IDENTIFIER", "ORIGIN", "CODENAME", "SUITE", "COMPONENT",
          "LANGUAGE", "ARCHITECTURE", "VERSION")


def index_targets() -> list[dict]:
    """apt's index files (with Translation-en enabled) as dicts of FIELDS."""
    fmt = "\t".join(f"$({f})" for f in FIELDS)
    out = subprocess.run(["apt-get", "indextargets", "-o", "Acquire::Languages=en",
                          "--format", fmt], check=True, capture_output=True,
                         text=True).stdout
    rows = []
    for line in out.splitlines():
        parts = line.split("\t")
        if len(parts) == len(FIELDS):
            rows.append(dict(zip(FIELDS, parts)))
    return rows


def find_indices() -> tuple[list[dict], list[dict]]:
    """The Packages and Translation-en indices of Debian's base suite, main."""
    rows = [r for r in index_targets()
            if r["ORIGIN"] == "Debian" and r["COMPONENT"] == "main"
            and "-" not in r["CODENAME"]]        # bookworm, not bookworm-updates
    packages = [r for r in rows if r["IDENTIFIER"] == "Packages"]
    translations = [r for r in rows if r["IDENTIFIER"] == "Translations"
                    and r["LANGUAGE"] == "en"]
    return packages, translations


def usable(found: tuple[list[dict], list[dict]]) -> bool:
    """Exactly one of each index, both present on disk."""
    packages, translations = found
    return (len(packages) == 1 and len(translations) == 1
            and all(os.path.exists(r["FILENAME"]) for r in packages + translations))


def ensure_indices() -> tuple[dict, dict]:
    # apt lists a Translation-en target only once it has fetched the file, so
    # a missing target and a missing file both mean: update with English on.
    found = find_indices()
    if not usable(found):
        if os.geteuid() != 0:
            sys.exit("the Debian package index or its Translation-en is missing; run:\n"
                     "    sudo " + " ".join(UPDATE_CMD))
        print("running: " + " ".join(UPDATE_CMD), flush=True)
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(UPDATE_CMD, env=env, check=True, stdout=subprocess.DEVNULL)
        found = find_indices()
    packages, translations = found
    if not usable(found):
        sys.exit("expected exactly one Debian base-suite main Packages and "
                 f"Translation-en index on disk, found {len(packages)} and "
                 f"{len(translations)} after apt-get update: is apt pointed at a Debian release?")
    return packages[0], translations[0]


def read_index(path: str) -> str:
    """An apt list file, decompressed (apt keeps them as .lz4/.gz/...)."""
    return subprocess.run([APT_HELPER, "cat-file", path], check=True,
                          capture_output=True).stdout.decode("utf-8")


def stanzas(text: str):
    """Parse deb822 text into dicts; continuation lines keep their leading space."""
    for block in text.split("\n\n"):
        fields: dict[str, str] = {}
        key = None
        for line in block.split("\n"):
            if not line:
                continue
            if line[0] in " \t" and key is not None:
                fields[key] += "\n" + line
            else:
                key, _, value = line.partition(":")
                fields[key] = value.strip()
        if fields:
            yield fields


def long_description(desc: str) -> str:
    """Debian Description-en field -> long part as one line of text."""
    lines = desc.split("\n")[1:]                 # drop the synopsis
    kept = [ln[1:] for ln in lines if ln.strip() != "."]
    return re.sub(r"\s+", " ", " ".join(kept)).strip()


def main() -> None:
    pkgs_idx, trans_idx = ensure_indices()
    print(f"using Debian {pkgs_idx['CODENAME']} ({pkgs_idx['VERSION']}) "
          f"main/{pkgs_idx['ARCHITECTURE']} Packages and Translation-en")

    descs: dict[tuple[str, str], str] = {}
    for st in stanzas(read_index(trans_idx["FILENAME"])):
        if "Description-en" in st:
            descs[(st["Package"], st.get("Description-md5", ""))] = st["Description-en"]

    records = []
    missing = short = 0
    for st in stanzas(read_index(pkgs_idx["FILENAME"])):
        section = st.get("Section", "")
        for prefix in SECTION_PREFIXES:
            if section.startswith(prefix):
                section = section[len(prefix):]
        desc = descs.get((st["Package"], st.get("Description-md5", "")))
        if desc is None:
            missing += 1
            continue
        text = long_description(desc)
        if len(text) < MIN_CHARS:
            short += 1
            continue
        records.append({"package": st["Package"], "text": text, "label": section})
    records.sort(key=lambda r: r["package"])
    print(f"read {len(records) + missing + short} packages: {missing} without a "
          f"Translation-en entry, {short} with a long description under "
          f"{MIN_CHARS} characters, {len(records)} kept")

    clean_and_write(NAME, records, group="section", noun="descriptions",
                    min_per_label=MIN_PER_LABEL, cap_per_label=CAP_PER_LABEL)


if __name__ == "__main__":
    main()

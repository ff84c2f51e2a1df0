#!/usr/bin/env python3
"""Build `fortunes-language`: language identification on Debian's fortunes.

Labels are ISO 639-1 codes; each comes from one Debian package, installed
with apt-get when missing and running as root:

    en  fortunes, fortunes-min     de  fortunes-de     es  fortunes-es
    it  fortunes-it                ru  fortunes-ru     pl  fortunes-pl
    cs  fortunes-cs (without its Slovak file klasik-sk)

Never used: anything under an off/ folder (fortunes-es ships its offensive
set there) and the `fortunes-off` package.

Decoding: each file is tried as strict UTF-8 first, then in its language's
legacy encodings (Latin-1/cp1252, KOI8-R/cp1251, ISO-8859-2/cp1250), and a
decoding is accepted only if it has no replacement or C1 control characters
and its letters are mostly of the right script (Cyrillic for ru, with more
lower- than upper-case letters so a KOI8-R/cp1251 mix-up is caught; Latin
otherwise).  A few UTF-8-decoded-twice characters (mojibake) are repaired.

Per fortune (after collapsing whitespace to single spaces):
  * shorter than MIN_CHARS characters: skipped;
  * fewer than half of the non-space characters are letters: skipped (ASCII
    art, IRC line noise);
  * wrong script (ru: under half of the letters Cyrillic; others: any
    Cyrillic letter or under half Latin): skipped;
  * for de/es/it/pl/cs, text that looks English (at least two hits from a
    short English stop-word list and more than from the language's own list):
    skipped - these packages carry some English quotes and IRC logs.
Exact duplicate texts are kept once; texts found under two languages are
dropped.  Then every language is capped at CAP examples, chosen with
random.Random(42) and kept in source order.

Run from the repo root:  python3 datasets/build_fortunes_lang.py
"""

from __future__ import annotations

import random
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import SEED, dedupe, write_dataset  # noqa: E402
from _fortunes import (FORTUNE_DIR, decode_file, ensure_packages, fix_mojibake,  # noqa: E402
                       fortune_data_files, has_c1_or_replacement, is_latin_letter,
                       script_share, split_fortunes)

NAME = "fortunes-language"
CAP = 3000
MIN_CHARS = 20

LANGUAGES = {  # label: (packages, legacy encodings to try after UTF-8)
    "en": (["fortunes", "fortunes-min"], ("cp1252", "latin-1")),
    "de": (["fortunes-de"], ("cp1252", "latin-1")),
    "es": (["fortunes-es"], ("cp1252", "latin-1")),
    "it": (["fortunes-it"], ("cp1252", "latin-1")),
    "ru": (["fortunes-ru"], ("koi8-r", "cp1251")),
    "pl": (["fortunes-pl"], ("iso-8859-2", "cp1250")),
    "cs": (["fortunes-cs"], ("iso-8859-2", "cp1250")),
}
EXCLUDED_FILES = {"klasik-sk"}  # Slovak, shipped in fortunes-cs

STOPWORDS = {
    # English words that are not also common words in de/es/it/pl/cs
    # (so no "in", "to", "on", "was", "die").
    "en": "the and of is you that it for are not with this have what your if but they",
    "de": "der die das und ist nicht ich ein eine zu den mit sich auf es dem wenn sie wir auch",
    "es": "el la los las de que y en un una es por no se con para del lo al como",
    "it": "il la di che e non un una per è sono del della si le lo gli con ma",
    "pl": "nie się i w na z to jest że do co jak a o tak ale po czy",
    "cs": "a je se na v to že s z do není jsem by jak ale o když už jsou",
}
STOPWORDS = {k: set(v.split()) for k, v in STOPWORDS.items()}
WORD = re.compile(r"\w+")


def cyrillic_share(text: str) -> float:
    return script_share(text, 0x0400, 0x04FF)


def latin_share(text: str) -> float:
    letters = [c for c in text if c.isalpha()]
    return sum(map(is_latin_letter, letters)) / len(letters) if letters else 0.0


def file_check(lang: str):
    """Does a decoded file look like the right script and no garbage?"""
    def check(text: str) -> bool:
        text = fix_mojibake(text)
        if has_c1_or_replacement(text):
            return False
        if lang == "ru":
            cyr = [c for c in text if "\u0400" <= c <= "\u04ff" and c.isalpha()]
            lower = sum(c.islower() for c in cyr)
            return cyrillic_share(text) > 0.5 and lower > len(cyr) / 2
        return latin_share(text) > 0.5
    return check


def rejection(lang: str, text: str) -> str | None:
    """Why a fortune is skipped, or None to keep it."""
    if len(text) < MIN_CHARS:
        return "short"
    chars = [c for c in text if not c.isspace()]
    if sum(c.isalpha() for c in chars) < len(chars) / 2:
        return "not-text"
    cyr = cyrillic_share(text)
    if lang == "ru":
        if cyr < 0.5:
            return "wrong-script"
        return None
    if cyr > 0 or latin_share(text) < 0.5:
        return "wrong-script"
    if lang != "en":
        words = WORD.findall(text.lower())
        en = sum(w in STOPWORDS["en"] for w in words)
        own = sum(w in STOPWORDS[lang] for w in words)
        if en >= 2 and en > own:
            return "looks-english"
    return None


def main() -> None:
    versions = ensure_packages([p for pkgs, _ in LANGUAGES.values() for p in pkgs])
    for p, v in versions.items():
        print(f"using Debian package {p} {v}")

    records = []
    for lang, (pkgs, legacy) in LANGUAGES.items():
        files = []
        for pkg in pkgs:
            files += [f for f in fortune_data_files(pkg) if f.name not in EXCLUDED_FILES]
        if lang == "en":  # top-level category files only, as in fortunes-topic
            files = [f for f in files if f.parent == FORTUNE_DIR]
        encodings = Counter()
        reasons = Counter()
        repaired = read = 0
        for path in sorted(set(files)):
            text, enc = decode_file(path, legacy, check=file_check(lang))
            encodings[enc] += 1
            fortunes, n = split_fortunes(text)
            repaired += n
            read += len(fortunes)
            for t in fortunes:
                why = rejection(lang, t)
                if why:
                    reasons[why] += 1
                else:
                    records.append({"text": t, "label": lang})
        print(f"{lang}: {len(files)} files {dict(encodings)}, {read} fortunes, "
              f"mojibake repaired in {repaired}, skipped {dict(sorted(reasons.items()))}")

    records, same, conflict = dedupe(records)
    print(f"duplicates: {same} same-language copies removed, "
          f"{conflict} examples found under two languages removed")

    by_lang: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        by_lang.setdefault(r["label"], []).append(i)
    keep: set[int] = set()
    for lang in sorted(by_lang):
        idx = by_lang[lang]
        print(f"{lang}: {len(idx)} usable, keeping {min(CAP, len(idx))}")
        keep.update(idx if len(idx) <= CAP else random.Random(SEED).sample(idx, CAP))
    records = [r for i, r in enumerate(records) if i in keep]
    write_dataset(NAME, records)


if __name__ == "__main__":
    main()

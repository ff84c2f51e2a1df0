"""Reading Princeton WordNet 3.0's data files, as Debian's `wordnet-base` installs them.

Each data file (`/usr/share/wordnet/data.{noun,verb,adj,adv}`) holds one synset per line
(wndb(5WN)): its offset, lexicographer file number, part of speech, word count (hex) and
words with their lex ids, pointer count and pointers (symbol, target offset, target part of
speech, source/target), then `| ` and the gloss.  Lines that start with two spaces are the
licence header.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from _fortunes import ensure_packages

PACKAGE = "wordnet-base"
DATA_DIR = Path("/usr/share/wordnet")


@dataclass(frozen=True)
class Synset:
    offset: int
    lexfile: int
    words: tuple[str, ...]
    # (symbol, target offset, target part of speech) of each pointer
    pointers: tuple[tuple[str, int, str], ...]
    # whitespace collapsed
    gloss: str


def ensure_wordnet() -> None:
    """Install `wordnet-base` if it is missing (`_fortunes.ensure_packages`);
    print its version."""
    print(f"using {PACKAGE} {ensure_packages([PACKAGE])[PACKAGE]}")


def synsets(pos: str):
    """Every synset of data.<pos> that has a gloss, in file order."""
    with open(DATA_DIR / f"data.{pos}", encoding="utf-8") as f:
        for line in f:
            if line.startswith("  "):
                continue
            head, sep, gloss = line.partition(" | ")
            if not sep:
                continue
            fields = head.split()
            count = int(fields[3], 16)
            words = tuple(fields[4:4 + 2 * count:2])
            at = 4 + 2 * count
            pointers = tuple((fields[at + 1 + 4 * i], int(fields[at + 2 + 4 * i]), fields[at + 3 + 4 * i])
                             for i in range(int(fields[at])))
            yield Synset(int(fields[0]), int(fields[1]), words, pointers, " ".join(gloss.split()))

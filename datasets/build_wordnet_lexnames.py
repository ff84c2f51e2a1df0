#!/usr/bin/env python3
"""Build `wordnet-lexnames`: WordNet 3.0 glosses labelled with the lexicographer
file of their synset (noun.animal, noun.artifact, verb.motion, adj.all, ...).

Source: Debian's package `wordnet-base` (Princeton WordNet 3.0, installed with
apt-get when missing and running as root).  Its four data files
(`/usr/share/wordnet/data.{noun,verb,adj,adv}`, read by `_wordnet.py`) hold
one synset per line: offset, lexicographer file number, part of speech,
words, pointers, then `| ` and the gloss (a definition, often followed by
quoted examples).  The file numbers are named in lexnames(5WN); the names are
listed below.

Text: the gloss, as written (definition and examples); the synset's own words
are left out, so the task is to tell a definition's semantic field.  Label:
the lexicographer file's name.  Order: by the synset's first word, then part
of speech and offset, as debian-sections is by package name.  The data files
group synsets by lexicographer file, and a file in that order would hand the
online learners (fastText, Vowpal Wabbit) one label after another.

Cleaning, in this order:
  * exact duplicate glosses: kept once if all copies share a file, dropped
    altogether if they occur in different files (`_common.dedupe`);
  * files with fewer than MIN_PER_LABEL glosses are dropped (noun.Tops,
    noun.motive, adj.ppl and verb.weather);
  * each file is capped at CAP_PER_LABEL glosses, chosen with
    random.Random(42).sample and kept in that order.

Run from the repo root:  python3 datasets/build_wordnet_lexnames.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import clean_and_write  # noqa: E402
from _wordnet import ensure_wordnet, synsets  # noqa: E402

NAME = "wordnet-lexnames"
PARTS_OF_SPEECH = ("noun", "verb", "adj", "adv")
MIN_PER_LABEL = 200
CAP_PER_LABEL = 1500

# lexnames(5WN): the lexicographer files, by number.
LEXNAMES = [
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal",
    "noun.artifact", "noun.attribute", "noun.body", "noun.cognition",
    "noun.communication", "noun.event", "noun.feeling", "noun.food", "noun.group",
    "noun.location", "noun.motive", "noun.object", "noun.person",
    "noun.phenomenon", "noun.plant", "noun.possession", "noun.process",
    "noun.quantity", "noun.relation", "noun.shape", "noun.state",
    "noun.substance", "noun.time", "verb.body", "verb.change", "verb.cognition",
    "verb.communication", "verb.competition", "verb.consumption", "verb.contact",
    "verb.creation", "verb.emotion", "verb.motion", "verb.perception",
    "verb.possession", "verb.social", "verb.stative", "verb.weather", "adj.ppl",
]


def main() -> None:
    ensure_wordnet()
    records = []
    for pos in PARTS_OF_SPEECH:
        for synset in synsets(pos):
            if synset.gloss:
                records.append({"key": (synset.words[0].lower(), pos, synset.offset), "text": synset.gloss,
                                "label": LEXNAMES[synset.lexfile]})
    records.sort(key=lambda r: r["key"])
    print(f"read {len(records)} glosses")

    clean_and_write(NAME, records, group="file", noun="glosses",
                    min_per_label=MIN_PER_LABEL, cap_per_label=CAP_PER_LABEL)


if __name__ == "__main__":
    main()

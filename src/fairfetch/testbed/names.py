"""Deterministic, pronounceable names for hosts, titles and people (no word lists to ship)."""

from __future__ import annotations

import hashlib
import random

__all__ = ["person", "rng", "sentence", "title", "word"]

_ONSETS = ("b", "br", "c", "ch", "d", "f", "g", "gr", "h", "j", "k", "l", "m", "n", "p", "qu",
           "r", "s", "sh", "st", "t", "tr", "v", "w", "z")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "io", "ou")
_CODAS = ("", "", "n", "r", "s", "l", "m", "x", "nd", "rt")
_TOPICS = ("Gardens", "Compilers", "Birds", "Bread", "Rivers", "Typography", "Chess", "Maps",
           "Engines", "Tea", "Weather", "Jazz", "Databases", "Bicycles", "Stars", "Pottery",
           "Fungi", "Trains", "Poetry", "Circuits", "Lighthouses", "Knots", "Bees", "Glass")
_KINDS = ("Notes", "Journal", "Letters", "Weekly", "Dispatch", "Digest", "Log", "Field Notes",
          "Almanac", "Review", "Diary", "Bulletin")


def rng(*parts: object) -> random.Random:
    """A PRNG seeded from the parts (stable across processes, unlike ``hash()``)."""
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big"))


_SYLLABLES = tuple(o + v + c for o in _ONSETS for v in _VOWELS for c in _CODAS)


def word(r: random.Random, syllables: int = 2) -> str:
    return "".join(r.choices(_SYLLABLES, k=syllables))


def sentence(r: random.Random, words: int) -> str:
    """``words`` words of one to three syllables (one PRNG draw per syllable, for speed)."""
    lengths = r.choices((1, 2, 3), k=words)
    sylls = r.choices(_SYLLABLES, k=sum(lengths))
    out, i = [], 0
    for n in lengths:
        out.append("".join(sylls[i : i + n]))
        i += n
    return " ".join(out)


def person(r: random.Random) -> str:
    return f"{word(r, 2).capitalize()} {word(r, r.randint(2, 3)).capitalize()}"


def title(r: random.Random) -> str:
    return f"{r.choice(_TOPICS)} {r.choice(_KINDS)}"

"""MinHash sketches of page text: near-duplicate detection without keeping the text.

A module of its own (no HTML parser imported) so the rules, which only compare sketches, start
without loading what the crawl needs to make them.
"""

from __future__ import annotations

import zlib

__all__ = ["SKETCH_SIZE", "SKETCH_VERSION", "sketch_similarity"]

SKETCH_SIZE = 32
#: Bumped whenever a sketch of the same text changes: sketches of two versions cannot be
#: compared, so a crawl file is never resumed across one (``meta.sketch_version``; files from
#: before the key existed hold version 1, word-CRC mixing).
SKETCH_VERSION = "2"


def _sketch(text: str) -> str:
    """Bottom-k MinHash sketch of word 3-shingles: a few hundred bytes per page that estimate
    Jaccard similarity between any two pages (near duplicates) without keeping their text.

    ``text``: the lower-cased words joined by single spaces. A shingle's hash is the CRC-32 of
    its three words as UTF-8 bytes joined by a space (stable across processes, unlike
    ``hash()``). Every step runs at C level (``map`` over ``zip``, no Python-level loop per
    shingle): 96 -> 65 µs for a 260-word page, a third of the cost of extracting it."""
    words = text.encode().split(b" ")
    if len(words) < 3:
        return ""
    shingles = map(b" ".join, zip(words, words[1:], words[2:], strict=False))
    smallest = _smallest(list(map(zlib.crc32, shingles)), SKETCH_SIZE)
    # One %-format for the whole list: a quarter of the cost of a format call per hash.
    return ("%x " * len(smallest) % tuple(smallest))[:-1]


def _smallest(hashes: list[int], k: int) -> list[int]:
    """The ``k`` smallest distinct values of ``hashes`` (32-bit values, repeats allowed),
    ascending.

    Sorting every hash was a quarter of a sketch's cost. CRC-32s spread evenly over 2**32, so
    about ``2k`` of them fall under ``2k * 2**32 / n``: only those are sorted (77 -> 65 µs a
    260-word page), and only those are de-duplicated (a set of every shingle's hash cost as
    much again). Repeats make ``n`` too big, so the cut too low: when fewer than ``k``
    distinct values fall under it, all are sorted: same result."""
    n = len(hashes)
    if n > 4 * k:
        cut = (2 * k << 32) // n
        below = sorted(set(filter(cut.__gt__, hashes)))
        if len(below) >= k:
            del below[k:]
            return below
    return sorted(set(hashes))[:k]


def sketch_similarity(a: str, b: str) -> float:
    """Estimated Jaccard similarity of two sketches (bottom-k of the union, shared fraction)."""
    if not a or not b:
        return 0.0
    sa = {int(x, 16) for x in a.split()}
    sb = {int(x, 16) for x in b.split()}
    union = sorted(sa | sb)[:SKETCH_SIZE]
    both = sum(1 for h in union if h in sa and h in sb)
    return both / len(union)

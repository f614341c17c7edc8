"""Category filters: which entries a subscription wants.

One function decides for real-time mails and digests alike — FeedMail shipped digests that ignored
the reader's filter because the digest path had its own copy of the check. There is one copy here.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

__all__ = ["CategoryFilter", "normalise_category", "parse_categories"]


def normalise_category(name: str) -> str:
    """Categories compare case-insensitively and ignore surrounding and repeated spaces, and
    one character is one character however it is composed (NFC: a Mac-made feed's "e" + U+0301
    is the "é" a reader types). Decomposed before folding (Unicode's canonical caseless
    match): folding turns an iota subscript into an iota, which landed before or after an
    accent depending on how the feed had composed the letter."""
    text = unicodedata.normalize("NFD", " ".join(name.split()))
    return unicodedata.normalize("NFC", text.casefold())


def parse_categories(text: str | Iterable[str] | None) -> list[str]:
    """``"News, Tech"`` or ``["News", " tech "]`` -> ``["news", "tech"]`` (order kept, no dupes)."""
    if text is None:
        return []
    parts = text.split(",") if isinstance(text, str) else list(text)
    out: list[str] = []
    for p in parts:
        n = normalise_category(p)
        if n and n not in out:
            out.append(n)
    return out


@dataclass(frozen=True)
class CategoryFilter:
    """``only``: keep entries in at least one of these; ``exclude``: drop entries in any of these.

    Both empty: keep everything. An entry without categories is kept by an ``exclude`` filter and
    dropped by an ``only`` filter (it is in none of the wanted categories).
    """

    only: Sequence[str] = field(default_factory=tuple)
    exclude: Sequence[str] = field(default_factory=tuple)

    @classmethod
    def of(cls, only: Iterable[str] | None, exclude: Iterable[str] | None) -> CategoryFilter:
        return cls(tuple(parse_categories(only)), tuple(parse_categories(exclude)))

    @property
    def active(self) -> bool:
        return bool(self.only or self.exclude)

    def accepts(self, categories: Iterable[str] | None) -> bool:
        have = {normalise_category(c) for c in (categories or ()) if c and c.strip()}
        wanted = {normalise_category(c) for c in self.only}
        unwanted = {normalise_category(c) for c in self.exclude}
        if wanted and not (have & wanted):
            return False
        return not (have & unwanted)

    def describe(self) -> str:
        parts = []
        if self.only:
            parts.append("only " + ", ".join(self.only))
        if self.exclude:
            parts.append("all but " + ", ".join(self.exclude))
        return "; ".join(parts) or "all categories"

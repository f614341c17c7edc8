"""Approximate rendered width of a snippet in a search result (Arial), in pixels.

Search engines cut titles and descriptions by pixel width, not by characters: "WWWW" is wider
than "iiii". The widths are Arial's advance widths (units per 1000 em) for ASCII; an accented
letter is as wide as its letter; East Asian wide and full-width characters (CJK, kana, hangul,
most emoji) are a full em, which is what keeps a 40-character Japanese title (800 px) from
passing both the character and the pixel rules; combining marks, variation selectors and
zero-width joiners add nothing, and an emoji joined to the previous one (ZWJ sequences, skin
tones) is the same glyph. Other characters count as a wide average.
"""

from __future__ import annotations

import unicodedata

__all__ = ["text_width_px"]

_NARROW = dict.fromkeys("ijl.,:;!|'", 278) | dict.fromkeys("ft[]()/\\-", 333)
_WIDE = dict.fromkeys("mw", 833) | dict.fromkeys("MW", 944) | {"@": 1015}
_CAPS = dict.fromkeys("ABCDEFGHIJKLNOPQRSTUVXYZ", 700)
_WIDTHS = {" ": 278, "r": 333, **_CAPS, **_NARROW, **_WIDE}
_DEFAULT = 556  # lower-case letters and digits in Arial


_NON_ASCII = 650
_EM = 1000
_ZWJ = "\u200d"
#: Every ASCII character's width, so the common case is one C-level map over the string.
_ASCII = {chr(i): _WIDTHS.get(chr(i), _DEFAULT) for i in range(128)}
#: Widths of the other characters met so far (a site uses a few hundred, a CJK one thousands).
_SEEN: dict[str, int] = {}


#: Spaces that are not ASCII: a no-break space (``&nbsp;``, kept as written in titles) is a
#: space's width, the en and em spaces half and a whole em, the thin ones a fifth.
_SPACES = {"\xa0": 278, "\u2002": 500, "\u2003": 1000, "\u2009": 200, "\u202f": 200}


def _width(ch: str) -> int:
    space = _SPACES.get(ch)
    if space is not None:
        return space
    if unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0  # combining accents, variation selectors, ZWJ, soft hyphen
    if "\U0001f3fb" <= ch <= "\U0001f3ff":
        return 0  # skin tone: part of the emoji before it
    if unicodedata.east_asian_width(ch) in ("W", "F"):
        return _EM
    base = unicodedata.normalize("NFD", ch)[0]
    return _ASCII.get(base, _NON_ASCII)


def text_width_px(text: str, font_px: float) -> int:
    """Width of ``text`` set in Arial at ``font_px`` (titles ~20 px, descriptions ~14 px)."""
    if text.isascii():
        units = sum(map(_ASCII.__getitem__, text))
    else:
        units = 0
        joined = False
        for ch in text:
            w = _ASCII.get(ch)
            if w is None:
                w = _SEEN.get(ch)
                if w is None:
                    w = _SEEN[ch] = _width(ch)
            if joined:
                w = 0  # the character after a ZWJ joins the glyph before it
            joined = ch == _ZWJ
            units += w
    return round(units * font_px / 1000)

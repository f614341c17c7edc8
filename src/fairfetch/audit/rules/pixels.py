"""Approximate rendered width of a snippet in a search result (Arial), in pixels.

Search engines cut titles and descriptions by pixel width, not by characters: "WWWW" is wider
than "iiii". The widths are Arial's advance widths (units per 1000 em) for ASCII; other
characters count as a wide average.
"""

from __future__ import annotations

__all__ = ["text_width_px"]

_NARROW = dict.fromkeys("ijl.,:;!|'", 278) | dict.fromkeys("ft[]()/\\-", 333)
_WIDE = dict.fromkeys("mw", 833) | dict.fromkeys("MW", 944) | {"@": 1015}
_CAPS = dict.fromkeys("ABCDEFGHIJKLNOPQRSTUVXYZ", 700)
_WIDTHS = {" ": 278, "r": 333, **_CAPS, **_NARROW, **_WIDE}
_DEFAULT = 556  # lower-case letters and digits in Arial


_NON_ASCII = 650
#: Every ASCII character's width, so the common case is one C-level map over the string.
_ASCII = {chr(i): _WIDTHS.get(chr(i), _DEFAULT) for i in range(128)}


def text_width_px(text: str, font_px: float) -> int:
    """Width of ``text`` set in Arial at ``font_px`` (titles ~20 px, descriptions ~14 px)."""
    if text.isascii():
        units = sum(map(_ASCII.__getitem__, text))
    else:
        units = sum(_ASCII.get(ch, _NON_ASCII) for ch in text)
    return round(units * font_px / 1000)

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


def text_width_px(text: str, font_px: float) -> int:
    """Width of ``text`` set in Arial at ``font_px`` (titles ~20 px, descriptions ~14 px)."""
    units = sum(_WIDTHS.get(ch, _DEFAULT if ord(ch) < 128 else 650) for ch in text)
    return round(units * font_px / 1000)

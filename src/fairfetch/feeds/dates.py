"""Dates as feeds really write them, normalised to aware UTC datetimes.

Feeds claim RFC 822 or RFC 3339 and ship everything in between: two-digit years, full or
misspelled weekday names, missing seconds or zones, zone names nobody standardised, offsets with
and without colons, ``+00:00Z``, ``T`` or a space or nothing between date and time, month names
in other languages. Each form that we have met gets a rule here; anything else is None, never an
exception, and the caller records it in ``Feed.problems``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from functools import lru_cache

__all__ = ["parse_date", "parse_date_noted"]

# Month names by their first letters (lowercase). English first; then the other languages whose
# feeds localise pubDate (German, French, Spanish, Italian, Dutch, Portuguese) where they differ.
_MONTHS: dict[str, int] = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
    "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
    # German
    "mär": 3, "mrz": 3, "mai": 5, "okt": 10, "dez": 12,
    # French
    "fév": 2, "fev": 2, "avr": 4, "jui": 6, "aoû": 8, "aou": 8, "déc": 12,
    # Spanish / Portuguese / Italian / Dutch
    "ene": 1, "abr": 4, "ago": 8, "dic": 12, "set": 9, "out": 10, "gen": 1, "giu": 6,
    "lug": 7, "mag": 5, "ott": 10, "maa": 3, "mei": 5, "fev.": 2,
}
# French "juil" (July) vs "juin" (June) share "jui": resolved on the fourth letter below.

_ZONES: dict[str, int] = {  # minutes east of UTC
    "gmt": 0, "ut": 0, "utc": 0, "z": 0, "wet": 0, "bst": 60, "cet": 60, "cest": 120,
    "met": 60, "mest": 120, "eet": 120, "eest": 180, "msk": 180, "ist": 330, "jst": 540,
    "kst": 540, "hkt": 480, "sgt": 480, "awst": 480, "acst": 570, "aest": 600, "aedt": 660,
    "nzst": 720, "nzdt": 780,
    "est": -300, "edt": -240, "cst": -360, "cdt": -300, "mst": -420, "mdt": -360,
    "pst": -480, "pdt": -420, "akst": -540, "akdt": -480, "hst": -600, "ast": -240,
    "adt": -180, "nst": -210, "ndt": -150,
    # US zones without the daylight letter, as feedparser reads them (standard time)
    "et": -300, "ct": -360, "mt": -420, "pt": -480, "at": -240,
}

_OFFSET = re.compile(r"^(?:gmt|utc|ut)?\s*([+-])(\d{1,2})(?::?(\d{2}))?$")

_ISO = re.compile(
    r"^(?P<y>\d{4})(?:-?(?P<mo>\d{2})(?:-?(?P<d>\d{2}))?)?"
    r"(?:(?:[Tt]|\s+)(?P<h>\d{1,2})(?::?(?P<mi>\d{2}))?(?::?(?P<s>\d{2})(?:[.,](?P<f>\d+))?)?)?"
    r"\s*(?P<tz>[Zz]|(?:UTC|GMT|utc|gmt)?\s*[+-]\d{1,2}(?::?\d{2})?|[A-Za-z]{2,5})?"
    r"(?:\s*[Zz])?$"
)

_RFC822 = re.compile(
    r"^(?:(?P<wd>[^\W\d_]+)\.?,?\s*,?\s*)?"
    r"(?P<d>\d{1,2})(?:st|nd|rd|th)?[\s\-/.]+(?P<mon>[^\W\d_]+)\.?[\s\-/.,]+(?P<y>\d{2,4})(?!\d),?"
    r"(?:(?:\s+|T|\s*,\s*)(?:at\s+)?(?P<h>\d{1,2})[:.](?P<mi>\d{1,2})"
    r"(?:[:.](?P<s>\d{1,2})(?:[.,]\d+)?)?\s*(?P<ampm>[AaPp]\.?[Mm]\.?)?)?"
    r"\s*(?P<tz>.*?)\s*$"
)

# "May 19, 2002 15:21:36 GMT" and "Sunday, May 19, 2002 3:21 PM"
_MONTH_FIRST = re.compile(
    r"^(?:(?P<wd>[^\W\d_]+)\.?,?\s+)?(?P<mon>[^\W\d_]+)\.?\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?,?\s+"
    r"(?P<y>\d{4})(?!\d),?"
    r"(?:\s+(?:at\s+)?(?P<h>\d{1,2})[:.](?P<mi>\d{2})(?:[:.](?P<s>\d{2})(?:[.,]\d+)?)?"
    r"\s*(?P<ampm>[AaPp]\.?[Mm]\.?)?)?"
    r"\s*(?P<tz>.*?)\s*$"
)

# asctime and date(1): "Sun May 19 15:21:36 2002", "Sun May 19 15:21:36 UTC 2002"
_ASCTIME = re.compile(
    r"^(?:[^\W\d_]+,?\s+)?(?P<mon>[^\W\d_]+)\s+(?P<d>\d{1,2})\s+"
    r"(?P<h>\d{1,2}):(?P<mi>\d{2})(?::(?P<s>\d{2}))?\s+(?:(?P<tz>[^\W\d_]+|[+-]\d{4})\s+)?"
    r"(?P<y>\d{4})$"
)

# "2002/05/19 15:21:36", "2002.05.19"
_YMD_SLASH = re.compile(
    r"^(?P<y>\d{4})[/.](?P<mo>\d{1,2})[/.](?P<d>\d{1,2})"
    r"(?:[\sT]+(?P<h>\d{1,2}):(?P<mi>\d{2})(?::(?P<s>\d{2}))?)?\s*(?P<tz>.*?)\s*$"
)


def _month(name: str) -> int | None:
    low = name.lower()
    if low.startswith("juil"):
        return 7
    if low.startswith("juin"):
        return 6
    return _MONTHS.get(low[:3])


def _zone(text: str) -> int | None:
    """Minutes east of UTC; None when the zone cannot be read (the caller assumes UTC)."""
    tz = text.strip().strip("()").strip().lower()
    if not tz:
        return 0
    if tz in _ZONES:
        return _ZONES[tz]
    m = _OFFSET.match(tz)
    if m:
        sign, hh, mm = m.groups()
        hours = int(hh)
        minutes = int(mm) if mm else 0
        total = hours * 60 + minutes
        if total > 18 * 60:
            return None
        return total if sign == "+" else -total
    # "+0000 GMT", "GMT (+00:00)", "-0500 (EST)": the first readable part wins.
    for part in re.split(r"[\s()]+", tz):
        if part and (part in _ZONES or _OFFSET.match(part)):
            return _zone(part)
    if len(tz) == 1 and tz.isalpha():  # military zones: RFC 2822 says treat as -0000
        return 0
    return None


def _build(
    y: int, mo: int, d: int, h: int = 0, mi: int = 0, s: int = 0, us: int = 0, offset: int = 0
) -> datetime | None:
    extra = timedelta()
    if h == 24 and mi == 0 and s == 0:
        h, extra = 0, timedelta(days=1)
    if s == 60:  # leap second
        s = 59
    try:
        dt = datetime(y, mo, d, h, mi, s, us, tzinfo=UTC)
    except ValueError:
        return None
    return dt + extra - timedelta(minutes=offset)


def _year(text: str) -> int:
    y = int(text)
    if len(text) == 2:
        return y + (2000 if y < 50 else 1900)
    if len(text) == 3:
        return y + 1900
    return y


def _hour(h: str | None, ampm: str | None) -> int:
    hour = int(h) if h else 0
    if ampm:
        pm = ampm[0] in "pP"
        if hour == 12:
            hour = 12 if pm else 0
        elif pm:
            hour += 12
    return hour


def _iso(text: str) -> datetime | None:
    m = _ISO.match(text)
    if not m:
        return None
    g = m.group
    frac = g("f")
    us = int((frac + "000000")[:6]) if frac else 0
    offset = _zone(g("tz") or "")
    if offset is None:
        return None
    return _build(
        int(g("y")), int(g("mo") or 1), int(g("d") or 1), int(g("h") or 0), int(g("mi") or 0),
        int(g("s") or 0), us, offset,
    )


def _named(m: re.Match[str]) -> datetime | None:
    return _named_noted(m)[0]


def _named_noted(m: re.Match[str]) -> tuple[datetime | None, str | None]:
    """The date and, when its zone could not be read (and UTC was assumed), that zone."""
    g = m.group
    month = _month(g("mon"))
    if month is None:
        return None, None
    unknown = None
    offset = _zone(g("tz") or "")
    if offset is None:
        offset, unknown = 0, g("tz")
    return _build(
        _year(g("y")), month, int(g("d")), _hour(g("h"), g("ampm") if "ampm" in m.re.groupindex
                                                   else None),
        int(g("mi") or 0), int(g("s") or 0), 0, offset,
    ), unknown


_FAST_MONTHS = {"Jan": 1, "Feb": 2, "Mar": 3, "Apr": 4, "May": 5, "Jun": 6, "Jul": 7, "Aug": 8,
                "Sep": 9, "Oct": 10, "Nov": 11, "Dec": 12}
_FAST_ZONES = {"GMT": 0, "UTC": 0, "UT": 0, "Z": 0, "+0000": 0, "-0000": 0}


def _rfc822_fast(text: str) -> datetime | None:
    """``Sun, 19 May 2002 15:21:36 GMT`` (or ``+hhmm``), the form most RSS feeds write, read
    without the regular expressions; None sends anything else to the general rules."""
    parts = text.split(" ")
    if len(parts) != 6 or not text.isascii():
        return None
    wd, d, mon, y, hms, tz = parts
    month = _FAST_MONTHS.get(mon)
    if (month is None or not wd.endswith(",") or not wd[:-1].isalpha() or len(hms) != 8
            or hms[2] != ":" or hms[5] != ":" or len(y) != 4 or not 1 <= len(d) <= 2
            or not (d.isdigit() and y.isdigit())):
        return None
    offset = _FAST_ZONES.get(tz)
    if offset is None:
        if len(tz) != 5 or tz[0] not in "+-" or not tz[1:].isdigit():
            return None
        offset = int(tz[1:3]) * 60 + int(tz[3:])
        if offset > 18 * 60:
            return None
        if tz[0] == "-":
            offset = -offset
    try:
        h, mi, s = int(hms[:2]), int(hms[3:5]), int(hms[6:])
        if h > 23 or s > 59:
            return None
        dt = datetime(int(y), month, int(d), h, mi, s, tzinfo=UTC)
    except ValueError:
        return None
    return dt - timedelta(minutes=offset) if offset else dt


def parse_date(value: str | None) -> datetime | None:
    """Parse a feed date into an aware UTC datetime; None when it cannot be read.

    Never raises: a date is metadata, and one bad value must not cost the entry."""
    return parse_date_noted(value)[0]


@lru_cache(maxsize=16384)  # a feed re-serves most of its entries, dates and all, every fetch
def parse_date_noted(value: str | None) -> tuple[datetime | None, str | None]:
    """``parse_date`` and what the reader must be told: a zone that could not be read, for
    which UTC was assumed (the date is kept rather than lost, but it may be hours off, and
    that must not pass silently). Cached: datetimes are immutable, so a shared result is safe.
    """
    if not value:
        return None, None
    text = value.strip()
    if not text or len(text) > 100:
        return None, None
    try:
        if text[0].isdigit():
            if len(text) >= 20 and text[10] == "T":
                # RFC 3339 as most feeds write it: the C parser, then our rules if it declines
                try:
                    fast = datetime.fromisoformat(text)
                except ValueError:
                    pass
                else:
                    if fast.tzinfo is not None:
                        return fast.astimezone(UTC), None
            dt = _iso(text)
            if dt is not None:
                return dt, None
            m = _YMD_SLASH.match(text)
            if m:
                tz = m.group("tz") or ""
                offset = _zone(tz)
                return _build(
                    int(m.group("y")), int(m.group("mo")), int(m.group("d")),
                    int(m.group("h") or 0), int(m.group("mi") or 0), int(m.group("s") or 0),
                    0, offset or 0,
                ), _unknown_zone(tz) if offset is None else None
        elif (rfc := _rfc822_fast(text)) is not None:
            return rfc, None
        for pattern in (_RFC822, _MONTH_FIRST, _ASCTIME):
            m = pattern.match(text)
            if m:
                dt, zone = _named_noted(m)
                if dt is not None:
                    return dt, None if zone is None else _unknown_zone(zone)
        if text.isdigit() and len(text) in (9, 10):  # a Unix timestamp where a date belongs
            return datetime.fromtimestamp(int(text), tz=UTC), None
    except (ValueError, OverflowError, OSError):
        return None, None
    return None, None


def _unknown_zone(zone: str) -> str:
    return f"unknown time zone {zone.strip()[:30]!r}, read as UTC"

"""Digest issue times in the reader's time zone, DST included (zoneinfo).

A daily digest at local hour H is issued once per local calendar day; a weekly one once per local
week on its weekday. On the spring-forward day a local hour that does not exist is sent at the
first instant after the gap; on the fall-back day an hour that happens twice is sent at its first
occurrence. Pure functions; no clock is read here.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from fairfetch.errors import InputError

__all__ = [
    "MODES", "WEEKDAYS", "describe", "next_issue", "parse_weekday", "schedule_label", "zone",
]

MODES = ("realtime", "daily", "weekly")
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        # OSError: a region alone ("America") is a directory of tzdata, a name over 255 bytes
        # too long a file name; both reached the public form as a 500.
        raise InputError(
            name, "not a known time zone (use an IANA name like Europe/Paris)"
        ) from None


def parse_weekday(value: str | int) -> int:
    """``mon``/``monday``/``0`` … ``sun``/``6`` -> 0..6 (Monday is 0, like datetime.weekday())."""
    if isinstance(value, int) or (str(value).strip().isascii() and str(value).strip().isdigit()):
        n = int(value)
        if 0 <= n <= 6:
            return n
        raise InputError(str(value), "weekday must be 0 (Monday) to 6 (Sunday)")
    # A day's name or its start ("thu", "thurs", "thursday"): only the first three letters
    # were read, so "--weekday monkey" or "sunset" was taken for a day without a word.
    key = str(value).strip().lower()
    for n, name in enumerate(_DAY_NAMES):
        if len(key) >= 3 and name.lower().startswith(key):
            return n
    raise InputError(str(value), "not a weekday (mon … sun, or the day's name)")


def schedule_label(mode: str, hour: int, weekday: int) -> str:
    """The digest a subscription's items go into: subscriptions with the same label share issues."""
    if mode == "daily":
        return f"daily@{hour:02d}"
    if mode == "weekly":
        return f"weekly@{WEEKDAYS[weekday]}@{hour:02d}"
    raise ValueError(f"no digest for mode {mode!r}")


def describe(mode: str, hour: int, weekday: int, tz: str | None) -> str:
    """What the reader will get, in words, with the hour and the zone it is in: a reader who
    left the form's time zone at UTC learnt it only when the digests came at the wrong hour."""
    if mode == "daily":
        return f"a daily digest at {hour:02d}:00 ({tz or 'UTC'})"
    if mode == "weekly":
        return f"a weekly digest on {_DAY_NAMES[weekday]} at {hour:02d}:00 ({tz or 'UTC'})"
    return "each new item"


def _local_instant(day: date, hour: int, tz: ZoneInfo) -> datetime:
    """The UTC instant of ``hour:00`` on local ``day``.

    ``fold=0`` (PEP 495): an hour that happens twice is taken at its first occurrence; an hour
    skipped by a spring-forward gap is read with the offset before the gap, which lands it after
    the gap by the gap's length (02:00 on a New York spring day is sent at 03:00 EDT).
    """
    return datetime.combine(day, time(hour), tzinfo=tz).astimezone(UTC)


def next_issue(after: datetime, mode: str, hour: int, weekday: int, tz_name: str) -> datetime:
    """The first digest issue strictly after ``after`` (aware), as an aware UTC datetime."""
    if after.tzinfo is None:
        raise ValueError("after must be aware")
    if not 0 <= hour <= 23:
        raise InputError(str(hour), "hour must be 0 to 23")
    tz = zone(tz_name)
    local_day = after.astimezone(tz).date()
    for offset in range(0, 9):
        day = local_day + timedelta(days=offset)
        if mode == "weekly" and day.weekday() != weekday:
            continue
        if mode not in ("daily", "weekly"):
            raise ValueError(f"no digest for mode {mode!r}")
        at = _local_instant(day, hour, tz)
        if at > after:
            return at
    raise AssertionError("unreachable: a matching day exists within 8 days")

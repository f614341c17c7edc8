"""RFC 9110 §10.2.3 Retry-After: how long a throttled publisher asked us to wait.

A Retry-After is a schedule instruction (see DESIGN.md, Feed health), so its value decides when a
feed is next fetched. It is clamped: a publisher saying ``0`` must not make us hammer it, and one
saying "in ten days" must not make a feed silently vanish for ten days. A value we cannot read
gets the same half hour as none at all — never an error.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from email.utils import parsedate_tz

__all__ = [
    "DEFAULT_RETRY_AFTER",
    "MAX_RETRY_AFTER",
    "MIN_RETRY_AFTER",
    "parse_retry_after",
    "retry_after_seconds",
]

MIN_RETRY_AFTER = 60.0
MAX_RETRY_AFTER = 24 * 3600.0
DEFAULT_RETRY_AFTER = 30 * 60.0

_DELAY = re.compile(r"[0-9]+")
# rfc850-date: day-name "," SP date2 SP time-of-day SP GMT, date2 = day "-" month "-" 2DIGIT
_RFC850 = re.compile(r"[A-Za-z]+,\s*\d{1,2}-[A-Za-z]{3}-(\d{2})\s")


def _rfc850_year(two_digits: int, now: datetime) -> int:
    """RFC 9110 §5.6.7: a two-digit year more than 50 years in the future is the most recent
    past year with those digits."""
    candidates = [(now.year // 100 + k) * 100 + two_digits for k in (-1, 0, 1)]
    return max(y for y in candidates if y <= now.year + 50)


def retry_after_seconds(value: str | None, now: datetime) -> float | None:
    """Seconds the header asks for, unclamped (a past date is 0); None when absent or unreadable.

    ``email.utils.parsedate_tz`` reads all three HTTP-date forms (IMF-fixdate, RFC 850,
    asctime); only the RFC 850 two-digit year needs RFC 9110's own rule instead of email's.
    """
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    if _DELAY.fullmatch(text):
        # A thousand-digit number is just "long" (and int() refuses over 4300 digits).
        return float(int(text)) if len(text) <= 15 else 1e15
    parts = parsedate_tz(text)
    if parts is None:
        return None
    year = parts[0]
    m = _RFC850.match(text)
    if m:
        year = _rfc850_year(int(m.group(1)), now)
    try:
        when = datetime(year, parts[1], parts[2], parts[3], parts[4], parts[5], tzinfo=UTC)
    except (ValueError, OverflowError):
        return None
    offset = parts[9] or 0  # HTTP-dates are GMT; tolerate an explicit numeric zone
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    delta = (when - now).total_seconds() - offset
    return max(0.0, delta)


def parse_retry_after(value: str | None, now: datetime | None = None) -> float:
    """Seconds to wait, clamped to [1 minute, 1 day]; absent or unreadable → 30 minutes."""
    seconds = retry_after_seconds(value, now if now is not None else datetime.now(UTC))
    if seconds is None:
        return DEFAULT_RETRY_AFTER
    return min(MAX_RETRY_AFTER, max(MIN_RETRY_AFTER, seconds))

"""How long a notification waits after a failed delivery attempt, and what a reply means.

Mail providers throttle (421/451/452): that is a schedule instruction, not a broken address, so
temporary failures retry with exponential backoff and never give up on their own. A 5xx reply is a
hard failure for that message; repeated hard failures flag the address.
"""

from __future__ import annotations

from datetime import datetime, timedelta

__all__ = ["FIRST_DELAY", "HARD_FAILURES_TO_FLAG", "MAX_DELAY", "classify_reply", "retry_at"]

#: First retry delay after a temporary failure.
FIRST_DELAY = timedelta(seconds=30)
#: Ceiling of the retry delay: a throttled provider is retried at least this often.
MAX_DELAY = timedelta(hours=1)
#: Consecutive hard failures after which an address is flagged and no longer mailed.
HARD_FAILURES_TO_FLAG = 3


def retry_at(now: datetime, attempts: int, *, first: timedelta = FIRST_DELAY,
             ceiling: timedelta = MAX_DELAY) -> datetime:
    """When to try again after ``attempts`` failed attempts (1 = the first failure)."""
    n = max(1, attempts)
    delay = first * (2 ** min(n - 1, 30))
    return now + min(delay, ceiling)


def classify_reply(code: int | None) -> str:
    """``temporary`` (retry later), ``permanent`` (5xx: this message failed) or ``ok``.

    ``None`` is a connection failure or a dropped connection: temporary, since nothing says the
    address is bad.
    """
    if code is None:
        return "temporary"
    if 200 <= code < 400:
        return "ok"
    if 500 <= code < 600:
        return "permanent"
    return "temporary"

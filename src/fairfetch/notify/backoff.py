"""How long a notification waits after a failed delivery attempt, and what a reply means.

Mail providers throttle (421/451/452): that is a schedule instruction, not a broken address, so
temporary failures retry with exponential backoff and never give up on their own. A 5xx reply is a
hard failure for that message; repeated hard failures flag the address. A 5xx refusal of us by
policy (see :mod:`fairfetch.notify.replies`) is retried like a temporary failure, but not for
ever: see :data:`POLICY_GIVE_UP_AFTER`.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

__all__ = [
    "FIRST_DELAY",
    "HARD_FAILURES_TO_FLAG",
    "MAX_DELAY",
    "POLICY_GIVE_UP_AFTER",
    "classify_reply",
    "policy_gives_up",
    "policy_since",
    "retry_at",
]

#: First retry delay after a temporary failure.
FIRST_DELAY = timedelta(seconds=30)
#: Ceiling of the retry delay: a throttled provider is retried at least this often.
MAX_DELAY = timedelta(hours=1)
#: Consecutive hard failures after which an address is flagged and no longer mailed.
HARD_FAILURES_TO_FLAG = 3
#: How long a message refused by policy (a 5xx about us: 5.7.x, 5.1.7/5.1.8, "Relaying
#: denied") is retried, counted from the first of its refusals in a row, before it fails for
#: good and its publisher's credit hold is released. A server's 5xx is a definite "no", unlike
#: the 4xx "later" (RFC 5321 section 4.5.4.1's 4-5 days is for those); three days cover a
#: weekend and the usual fixes on our side — a block-list delisting (typically within 24-48
#: hours), an SPF/DKIM/DMARC record corrected and its DNS TTL expired, a relay permission
#: granted — while the news is still news and the credit is not tied up for a week.
POLICY_GIVE_UP_AFTER = timedelta(days=3)

#: ``since <ISO time>: `` right after the policy-refusal prefix of a row's last error: when the
#: row's refusals in a row began (kept across retries: the row has no column for it).
_SINCE = re.compile(r"since (\d{4}-\d\d-\d\dT[0-9:.]+(?:[+-]\d\d:\d\d|Z)?): ")


def retry_at(now: datetime, attempts: int, *, first: timedelta = FIRST_DELAY,
             ceiling: timedelta = MAX_DELAY) -> datetime:
    """When to try again after ``attempts`` failed attempts (1 = the first failure)."""
    n = max(1, attempts)
    delay = first * (2 ** min(n - 1, 30))
    return now + min(delay, ceiling)


def policy_since(last_error: str | None, prefix: str) -> datetime | None:
    """When a row's policy refusals in a row began, read off its last error (``prefix``, then
    ``since <time>: ``), or None when its last failure was something else (or none)."""
    if not last_error or not last_error.startswith(prefix):
        return None
    m = _SINCE.match(last_error, len(prefix))
    if m is None:
        return None
    try:
        at = datetime.fromisoformat(m.group(1))
    except ValueError:
        return None
    return at if at.tzinfo is not None else None


def policy_gives_up(since: datetime, now: datetime,
                    limit: timedelta = POLICY_GIVE_UP_AFTER) -> bool:
    """A message refused by policy since ``since`` fails for good at ``now``."""
    return now - since >= limit


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

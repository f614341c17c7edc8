"""Pacing of requests to the audited site: a minimum gap between request starts (the larger of
``per_key_gap`` and robots.txt's Crawl-delay) and a site-wide pause when the site throttles.

A throttle (429, 503 + Retry-After) is an instruction about the whole site, not about the one
page that got it: every worker waits, not only the one that was told.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from datetime import datetime

from fairfetch.net.retry_after import MAX_RETRY_AFTER, retry_after_seconds

__all__ = ["DEFAULT_THROTTLE_WAIT", "Pacer", "throttle_wait"]

#: The wait after a throttle that names no time (or none we can read): a minute. Not the half
#: hour a feed gets (its next crawl is hours away anyway): an audit has someone waiting for it,
#: and each throttled page is asked again up to three times.
DEFAULT_THROTTLE_WAIT = 60.0


def throttle_wait(retry_after: str | None, now: datetime) -> float:
    """Seconds to pause the audited site after a 429 / 503 + Retry-After: what it asked.

    Not the feed crawler's clamp (at least 60 s): a site asking for 2 s would cost a minute
    per retry. Still at most a day, as for feeds.
    """
    seconds = retry_after_seconds(retry_after, now)
    if seconds is None:
        return DEFAULT_THROTTLE_WAIT
    return min(MAX_RETRY_AFTER, seconds)


class Pacer:
    def __init__(
        self,
        gap: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.gap = max(0.0, gap)
        self.clock = clock
        self.sleep = sleep
        self.next_start = 0.0
        self.paused_until = 0.0

    def reserve(self) -> float:
        """Claim the next start slot; returns how long the caller must wait for it."""
        now = self.clock()
        start = max(now, self.next_start, self.paused_until)
        self.next_start = start + self.gap
        return start - now

    async def wait(self) -> None:
        delay = self.reserve()
        if delay > 0:
            await self.sleep(delay)

    def pause(self, seconds: float) -> None:
        """The site asked us to wait (Retry-After): nobody starts before then."""
        self.paused_until = max(self.paused_until, self.clock() + max(0.0, seconds))

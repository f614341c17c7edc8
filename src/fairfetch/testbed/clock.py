"""The testbed's own clock.

Feeds gain entries as a pure function of (seed, feed, clock), so a test that wants a feed to
publish advances this clock instead of sleeping. By default it is frozen (tests stay
deterministic); ``realtime=True`` (the ``fairfetch testbed`` command) lets it tick with the wall
clock as well, so a long-running demo sees feeds publish on their own.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

__all__ = ["TestbedClock", "default_start"]


def default_start() -> float:
    """Midnight UTC of today: realistic entry dates, and the same bytes all day for one seed."""
    now = time.time()
    return float(int(now // 86400) * 86400)


class TestbedClock:
    """Seconds since the epoch, as the simulated publishers see them."""

    __test__ = False  # not a pytest test class, despite the name

    def __init__(
        self,
        start: float | None = None,
        *,
        realtime: bool = False,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.start = default_start() if start is None else float(start)
        self.realtime = realtime
        self._monotonic = monotonic
        self._t0 = monotonic()
        self._offset = 0.0
        self._lock = threading.Lock()

    def now(self) -> float:
        """The current testbed time (epoch seconds)."""
        elapsed = self._monotonic() - self._t0 if self.realtime else 0.0
        return self.start + self._offset + elapsed

    def now_datetime(self) -> datetime:
        return datetime.fromtimestamp(self.now(), UTC)

    def advance(self, seconds: float) -> float:
        """Move time forward (never backward: publishers do not un-publish); returns the new now.

        NaN or infinity is refused: once in the offset, every later ``now()`` is NaN and no feed
        can say how many entries it has.
        """
        seconds = _finite(seconds)
        if seconds < 0:
            raise ValueError("the testbed clock only moves forward")
        with self._lock:
            self._offset += float(seconds)
        return self.now()

    def set(self, when: float) -> float:
        """Jump to ``when`` (epoch seconds), which must not be in the testbed's past."""
        when = _finite(when)
        current = self.now()
        if when < current:
            raise ValueError("the testbed clock only moves forward")
        return self.advance(when - current)


def _finite(value: float) -> float:
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"the testbed clock needs a finite number of seconds, not {value!r}")
    return number

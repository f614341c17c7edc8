"""A token bucket: the one limit a whole platform shares, whatever hostname a request used."""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["TokenBucket"]


class TokenBucket:
    """``rate`` tokens per second, at most ``burst`` banked; each request takes one."""

    def __init__(
        self, rate: float, burst: int, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if rate < 0 or burst < 1:
            raise ValueError("rate must be >= 0 and burst >= 1")
        self.rate = float(rate)
        self.burst = int(burst)
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock()

    def take(self) -> bool:
        """Spend one token if there is one; False means the caller must be throttled."""
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
        self._last = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False

    def refill(self) -> None:
        """Fill the bucket (used when stats are reset so tests start from a known state)."""
        self._tokens = float(self.burst)
        self._last = self._clock()

"""Telling our outage from theirs: a pure detector.

When many unrelated politeness keys fail at the network level (DNS, connect, timeout) within the
same minute, the fault is ours (our resolver, our uplink), not theirs. Counting those failures
against the feeds would walk hundreds of healthy feeds down the ladder for our own bad minute.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field


@dataclass
class OutageDetector:
    threshold_keys: int = 20
    window: float = 60.0
    _events: deque[tuple[float, str]] = field(default_factory=deque)
    in_outage: bool = False

    def _trim(self, now: float) -> None:
        while self._events and self._events[0][0] < now - self.window:
            self._events.popleft()

    def observe_network_failure(self, key: str, now: float) -> bool:
        """Record a network-level failure; True when we are (now) in an outage."""
        self._events.append((now, key))
        self._trim(now)
        if len({k for _, k in self._events}) >= self.threshold_keys:
            self.in_outage = True
        return self.in_outage

    def observe_success(self, now: float) -> None:
        """A success from anywhere means the network works again."""
        self._trim(now)
        if self.in_outage:
            self.in_outage = False
            self._events.clear()

    def distinct_keys(self, now: float) -> int:
        self._trim(now)
        return len({k for _, k in self._events})

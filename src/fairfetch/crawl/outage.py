"""Telling our outage from theirs: a pure detector.

When many unrelated politeness keys fail at the network level (DNS, connect, timeout) within the
same minute, the fault is ours (our resolver, our uplink), not theirs. Counting those failures
against the feeds would walk hundreds of healthy feeds down the ladder for our own bad minute.

What ends an outage matters as much. Our side often fails partly: the resolver is down, yet the
few hosts we hold kept-alive connections to (or need no lookup for) still answer. One answer is
therefore no evidence that the network is back: an outage ends when at least ``recover_keys``
distinct keys answer and they outnumber the keys still failing, both counted by each key's
latest network-level result within ``window``. The same evidence is needed before failures held
back outside an outage are released as the feeds' own (:meth:`network_fine`). During an outage
the crawler spends few requests: at most ``probe_keys`` probes per window, one per key
(:meth:`may_probe`), so that a real end is noticed without knocking on every door.

Times are plain floats (a monotonic clock the caller passes in): no I/O, no clock of its own.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

__all__ = ["OutageDetector"]


@dataclass
class OutageDetector:
    threshold_keys: int = 20
    window: float = 60.0
    #: Distinct keys that must answer (and outnumber the failing ones) to end an outage.
    recover_keys: int = 5
    #: Probes allowed per window during an outage (one per key).
    probe_keys: int = 10
    in_outage: bool = False
    #: Per key, its latest network-level result (time, answered?), oldest first; trimmed to
    #: the window on every call, so it holds at most the keys seen within a minute.
    _latest: OrderedDict[str, tuple[float, bool]] = field(default_factory=OrderedDict)
    _answering: int = 0
    #: Keys probed during the current outage, with when (oldest first).
    _probed: OrderedDict[str, float] = field(default_factory=OrderedDict)

    def _trim(self, now: float) -> None:
        horizon = now - self.window
        while self._latest:
            key, (t, ok) = next(iter(self._latest.items()))
            if t >= horizon:
                break
            del self._latest[key]
            self._answering -= ok
        while self._probed and next(iter(self._probed.values())) < horizon:
            self._probed.popitem(last=False)

    def _record(self, key: str, now: float, ok: bool) -> None:
        old = self._latest.pop(key, None)
        if old is not None:
            self._answering -= old[1]
        self._latest[key] = (now, ok)
        self._answering += ok
        self._trim(now)

    def _counts(self, now: float) -> tuple[int, int]:
        """(answering, failing) distinct keys in the window."""
        self._trim(now)
        return self._answering, len(self._latest) - self._answering

    def _recovered(self, now: float) -> bool:
        answering, failing = self._counts(now)
        return answering >= min(self.recover_keys, self.threshold_keys) and answering > failing

    def observe_network_failure(self, key: str, now: float) -> bool:
        """Record a network-level failure; True when we are (now) in an outage."""
        self._record(key, now, False)
        _, failing = self._counts(now)
        if failing >= self.threshold_keys:
            self.in_outage = True
        return self.in_outage

    def observe_success(self, key: str, now: float) -> None:
        """Record that ``key`` answered (any HTTP answer: the network reached it). Ends an
        outage only on evidence from several keys (see the module docstring)."""
        self._record(key, now, True)
        if self.in_outage and self._recovered(now):
            self.in_outage = False
            self._probed.clear()

    def network_fine(self, now: float) -> bool:
        """Whether the answers in the window show our network working, so network failures
        held back may be counted as the feeds' own."""
        return not self.in_outage and self._recovered(now)

    def may_probe(self, key: str, now: float) -> bool:
        """Whether a request to ``key`` may go out now; during an outage it is a probe, and a
        granted probe is counted."""
        if not self.in_outage:
            return True
        self._trim(now)
        if key in self._probed or len(self._probed) >= self.probe_keys:
            return False
        self._probed[key] = now
        return True

    def distinct_keys(self, now: float) -> int:
        """Distinct keys whose latest result in the window is a network failure."""
        return self._counts(now)[1]

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
    #: Per key, its latest network-level result: (time, answered?).
    _latest: dict[str, tuple[float, bool]] = field(default_factory=dict)
    #: Keys probed during the current outage, with when.
    _probed: dict[str, float] = field(default_factory=dict)

    def _trim(self, now: float) -> None:
        horizon = now - self.window
        if any(t < horizon for t, _ in self._latest.values()):
            self._latest = {k: v for k, v in self._latest.items() if v[0] >= horizon}
        if any(t < horizon for t in self._probed.values()):
            self._probed = {k: t for k, t in self._probed.items() if t >= horizon}

    def _counts(self, now: float) -> tuple[int, int]:
        """(answering, failing) distinct keys in the window."""
        self._trim(now)
        answering = sum(1 for _, ok in self._latest.values() if ok)
        return answering, len(self._latest) - answering

    def _recovered(self, now: float) -> bool:
        answering, failing = self._counts(now)
        return answering >= min(self.recover_keys, self.threshold_keys) and answering > failing

    def observe_network_failure(self, key: str, now: float) -> bool:
        """Record a network-level failure; True when we are (now) in an outage."""
        self._latest.pop(key, None)
        self._latest[key] = (now, False)
        _, failing = self._counts(now)
        if failing >= self.threshold_keys:
            self.in_outage = True
        return self.in_outage

    def observe_success(self, key: str, now: float) -> None:
        """Record that ``key`` answered (any HTTP answer: the network reached it). Ends an
        outage only on evidence from several keys (see the module docstring)."""
        self._latest.pop(key, None)
        self._latest[key] = (now, True)
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

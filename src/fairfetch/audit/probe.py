"""The probe queue: which external link or redirect destination to status-check next.

Pure state, no I/O: the crawler asks ``next()`` for a URL, checks it, then calls ``done()``.

Invariant (checked in code after every change, in every build — ``assert`` vanishes under
``python -O``): **a host is in the round if and only if its queue is non-empty.** The round is
decided by looking at the host's queue, never by "have I seen this host before": a host's entry
outlives its queue (its in-flight count lives there), and a second URL for a host that was seen
earlier — two redirects to one shop, discovered on separate pages at separate moments — must put
the host back in the round or nobody will ever dispatch it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from fairfetch.audit.urls import host_of
from fairfetch.errors import AuditError

__all__ = ["ProbeQueue", "ProbeQueueError", "Registration"]


class ProbeQueueError(AuditError):
    """The probe queue broke its invariant: a bug, made loud on purpose."""


@dataclass(slots=True)
class _Host:
    queue: deque[str] = field(default_factory=deque)
    in_flight: int = 0


@dataclass(frozen=True, slots=True)
class Registration:
    accepted: bool
    reason: str = ""  # why not: "duplicate" (already registered) or "over_cap"


class ProbeQueue:
    """Round-robin over hosts with pending probes; at most ``limit(host)`` in flight per host."""

    def __init__(self, max_registered: int, limit: Callable[[str], int] | None = None) -> None:
        self.max_registered = max_registered
        self._limit = limit or (lambda _host: 1)
        self._hosts: dict[str, _Host] = {}
        self._round: deque[str] = deque()
        self._in_round: set[str] = set()
        self._registered: set[str] = set()
        self._pending = 0
        self._in_flight = 0
        self.over_cap = 0
        self._capped = 0

    def preload(self, url: str, *, capped: bool = True) -> None:
        """Mark ``url`` as registered without queueing it (resuming: it was checked already)."""
        if url not in self._registered:
            self._registered.add(url)
            if capped:
                self._capped += 1

    # --- mutations ---------------------------------------------------------------------------
    def register(self, url: str, *, capped: bool = True) -> Registration:
        """Queue ``url`` once. Over the cap it is refused and counted; the caller records why.

        ``capped=False`` is for the site's own assets, which the cap on externals does not bound.
        """
        if url in self._registered:
            return Registration(False, "duplicate")
        if capped and self._capped >= self.max_registered:
            self.over_cap += 1
            return Registration(False, "over_cap")
        self._registered.add(url)
        if capped:
            self._capped += 1
        host = host_of(url)
        state = self._hosts.get(host)
        if state is None:
            state = self._hosts[host] = _Host()
        was_out_of_round = not state.queue  # the queue decides, not whether the host is known
        state.queue.append(url)
        self._pending += 1
        if was_out_of_round:
            self._round.append(host)
            self._in_round.add(host)
        self._check_host(host)
        return Registration(True)

    def next(self) -> str | None:
        """The next URL to probe, rotating over hosts; None when every pending host is busy."""
        for _ in range(len(self._round)):
            host = self._round.popleft()
            state = self._hosts[host]
            if state.in_flight >= self._limit(host):
                self._round.append(host)
                continue
            url = state.queue.popleft()
            self._pending -= 1
            state.in_flight += 1
            self._in_flight += 1
            if state.queue:
                self._round.append(host)
            else:
                self._in_round.discard(host)
            self._check_host(host)
            return url
        if self._pending and not self._in_flight:
            raise ProbeQueueError(
                f"{self._pending} probes pending, none in flight, none dispatchable"
            )
        return None

    def done(self, url: str) -> None:
        host = host_of(url)
        state = self._hosts.get(host)
        if state is None or state.in_flight <= 0:
            raise ProbeQueueError(f"done() for {url!r} which is not in flight")
        state.in_flight -= 1
        self._in_flight -= 1
        self._check_host(host)

    # --- reading -----------------------------------------------------------------------------
    def pending(self) -> int:
        return self._pending

    def in_flight(self) -> int:
        return self._in_flight

    def registered(self) -> int:
        return len(self._registered)

    def drain_pending(self) -> list[str]:
        """Every URL still queued (for counting them with a reason when the crawl stops)."""
        urls = [u for state in self._hosts.values() for u in state.queue]
        for state in self._hosts.values():
            state.queue.clear()
        self._round.clear()
        self._in_round.clear()
        self._pending = 0
        return urls

    # --- invariant ---------------------------------------------------------------------------
    def _check_host(self, host: str) -> None:
        state = self._hosts[host]
        if bool(state.queue) != (host in self._in_round):
            raise ProbeQueueError(
                f"host {host!r}: queue has {len(state.queue)} URLs but in_round="
                f"{host in self._in_round}"
            )
        if len(self._round) != len(self._in_round):
            raise ProbeQueueError("round holds a host twice or a host it does not know")

    def check_invariant(self) -> None:
        """Whole-state check (tests call it after every step; the code checks the touched host)."""
        if set(self._round) != self._in_round or len(self._round) != len(self._in_round):
            raise ProbeQueueError("round and in_round disagree")
        for host, state in self._hosts.items():
            if bool(state.queue) != (host in self._in_round):
                raise ProbeQueueError(f"host {host!r} in round iff queue non-empty: violated")
            if state.in_flight < 0 or state.in_flight > self._limit(host):
                raise ProbeQueueError(f"host {host!r}: {state.in_flight} in flight")
        if self._pending != sum(len(s.queue) for s in self._hosts.values()):
            raise ProbeQueueError("pending count drifted")
        if self._in_flight != sum(s.in_flight for s in self._hosts.values()):
            raise ProbeQueueError("in-flight count drifted")

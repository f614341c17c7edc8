"""The politeness state machine: no asyncio, an explicit ``now``, every decision testable.

:class:`PolitenessState` holds per-key in-flight caps and start gaps, one request per host, AIMD on
throttles, key-wide pauses for Retry-After, and round-robin over keys with pending work. Its
central invariant (a key is in the round iff its queue is non-empty) is checked in code on every
operation, because an invariant written in a comment is one nobody checks; a broken one raises
:class:`InvariantError` in every build (not ``assert``, which ``-O`` removes).
"""

from __future__ import annotations

import math
import re
from collections import OrderedDict, deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from fairfetch.errors import ConfigError, FairfetchError
from fairfetch.net.ip_literals import ip_literal
from fairfetch.net.outcome import NETWORK_ERROR_KINDS
from fairfetch.net.politeness_keys import host_of, politeness_key

if TYPE_CHECKING:
    from fairfetch.config import Settings
    from fairfetch.net.outcome import FetchResult

__all__ = ["Feedback", "InvariantError", "KeyStats", "PolitenessState", "Slot"]

T = TypeVar("T")


class InvariantError(FairfetchError):
    """An internal invariant of the dispatch state broke: a bug in fairfetch, never input."""


@dataclass(frozen=True)
class Feedback:
    """What a handler tells the dispatcher about the request it made."""

    throttled: bool = False
    retry_after: float | None = None
    network_error: bool = False
    overloaded: bool = False
    """A 503 without Retry-After: a failure of the feed, not a throttle, but the server says
    it is overloaded, so the key's rate comes down as for a throttle (DESIGN.md: "on 429/503
    from a key, its rate halves")."""

    @classmethod
    def from_result(cls, result: FetchResult) -> Feedback:
        return cls(
            throttled=result.throttled,
            retry_after=result.retry_after if result.throttled else None,
            network_error=result.error_kind in NETWORK_ERROR_KINDS,
            overloaded=result.status == 503 and not result.throttled,
        )


@dataclass(frozen=True)
class KeyStats:
    queued: int
    in_flight: int
    rate: float | None
    """Starts per second the key is allowed since it was throttled; None when not limited."""
    paused_until: float | None
    throttles: int


@dataclass(frozen=True)
class Slot(Generic[T]):
    """One started piece of work; hand it back to :meth:`PolitenessState.finish`."""

    key: str
    host: str
    item: T
    started_at: float


class _Key:
    __slots__ = (
        "cap",
        "decreased_at",
        "delays",
        "extra_gap",
        "gap",
        "host_round",
        "hosts",
        "in_flight",
        "last_start",
        "name",
        "paused_until",
        "queued",
        "rate",
        "recent_starts",
        "throttles",
    )

    def __init__(self, name: str, cap: int, gap: float) -> None:
        self.name = name
        self.cap = cap
        self.gap = gap
        self.extra_gap = 0.0
        self.delays: dict[str | None, float] = {}  # crawl-delay by host (None: hosts unnamed)
        self.hosts: dict[str, deque[Any]] = {}
        self.host_round: OrderedDict[str, None] = OrderedDict()  # hosts with queued work
        self.queued = 0
        self.in_flight = 0
        self.last_start = -math.inf
        self.rate: float | None = None
        self.recent_starts: deque[float] = deque(maxlen=8)
        self.decreased_at = -math.inf
        self.paused_until = -math.inf
        self.throttles = 0


class PolitenessState(Generic[T]):
    """The dispatch decisions, with no I/O and no clock of its own (every call takes ``now``).

    Rules, per politeness key: at most ``cap`` requests in flight; starts at least ``gap`` apart
    (the configured gap, a robots.txt crawl-delay, and ``1 / rate`` once throttled, whichever is
    longest); no start before ``paused_until``. Per host at most ``per_host_in_flight``;
    overall at most ``global_in_flight``.

    AIMD on ``rate`` (starts per second). A key starts unlimited. Its first throttle sets the
    rate to half what it was doing (measured over its last starts), at most ``throttle_rate``;
    each later throttle halves it, down to ``min_rate``. Only one cut per round of requests: a
    request started before the last cut does not cut again (as in TCP). Each success adds
    ``recovery / rate``, so the rate climbs by about ``recovery`` per second whatever its level
    (linear in time, TCP's additive increase); past ``max_rate`` the key is unlimited again.
    A Retry-After also pauses the whole key until then. A 503 without one (``overloaded``) cuts
    the rate the same way; it is no throttle (not counted, no pause).

    Fairness: keys with queued work form the round, an insertion-ordered set; ``pop_ready``
    takes the first startable key and sends it to the back. Within a key, hosts rotate the same
    way. So one slow or huge key cannot starve the others.
    """

    def __init__(
        self,
        *,
        per_key_in_flight: int = 2,
        per_key_gap: float = 0.0,
        per_host_in_flight: int = 1,
        global_in_flight: int = 128,
        overrides: Mapping[str, Mapping[str, float]] | None = None,
        throttle_rate: float = 1.0,
        min_rate: float = 1 / 60,
        max_rate: float = 50.0,
        recovery: float = 0.5,
    ) -> None:
        for name, value in (
            ("per_key_in_flight", per_key_in_flight),
            ("per_host_in_flight", per_host_in_flight),
            ("global_in_flight", global_in_flight),
        ):
            if value < 1:
                raise ConfigError(f"setting {name!r}: must be at least 1, not {value}")
        if per_key_gap < 0:
            raise ConfigError(f"setting 'per_key_gap': must not be negative, not {per_key_gap}")
        self.per_key_in_flight = per_key_in_flight
        self.per_key_gap = per_key_gap
        self.per_host_in_flight = per_host_in_flight
        self.global_in_flight = global_in_flight
        self.throttle_rate = throttle_rate
        self.min_rate = min_rate
        self.max_rate = max_rate
        self.recovery = recovery
        self._overrides = _parse_overrides(overrides or {})
        self._keys: dict[str, _Key] = {}
        self._round: OrderedDict[str, None] = OrderedDict()
        self._host_busy: dict[str, int] = {}
        self._pending = 0
        self._in_flight = 0
        self.wake_hint: float | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> PolitenessState[T]:
        return cls(
            per_key_in_flight=settings.per_key_in_flight,
            per_key_gap=settings.per_key_gap,
            per_host_in_flight=settings.per_host_in_flight,
            global_in_flight=settings.global_in_flight,
            overrides=settings.key_overrides,
        )

    # -- queries --

    @property
    def pending(self) -> int:
        """Items queued, not yet started."""
        return self._pending

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def idle(self) -> bool:
        return self._pending == 0 and self._in_flight == 0

    def round(self) -> list[str]:
        """Keys with pending work, in the order they will be offered a start."""
        return list(self._round)

    def cap(self, key: str) -> int:
        return self._cap(self._key(key))

    def gap(self, key: str) -> float:
        return self._gap(self._key(key))

    def startable_at(self, key: str) -> float:
        """Earliest time the key's gap and pause allow its next start (caps aside)."""
        return self._startable_at(self._key(key))

    def paused_until(self, key: str) -> float:
        """When the key's pause (a Retry-After) ends; -inf when it has none. Unlike
        :meth:`startable_at`, not its spacing (a Crawl-delay, a gap, AIMD's rate)."""
        return self._key(key).paused_until

    def _cap(self, k: _Key) -> int:
        return k.cap

    def _gap(self, k: _Key) -> float:
        base = max(k.gap, k.extra_gap)
        if k.rate is None:
            return base
        return max(base, 1.0 / k.rate)

    def _startable_at(self, k: _Key) -> float:
        return max(k.paused_until, k.last_start + self._gap(k))

    def snapshot(self) -> dict[str, KeyStats]:
        return {
            name: KeyStats(
                queued=k.queued,
                in_flight=k.in_flight,
                rate=k.rate,
                paused_until=k.paused_until if k.paused_until > -math.inf else None,
                throttles=k.throttles,
            )
            for name, k in self._keys.items()
        }

    # -- transitions --

    def set_gap(self, key: str, seconds: float | None, *, host: str | None = None) -> None:
        """An extra minimum gap for ``key``: a robots.txt crawl-delay of one of its hosts.

        A Crawl-delay is one host's, the gap is its key's (every host of the registrable
        domain): the gap is the longest delay its hosts asked for, so a sibling host that
        asked for less does not shorten it. With ``host``, that host's delay is replaced (it
        may lower it; None removes it); without, the delay is one more a host asked for (kept
        if longer than those before); ``seconds=None`` without ``host`` removes every delay.
        """
        k = self._key(key)
        value = max(0.0, seconds or 0.0)
        if host is not None:
            if value:
                k.delays[host] = value
            else:
                k.delays.pop(host, None)
        elif seconds is None:
            k.delays.clear()
        else:
            k.delays[None] = max(k.delays.get(None, 0.0), value)
        k.extra_gap = max(k.delays.values(), default=0.0)

    def pause_until(self, key: str, until: float) -> None:
        """No start on ``key`` before ``until`` (a Retry-After another process was given)."""
        k = self._key(key)
        k.paused_until = max(k.paused_until, until)

    def push(self, key: str, host: str, item: T) -> None:
        k = self._key(key)
        queue = k.hosts.get(host)
        if queue is None:
            queue = k.hosts[host] = deque()
        queue.append(item)
        k.host_round[host] = None
        k.queued += 1
        self._pending += 1
        self._round[key] = None  # appended at the back if new, unchanged position otherwise
        self._check(k, host)

    def pop_ready(self, now: float) -> Slot[T] | None:
        """Start the next item that every rule allows at ``now``, or None.

        When it returns None it leaves ``wake_hint``: the earliest time a key now waiting on its
        gap or pause may start (None: only a completion can unblock anything). One scan serves
        both, so the dispatcher does not rescan every key after each completion.
        """
        self.wake_hint = None
        if self._in_flight >= self.global_in_flight or not self._round:
            return None
        best: float | None = None
        for name in self._round:
            k = self._keys[name]
            at = self._startable_at(k)
            if at > now:
                if best is None or at < best:
                    best = at
                continue
            if k.in_flight >= self._cap(k):
                continue
            host = self._free_host(k)
            if host is None:
                continue
            return self._start(k, host, now)
        self.wake_hint = best
        return None

    def can_start(self, now: float) -> bool:
        """Whether ``pop_ready(now)`` would start something (without starting it)."""
        if self._in_flight >= self.global_in_flight:
            return False
        return any(
            k.in_flight < self._cap(k)
            and now >= self._startable_at(k)
            and self._free_host(k) is not None
            for k in (self._keys[name] for name in self._round)
        )

    def next_wake(self, now: float) -> float | None:
        """The earliest time after ``now`` at which a key waiting only on time (gap, pause) may
        start; None when every waiting key waits on a completion instead."""
        best: float | None = None
        for name in self._round:
            at = self.startable_at(name)
            if at > now and (best is None or at < best):
                best = at
        return best

    def drop(self, key: str) -> list[T]:
        """Take every queued (not yet started) item of ``key`` out, in queue order per host.

        For a caller that would rather reschedule a paused key's work than hold it here.
        """
        k = self._keys.get(key)
        if k is None or not k.queued:
            return []
        items = [item for queue in k.hosts.values() for item in queue]
        self._pending -= k.queued
        k.queued = 0
        k.hosts.clear()
        k.host_round.clear()
        del self._round[key]
        self._check(k)
        return items

    def finish(self, slot: Slot[T], feedback: Feedback, now: float) -> None:
        k = self._keys.get(slot.key)
        busy = self._host_busy.get(slot.host, 0)
        if k is None or k.in_flight < 1 or busy < 1 or self._in_flight < 1:
            raise InvariantError(f"finish of a slot that is not in flight: {slot.key}/{slot.host}")
        k.in_flight -= 1
        self._in_flight -= 1
        if busy == 1:
            del self._host_busy[slot.host]
        else:
            self._host_busy[slot.host] = busy - 1
        if feedback.throttled or feedback.overloaded:
            k.throttles += 1 if feedback.throttled else 0
            if slot.started_at >= k.decreased_at:
                if k.rate is None:
                    k.rate = min(self.throttle_rate, _observed_rate(k.recent_starts) / 2)
                else:
                    k.rate /= 2
                k.rate = max(self.min_rate, k.rate)
                k.decreased_at = now
        elif not feedback.network_error and k.rate is not None:
            k.rate += self.recovery / k.rate
            if k.rate >= self.max_rate:
                k.rate = None
        if feedback.retry_after is not None and feedback.retry_after > 0:
            k.paused_until = max(k.paused_until, now + feedback.retry_after)
        self._check(k, slot.host)

    def check_invariants(self) -> None:
        """Full consistency check over every key (the per-operation check covers one key)."""
        pending = 0
        in_flight = 0
        for name, k in self._keys.items():
            count = 0
            for host, queue in k.hosts.items():
                if not queue:
                    raise InvariantError(f"key {name!r}: empty queue kept for host {host!r}")
                count += len(queue)
            if set(k.hosts) != set(k.host_round):
                raise InvariantError(f"key {name!r}: host round differs from hosts with work")
            if count != k.queued:
                raise InvariantError(f"key {name!r}: queued {k.queued} but holds {count}")
            if (count > 0) != (name in self._round):
                raise InvariantError(f"key {name!r}: in round iff queue non-empty is broken")
            pending += count
            in_flight += k.in_flight
        if set(self._round) - set(self._keys):
            raise InvariantError("round holds unknown keys")
        if pending != self._pending or in_flight != self._in_flight:
            raise InvariantError("totals disagree with the keys")
        if (
            any(b < 1 for b in self._host_busy.values())
            or sum(self._host_busy.values()) != self._in_flight
        ):
            raise InvariantError("per-host in-flight counts disagree with the total")

    # -- internals --

    def _key(self, name: str) -> _Key:
        k = self._keys.get(name)
        if k is None:
            cap, gap = self._overrides.get(name, (None, None))
            k = self._keys[name] = _Key(
                name,
                int(cap) if cap is not None else self.per_key_in_flight,
                gap if gap is not None else self.per_key_gap,
            )
        return k

    def _free_host(self, k: _Key) -> str | None:
        for host in k.host_round:
            if self._host_busy.get(host, 0) < self.per_host_in_flight:
                return host
        return None

    def _start(self, k: _Key, host: str, now: float) -> Slot[T]:
        queue = k.hosts[host]
        item = queue.popleft()
        if queue:
            k.host_round.move_to_end(host)
        else:
            del k.hosts[host]
            del k.host_round[host]
        k.queued -= 1
        self._pending -= 1
        if k.queued:
            self._round.move_to_end(k.name)
        else:
            del self._round[k.name]
        k.in_flight += 1
        self._in_flight += 1
        self._host_busy[host] = self._host_busy.get(host, 0) + 1
        k.last_start = now
        k.recent_starts.append(now)
        self._check(k, host)
        return Slot(k.name, host, item, now)

    def _check(self, k: _Key, host: str | None = None) -> None:
        """The invariant, for the key and host just touched; raises (never ``assert``, which
        ``python -O`` removes)."""
        queue = k.hosts.get(host) if host is not None else None
        if host is not None and (
            (queue is not None and len(queue) > 0) != (host in k.host_round)
            or (queue is not None and not queue)
        ):
            raise InvariantError(f"key {k.name!r}: host {host!r} in round iff it has work broken")
        if (k.queued > 0) != (k.name in self._round):
            raise InvariantError(
                f"key {k.name!r}: in the round iff its queue is non-empty is broken "
                f"(queued={k.queued}, in round={k.name in self._round})"
            )
        if k.queued < 0 or k.in_flight < 0 or self._pending < 0 or self._in_flight < 0:
            raise InvariantError(f"key {k.name!r}: negative count")


def _observed_rate(starts: deque[float]) -> float:
    """Starts per second over the recorded recent starts (infinite when they were instant)."""
    if len(starts) < 2 or starts[-1] <= starts[0]:
        return math.inf
    return (len(starts) - 1) / (starts[-1] - starts[0])


#: A host name as keys spell it (lower case, ASCII); underscores occur in real DNS names.
_HOST_NAME = re.compile(r"[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*")


def _override_key(written: str) -> str:
    """The dispatcher's key for the site an override names.

    Operators write what the publisher wrote to them: a host (``blog.example.com``), in any case,
    in Unicode, even a URL; the dispatcher keys by registrable domain (or private-section
    suffix), lower-cased, in ASCII. Taken as written, such an override named no key and was
    spent on nothing. ``backend:…`` keys are kept (lower-cased, as the dispatcher spells them).
    """
    text = written.strip()
    if text.lower().startswith("backend:"):
        return text.lower()
    host = host_of(text)
    if ip_literal(host) is None and not _HOST_NAME.fullmatch(host):
        raise ConfigError(
            f"key_overrides[{written!r}]: not a host name, URL or backend key to apply it to"
        )
    return politeness_key(host)


def _parse_overrides(raw: Mapping[str, Mapping[str, float]]) -> dict[str, tuple[Any, Any]]:
    out: dict[str, tuple[Any, Any]] = {}
    for key, spec in raw.items():
        if not isinstance(spec, Mapping):
            raise ConfigError(f"key_overrides[{key!r}]: expected a table of in_flight/gap")
        unknown = set(spec) - {"in_flight", "gap"}
        if unknown:
            raise ConfigError(f"key_overrides[{key!r}]: unknown field(s) {sorted(unknown)}")
        cap = spec.get("in_flight")
        gap = spec.get("gap")
        try:
            cap_v = int(cap) if cap is not None else None
            gap_v = float(gap) if gap is not None else None
        except (TypeError, ValueError, OverflowError):
            raise ConfigError(f"key_overrides[{key!r}]: in_flight/gap must be numbers") from None
        if gap_v is not None and not math.isfinite(gap_v):
            raise ConfigError(f"key_overrides[{key!r}]: gap must be a finite number, not {gap}")
        if (cap_v is not None and cap_v < 1) or (gap_v is not None and gap_v < 0):
            raise ConfigError(f"key_overrides[{key!r}]: in_flight ≥ 1 and gap ≥ 0 required")
        name = _override_key(str(key))
        if name in out:  # two hosts of one key: the stricter of each wins
            cap_o, gap_o = out[name]
            cap_v = cap_o if cap_v is None else cap_v if cap_o is None else min(cap_o, cap_v)
            gap_v = gap_o if gap_v is None else gap_v if gap_o is None else max(gap_o, gap_v)
        out[name] = (cap_v, gap_v)
    return out

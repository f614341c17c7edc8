"""Politeness: whose server a request lands on, and how often we may knock.

Three layers, from pure to I/O:

* **Keys** — :func:`politeness_key` names the budget a request spends: a detected backend
  (``backend:substack``), else the private-section suffix a host is under (``blogspot.com``,
  ``github.io``: one backend serves every blog there although the PSL makes each its own
  registrable domain), else the registrable domain (``example.co.uk``). IP literals key by
  themselves. :class:`BackendGrouper` adds backends found by evidence: hosts of different
  registrable domains on one address that are throttled in the same window share one key.
* **State** — :class:`PolitenessState` is the dispatch state machine with no asyncio and an
  explicit ``now``: per-key in-flight caps and start gaps, one request per host, AIMD on
  throttles, key-wide pauses for Retry-After, round-robin over keys with pending work. Its
  central invariant (a key is in the round iff its queue is non-empty) is checked in code on
  every operation, because an invariant written in a comment is one nobody checks.
* **Dispatcher** — :class:`Dispatcher` drives the state with asyncio tasks.
"""

from __future__ import annotations

import asyncio
import ipaddress
import math
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Generic, TypeVar
from urllib.parse import urlsplit

from publicsuffixlist import PSLFILE, PublicSuffixList

from fairfetch.errors import ConfigError, FairfetchError
from fairfetch.net.ip_literals import ip_literal
from fairfetch.net.outcome import NETWORK_ERROR_KINDS

if TYPE_CHECKING:
    from fairfetch.config import Settings
    from fairfetch.net.outcome import FetchResult

__all__ = [
    "BackendGrouper",
    "Dispatcher",
    "DispatcherClosed",
    "Feedback",
    "InvariantError",
    "KeyStats",
    "PolitenessState",
    "Slot",
    "host_of",
    "politeness_key",
    "registrable_domain",
]

T = TypeVar("T")


class InvariantError(FairfetchError):
    """An internal invariant of the dispatch state broke: a bug in fairfetch, never input."""


class DispatcherClosed(FairfetchError):
    """``put`` after ``close``."""


# --- keys ---------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _psl() -> tuple[PublicSuffixList, frozenset[str]]:
    """The one PSL instance (with private rules), and the private section's rules.

    The library does not say which section a suffix came from, so the private rules are read
    once from the same shipped file it parses.
    """
    private: set[str] = set()
    inside = False
    with open(PSLFILE, encoding="utf-8") as fh:
        for line in fh:
            text = line.strip()
            if text == "// ===BEGIN PRIVATE DOMAINS===":
                inside = True
            elif text == "// ===END PRIVATE DOMAINS===":
                inside = False
            elif inside and text and not text.startswith("//"):
                rule = text.split()[0].lower()
                private.add(rule)
                try:
                    private.add(rule.encode("idna").decode("ascii"))
                except UnicodeError:
                    pass
    return PublicSuffixList(), frozenset(private)


def host_of(url_or_host: str) -> str:
    """The lower-cased hostname of a URL (or of a bare host), without brackets or trailing dot."""
    if "/" in url_or_host:
        host = urlsplit(url_or_host).hostname or ""
    else:
        host = url_or_host.strip().lower()
        if host.startswith("["):
            host = host[1 : host.find("]")] if "]" in host else host[1:]
        elif host.count(":") == 1:  # host:port
            host = host.partition(":")[0]
    return host.rstrip(".")


@lru_cache(maxsize=65536)
def _domain_and_key(host: str) -> tuple[str, str]:
    if not host or ip_literal(host) is not None:
        return host, host
    psl, private = _psl()
    domain = psl.privatesuffix(host) or host
    suffix = psl.publicsuffix(host)
    if suffix and (suffix in private or ("*." + suffix.partition(".")[2]) in private):
        return domain, suffix
    return domain, domain


def registrable_domain(host: str) -> str:
    """The registrable domain of ``host`` (PSL, private section included, shipped offline).

    ``foo.blogspot.com`` → ``foo.blogspot.com`` (the PSL says so); ``a.b.example.co.uk`` →
    ``example.co.uk``; an IP address or a bare suffix is returned as it is.
    """
    return _domain_and_key(host_of(host))[0]


def politeness_key(url_or_host: str, backend: str | None = None) -> str:
    """The budget a request spends: ``backend`` if known, else the private-section suffix the
    host is under, else its registrable domain. Cached: this runs for every request."""
    if backend:
        return backend
    return _domain_and_key(host_of(url_or_host))[1]


class BackendGrouper:
    """Backends found by evidence: hosts that share an address and get throttled together.

    When hosts of at least ``min_domains`` different registrable domains, all resolving to one
    address, are throttled within ``window`` seconds, one server is rate-limiting all of them,
    so they share the key ``backend:addr:<address>``. Grouping is sticky (the evidence does not
    expire with the window) and a host keeps the first group it joined. Pure: the caller passes
    ``now``.
    """

    def __init__(self, *, window: float = 60.0, min_domains: int = 2) -> None:
        self.window = window
        self.min_domains = min_domains
        self._recent: dict[str, deque[tuple[float, str]]] = {}
        self._grouped: dict[str, str] = {}  # address -> key
        self._backend: dict[str, str] = {}  # host -> key

    def observe_throttle(self, host: str, address: str, now: float) -> str | None:
        """Record a throttle of ``host`` served from ``address``; returns the host's backend key
        if it now has one."""
        host = host_of(host)
        address = str(ipaddress.ip_address(address.strip("[]")))
        if host in self._backend:
            return self._backend[host]
        key = self._grouped.get(address)
        if key is not None:
            self._backend[host] = key
            return key
        recent = self._recent.setdefault(address, deque())
        recent.append((now, host))
        while recent and recent[0][0] < now - self.window:
            recent.popleft()
        domains = {registrable_domain(h) for _, h in recent}
        if len(domains) < self.min_domains:
            return None
        key = f"backend:addr:{address}"
        self._grouped[address] = key
        for _, h in recent:
            self._backend.setdefault(h, key)
        del self._recent[address]
        return self._backend[host]

    def backend_for(self, host: str) -> str | None:
        return self._backend.get(host_of(host))

    def groups(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for host, key in self._backend.items():
            out.setdefault(key, []).append(host)
        return {k: sorted(v) for k, v in out.items()}


# --- pure dispatch state -------------------------------------------------------------------------


@dataclass(frozen=True)
class Feedback:
    """What a handler tells the dispatcher about the request it made."""

    throttled: bool = False
    retry_after: float | None = None
    network_error: bool = False

    @classmethod
    def from_result(cls, result: FetchResult) -> Feedback:
        return cls(
            throttled=result.throttled,
            retry_after=result.retry_after if result.throttled else None,
            network_error=result.error_kind in NETWORK_ERROR_KINDS,
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
    A Retry-After also pauses the whole key until then.

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
        global_in_flight: int = 64,
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

    def set_gap(self, key: str, seconds: float | None) -> None:
        """An extra minimum gap for ``key`` (a robots.txt crawl-delay); None removes it."""
        self._key(key).extra_gap = max(0.0, seconds or 0.0)

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
        if feedback.throttled:
            k.throttles += 1
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
        except (TypeError, ValueError):
            raise ConfigError(f"key_overrides[{key!r}]: in_flight/gap must be numbers") from None
        if (cap_v is not None and cap_v < 1) or (gap_v is not None and gap_v < 0):
            raise ConfigError(f"key_overrides[{key!r}]: in_flight ≥ 1 and gap ≥ 0 required")
        out[key] = (cap_v, gap_v)
    return out


# --- async driver ------------------------------------------------------------------------------


class Dispatcher(Generic[T]):
    """Runs a handler over queued items under the politeness rules of :class:`PolitenessState`.

    ``put`` queues (waiting while ``max_pending`` items are queued); ``run`` starts handler calls
    as the rules allow and returns once ``close`` was called and all work is done. A handler
    should turn its own failures into Feedback; an exception escaping it is loud: no further
    work starts, in-flight calls finish, and ``run`` raises it.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_pending: int = 10_000,
    ) -> None:
        self.state: PolitenessState[T] = PolitenessState.from_settings(settings)
        self._clock = clock
        self._max_pending = max(1, max_pending)
        self._wake = asyncio.Event()
        self._space = asyncio.Event()
        self._closed = False

    async def put(self, url: str, item: T, *, key: str | None = None) -> None:
        while self.state.pending >= self._max_pending and not self._closed:
            self._space.clear()
            await self._space.wait()
        if self._closed:
            raise DispatcherClosed("put after close")
        host = host_of(url)
        self.state.push(key or politeness_key(host), host, item)
        self._wake.set()

    def close(self) -> None:
        self._closed = True
        self._wake.set()
        self._space.set()

    def set_gap(self, key: str, seconds: float | None) -> None:
        """Extra minimum gap between starts on ``key`` (e.g. robots.txt crawl-delay)."""
        self.state.set_gap(key, seconds)
        self._wake.set()

    def drop(self, key: str) -> list[T]:
        """Take ``key``'s queued items back (e.g. to reschedule a paused key's feeds)."""
        items = self.state.drop(key)
        self._space.set()
        self._wake.set()
        return items

    def wake(self) -> None:
        """Re-evaluate now (after an injected clock moved, or settings changed)."""
        self._wake.set()

    def snapshot(self) -> dict[str, KeyStats]:
        return self.state.snapshot()

    async def run(self, handler: Callable[[T], Awaitable[Feedback]]) -> None:
        tasks: set[asyncio.Task[None]] = set()
        errors: list[BaseException] = []
        state = self.state
        try:
            while True:
                self._wake.clear()
                now = self._clock()
                while not errors:
                    slot = state.pop_ready(now)
                    if slot is None:
                        break
                    task = asyncio.create_task(self._one(handler, slot, errors))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
                if state.pending < self._max_pending:
                    self._space.set()
                if errors:  # loud: start nothing more, let in-flight calls finish, raise
                    if tasks:
                        await asyncio.wait(set(tasks))
                    break
                if self._closed and state.idle:
                    break
                wake_at = state.wake_hint  # left by the pop_ready that returned None
                if wake_at is None:
                    await self._wake.wait()
                else:
                    try:
                        async with asyncio.timeout(max(0.0, wake_at - now)):
                            await self._wake.wait()
                    except TimeoutError:
                        pass
        finally:
            if tasks:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
        if errors:
            if len(errors) == 1:
                raise errors[0]
            raise BaseExceptionGroup("dispatcher handlers failed", errors)

    async def _one(
        self,
        handler: Callable[[T], Awaitable[Feedback]],
        slot: Slot[T],
        errors: list[BaseException],
    ) -> None:
        feedback = Feedback()
        try:
            result = await handler(slot.item)
            if isinstance(result, Feedback):
                feedback = result
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            errors.append(exc)
        finally:
            self.state.finish(slot, feedback, self._clock())
            self._wake.set()

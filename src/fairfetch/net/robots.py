"""robots.txt, cached per origin, parsed by protego, fetched through the Fetcher.

Fetching through the Fetcher means robots.txt obeys the perimeter, the caps and the User-Agent
like any other request. What an answer means follows Google's documented practice
(developers.google.com/search/docs/crawling-indexing/robots/robots_txt), which publishers
expect crawlers to share:

* 2xx — the rules (only the first ``max_bytes``, 500 KiB like Google, are read);
* 4xx except 429 — no robots.txt: everything is allowed (cached for ``ttl``);
* 429, 5xx, or unreachable (DNS, connect, timeout, TLS, perimeter) — the site cannot tell us,
  so we assume the worst, briefly: disallow everything for ``error_ttl``, then ask again. If
  a good answer fetched within ``stale_for`` exists (rules, or the "no rules" of a 4xx) it
  keeps applying instead, as Google keeps its cached copy (RFC 9309 §2.3.1.4 allows both).
  Our choice of a short ``error_ttl`` (30 min, where Google waits 12 h) matches feed
  intervals: a feed is not skipped for half a day over one failed robots fetch.
  A 2xx whose body cannot be decoded (a gzip stream cut short or corrupt, a coding we never
  asked for) counts as a 5xx: no rules were read, so none can be assumed absent.
  A refusal because robots.txt answered 5xx is of kind ``robots_unreachable``, not ``robots``:
  the publisher did not forbid anything, its server failed on another URL than the feed, and
  the health decision must not count it as the feed's failure (see ``crawl/health.py``). A
  refusal because the origin could not be reached at all keeps the network kind (``dns``,
  ``connect``, ``timeout``…): the feed lives on that origin, and the outage detector needs it.
* too many redirects — treated as 4xx (allow), as Google does; so is a redirect we will not
  follow (not http(s), or into an address the perimeter refuses: the hop is not made).

A :class:`RobotsBacking` (the crawler gives one over its store) keeps the answers that stand for
a day between processes, so a cron-style ``crawl --once`` does not ask every host for robots.txt
again each run: the first time a process meets an origin it asks the backing before the network.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

from protego import Protego
from yarl import URL

from fairfetch.net.retry_after import MAX_RETRY_AFTER, MIN_RETRY_AFTER

if TYPE_CHECKING:
    from fairfetch.net.fetch import Fetcher
    from fairfetch.net.outcome import FetchResult

__all__ = [
    "RobotsBacking",
    "RobotsCache",
    "RobotsCopy",
    "RobotsRules",
    "RobotsVerdict",
    "agent_token",
]

log = logging.getLogger("fairfetch.robots")

#: The longest Crawl-delay honoured (a day, the Retry-After clamp).
MAX_CRAWL_DELAY = MAX_RETRY_AFTER

#: The states worth keeping between processes: they stand for ``ttl``. Throttled and
#: unreachable are passing states; the last good copy stands in for them.
LASTING_STATES = ("parsed", "allow_all")


def agent_token(user_agent: str) -> str:
    """The product token robots.txt groups are matched against: ``fairfetch/0.1 (+…)`` →
    ``fairfetch``."""
    return user_agent.split("/", 1)[0].split()[0] if user_agent.strip() else "*"


@dataclass(frozen=True)
class RobotsVerdict:
    allowed: bool
    kind: str | None = None
    """When refused: ``robots``, or the network kind that kept robots.txt out of reach."""
    detail: str = ""
    crawl_delay: float | None = None
    retry_after: float | None = None
    """When robots.txt itself was throttled (``kind == "throttled"``): the server's delay."""


@dataclass(frozen=True)
class RobotsRules:
    origin: str
    state: str
    """``parsed``, ``allow_all`` or ``disallow_all``."""
    fetched_at: float
    expires_at: float
    status: int | None = None
    error_kind: str | None = None
    detail: str = ""
    parser: Protego | None = None
    parsed_at: float | None = None
    """When the good answer these rules stand for (the rules in ``parser``, or the "no rules"
    of a 4xx) was fetched: older than fetched_at when a stale copy stands in for an
    unreachable robots.txt; None when there is no good answer (throttled, disallow_all)."""
    retry_after: float | None = None
    """Set when robots.txt answered a throttle (429, 503 + Retry-After)."""
    last_good: str | None = None
    """On a ``disallow_all`` of an unreachable robots.txt: the last good answer, however old
    (``parsed`` — its rules in ``last_good_parser`` — or ``allow_all``); None if there was none.
    RFC 9309 §2.3.1.4 lets a crawler keep using a cached copy once robots.txt has been
    unreachable for long; the crawler asks it (:meth:`last_good_allows`) before reading a feed
    as if robots.txt were absent."""
    last_good_parser: Protego | None = None

    def last_good_allows(self, url: str, agent: str) -> bool | None:
        """What the last good answer says about ``url`` (None: no good answer is known)."""
        state, parser = self.last_good, self.last_good_parser
        if state is None and self.parsed_at is not None and self.state in LASTING_STATES:
            state, parser = self.state, self.parser  # these rules are a good answer themselves
        if state is None:
            return None
        if state == "allow_all" or parser is None:
            return True
        return bool(parser.can_fetch(url, agent))

    def can_fetch(self, url: str, agent: str) -> bool:
        if self.state == "allow_all":
            return True
        if self.state == "disallow_all" or self.parser is None:
            return False
        return bool(self.parser.can_fetch(url, agent))

    def crawl_delay(self, agent: str) -> float | None:
        """The publisher's Crawl-delay, honoured up to a day like a Retry-After: the number goes
        into the politeness key's gap, and an absurd one (``1e300``) must neither crash the
        scheduling nor push the key's feeds out of the directory for centuries."""
        if self.parser is None:
            return None
        delay = self.parser.crawl_delay(agent)
        if delay is None:
            return None
        seconds = float(delay)
        if math.isnan(seconds):
            return None
        return min(MAX_CRAWL_DELAY, max(0.0, seconds))


@dataclass(frozen=True)
class RobotsCopy:
    """A lasting robots.txt answer in wall-clock time, as a store keeps it."""

    origin: str
    state: str
    """``parsed`` or ``allow_all``."""
    status: int | None
    body: str | None
    """The rules' text for ``parsed``; None for ``allow_all``."""
    fetched_at: float
    """Unix time of the fetch."""


class RobotsBacking(Protocol):
    """Where copies outlive the process. ``save`` must not block: queue, write later."""

    async def load(self, origin: str) -> RobotsCopy | None: ...

    def save(self, copy: RobotsCopy) -> None: ...


def _robots_text(body: bytes) -> str:
    """robots.txt is UTF-8; a byte order mark is dropped, as Google does (kept, it glues itself
    to the first ``User-agent`` line and protego drops that whole group)."""
    return body.decode("utf-8-sig", errors="replace")


def _retrieve(task: asyncio.Future[RobotsRules]) -> None:
    """Mark a shared fetch's exception as seen: the askers re-raise it themselves, and when
    none is left asyncio would otherwise log "exception was never retrieved"."""
    if not task.cancelled():
        task.exception()


#: Failures that cut a robots.txt answer off: a 2xx with one of these is no answer at all.
_CUT_OFF = frozenset({"dns", "connect", "timeout", "tls"})


class RobotsCache:
    """Per-origin robots.txt rules with a TTL; concurrent asks for one origin share one fetch."""

    def __init__(
        self,
        fetcher: Fetcher | None = None,
        *,
        user_agent: str | None = None,
        ttl: float = 24 * 3600.0,
        error_ttl: float = 30 * 60.0,
        stale_for: float = 30 * 24 * 3600.0,
        max_bytes: int = 500 * 1024,
        max_entries: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        backing: RobotsBacking | None = None,
    ) -> None:
        self.fetcher = fetcher
        self._agent = agent_token(user_agent) if user_agent else None
        self.ttl = ttl
        self.error_ttl = error_ttl
        self.stale_for = stale_for
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self._clock = clock
        self._wall = wall
        self.backing = backing
        self._cache: OrderedDict[str, RobotsRules] = OrderedDict()
        self._pending: dict[str, asyncio.Future[RobotsRules]] = {}

    def bind(self, fetcher: Fetcher) -> None:
        self.fetcher = fetcher

    def back_with(self, backing: RobotsBacking) -> None:
        self.backing = backing

    @property
    def agent(self) -> str:
        if self._agent is None:
            self._agent = agent_token(self.fetcher.settings.user_agent) if self.fetcher else "*"
        return self._agent

    @staticmethod
    def origin(url: str) -> str:
        return str(URL(url).origin())

    def cached(self, url: str) -> RobotsRules | None:
        return self._cache.get(self.origin(url))

    def holds(self, origin: str) -> bool:
        """Whether this process has rules for ``origin`` (fresh or not)."""
        return origin in self._cache

    def invalidate(self, url: str | None = None) -> None:
        if url is None:
            self._cache.clear()
        else:
            self._cache.pop(self.origin(url), None)

    async def rules(self, url: str) -> RobotsRules:
        origin = self.origin(url)
        now = self._clock()
        found = self._cache.get(origin)
        if found is not None and found.expires_at > now:
            self._cache.move_to_end(origin)
            return found
        pending = self._pending.get(origin)
        if pending is None:
            # The fetch runs in a task of its own, not in the first asker's: that asker may be
            # cancelled (its total-time cap, a shutdown) while others wait on the same answer.
            # The robots.txt fetch has its own time cap, so the task always ends.
            pending = asyncio.ensure_future(self._load_and_keep(origin, found))
            pending.add_done_callback(_retrieve)
            self._pending[origin] = pending
        return await asyncio.shield(pending)

    def cancel_pending(self) -> None:
        """Stop the shared fetches still running (the fetcher is closing)."""
        for task in list(self._pending.values()):
            task.cancel()

    async def _load_and_keep(self, origin: str, found: RobotsRules | None) -> RobotsRules:
        try:
            rules = await self._load(origin, found)
        finally:
            self._pending.pop(origin, None)
        self._cache[origin] = rules
        self._cache.move_to_end(origin)
        while len(self._cache) > self.max_entries:
            self._cache.popitem(last=False)
        return rules

    async def check(self, url: str) -> RobotsVerdict:
        rules = await self.rules(url)
        agent = self.agent
        delay = rules.crawl_delay(agent)
        if rules.can_fetch(url, agent):
            return RobotsVerdict(True, crawl_delay=delay)
        if rules.state == "throttled":
            # The site asked us to slow down: a schedule instruction, never the feed's failure.
            # What is left of the server's delay, not the whole of it again.
            left = max(MIN_RETRY_AFTER, rules.expires_at - self._clock())
            return RobotsVerdict(False, "throttled", rules.detail, delay, left)
        if rules.state == "disallow_all":
            return RobotsVerdict(False, rules.error_kind or "robots", rules.detail, delay)
        return RobotsVerdict(False, "robots", f"disallowed by {rules.origin}/robots.txt", delay)

    def last_good_allows(self, url: str) -> bool | None:
        """Whether the last good robots.txt answer held for ``url``'s origin (no fetch) allows
        it, however old; None when this process knows no good answer for it."""
        rules = self.cached(url)
        return rules.last_good_allows(url, self.agent) if rules is not None else None

    def known_crawl_delay(self, url: str) -> float | None:
        """The crawl-delay for ``url``'s origin if its robots.txt is cached (no fetch): the
        crawler hands it to ``Dispatcher.set_gap`` for the URL's politeness key."""
        rules = self.cached(url)
        return rules.crawl_delay(self.agent) if rules is not None else None

    async def allowed(self, url: str) -> bool:
        return (await self.check(url)).allowed

    async def crawl_delay(self, url: str) -> float | None:
        return (await self.rules(url)).crawl_delay(self.agent)

    async def _load(self, origin: str, previous: RobotsRules | None) -> RobotsRules:
        if self.fetcher is None:
            raise RuntimeError("RobotsCache has no fetcher: pass one or bind() it")
        if previous is None and self.backing is not None:
            # First sight of this origin in this process: a copy from an earlier run may
            # still stand (or stand in, if robots.txt is unreachable now).
            try:
                copy = await self.backing.load(origin)
            except Exception:  # the store is a cache here: never fail a fetch over it
                log.warning("reading the stored robots.txt of %s failed", origin, exc_info=True)
                copy = None
            if copy is not None:
                restored = self.restore(copy)
                if restored.expires_at > self._clock():
                    return restored
                previous = restored
        result = await self.fetcher.fetch(
            origin + "/robots.txt", max_bytes=self.max_bytes, check_robots=False
        )
        rules = self.interpret(origin, result, self._clock(), previous)
        if self.backing is not None and rules.state in LASTING_STATES and rules.error_kind is None:
            body = _robots_text(result.body[: self.max_bytes]) if rules.state == "parsed" else None
            self.backing.save(RobotsCopy(origin, rules.state, rules.status, body, self._wall()))
        return rules

    def restore(self, copy: RobotsCopy) -> RobotsRules:
        """The rules a stored copy stands for, on this process's clocks (no I/O)."""
        age = max(0.0, self._wall() - copy.fetched_at)
        fetched = self._clock() - age
        text = (copy.body or "").lstrip("\ufeff")  # copies kept before the BOM was dropped
        parser = Protego.parse(text) if copy.state == "parsed" else None
        when = datetime.fromtimestamp(copy.fetched_at, UTC).isoformat(timespec="seconds")
        return RobotsRules(
            copy.origin,
            "parsed" if parser is not None else "allow_all",
            fetched,
            fetched + self.ttl,
            copy.status,
            detail=f"stored copy fetched {when}",
            parser=parser,
            parsed_at=fetched,
        )

    def interpret(
        self, origin: str, result: FetchResult, now: float, previous: RobotsRules | None = None
    ) -> RobotsRules:
        """The rules a robots.txt fetch result stands for (pure; see the module docstring)."""
        status = result.status
        parsed_ok = (
            status is not None
            and 200 <= status < 300
            and (result.error_kind in (None, "too_large"))
        )
        if parsed_ok:
            text = _robots_text(result.body)
            return RobotsRules(
                origin,
                "parsed",
                now,
                now + self.ttl,
                status,
                parser=Protego.parse(text),
                parsed_at=now,
            )
        if status is not None and 400 <= status < 500 and status != 429:
            return RobotsRules(
                origin,
                "allow_all",
                now,
                now + self.ttl,
                status,
                detail=f"robots.txt answered {status}: no rules",
                parsed_at=now,
            )
        if result.error_kind == "redirect" or (result.error_kind == "perimeter" and result.hops):
            # A redirect we will not follow (past the cap, a loop, not http(s), or into an
            # address the perimeter refuses): robots.txt is unavailable to us, as a 4xx. A
            # refused *origin* is no redirect: that stays the feed's perimeter failure.
            return RobotsRules(
                origin,
                "allow_all",
                now,
                now + self.ttl,
                status,
                detail=f"robots.txt redirect not followed ({result.error_kind}: "
                f"{result.error_detail}): no rules",
                parsed_at=now,
            )
        # A 2xx whose body could not be decoded (a gzip stream cut short, a coding we never
        # asked for): the server failed on robots.txt, as with a 5xx, below — not "no rules".
        unreadable = (
            status is not None
            and 200 <= status < 300
            and result.error_kind not in _CUT_OFF
        )
        if (
            status is not None
            and result.error_kind not in _CUT_OFF
            and not (status == 429 or status >= 500)
            and not unreadable
        ):
            # 1xx/3xx as a final answer: nothing usable, nothing forbidding. (A 2xx whose body
            # could not be read — timeout, reset — is unreachable, below: not "no rules".)
            return RobotsRules(origin, "allow_all", now, now + self.ttl, status, parsed_at=now)
        standing = (
            previous is not None
            and previous.parsed_at is not None
            and now - previous.parsed_at <= self.stale_for
        )
        # The last good answer, however old, carried through failed answers (see last_good).
        last_good, last_parser = None, None
        if previous is not None:
            if previous.last_good is not None:
                last_good, last_parser = previous.last_good, previous.last_good_parser
            elif previous.parsed_at is not None and previous.state in LASTING_STATES:
                last_good, last_parser = previous.state, previous.parser
        if result.throttled and result.retry_after is not None and not standing:
            # 429 / 503 + Retry-After on robots.txt: the host is throttling us. Remember it
            # until the Retry-After, and let the caller treat the request as throttled.
            return RobotsRules(
                origin,
                "throttled",
                now,
                now + result.retry_after,
                status,
                "throttled",
                f"robots.txt answered {status} (Retry-After {result.retry_after:.0f} s)",
                retry_after=result.retry_after,
                last_good=last_good,
                last_good_parser=last_parser,
            )
        # 429, 5xx or unreachable: the site cannot tell us; assume the worst, briefly.
        if status is not None and (status == 429 or status >= 500):
            kind = "robots_unreachable"
            why = f"robots.txt answered {status}"
        elif unreadable:
            kind = "robots_unreachable"
            why = f"robots.txt answered {status}, its body unreadable ({result.error_detail})"
        else:
            # Nothing usable came back (no answer, or a 2xx body cut off by a timeout/reset).
            # The network kind says the feed's own host is out of reach (the outage detector
            # and the feed's health count it); when the origin answered with a redirect and
            # another host failed, the publisher's server failed on another URL: as for a 5xx.
            kind = result.error_kind or "robots_unreachable"
            if result.hops and URL(result.final_url).raw_host != URL(origin).raw_host:
                kind = "robots_unreachable"
            why = f"robots.txt unreachable ({result.error_kind}: {result.error_detail})"
        if standing and previous is not None and previous.parser is None:
            return RobotsRules(
                origin,
                "allow_all",
                now,
                now + self.error_ttl,
                status,
                kind,
                why + "; using the last good answer (no rules)",
                parsed_at=previous.parsed_at,
            )
        if standing and previous is not None:
            return RobotsRules(
                origin,
                "parsed",
                now,
                now + self.error_ttl,
                status,
                kind,
                why + "; using the last good copy",
                previous.parser,
                previous.parsed_at,
            )
        return RobotsRules(
            origin,
            "disallow_all",
            now,
            now + self.error_ttl,
            status,
            kind,
            why + "; disallowing for now",
            last_good=last_good,
            last_good_parser=last_parser,
        )

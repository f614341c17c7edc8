"""The crawler's :class:`~fairfetch.net.robots.RobotsBacking`: robots.txt copies in the store.

The crawler prefetches the copies of a page of due feeds in one query (:meth:`prefetch`); an
origin it did not prefetch is a point read off the event loop. Saves queue up and are written by
the crawler's one writer between its batches, so a crawl adds no transaction per host. A copy
lost to a crash only costs one robots.txt request next run.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta

from fairfetch.errors import FairfetchError
from fairfetch.net.robots import RobotsCopy
from fairfetch.store import SqlStore
from fairfetch.store.robots_repo import (
    load_robots,
    load_robots_many,
    prune_robots,
    save_robots,
)

__all__ = ["StoreRobotsBacking"]

log = logging.getLogger("fairfetch.crawl")

#: Prefetched copies held at most (a page of due feeds is a few hundred origins).
_MAX_KNOWN = 20_000


class StoreRobotsBacking:
    def __init__(
        self,
        store: SqlStore,
        *,
        # A year, not the 30 days a copy stands in for: past those, a copy is still the last
        # good answer, which the crawler keeps obeying while robots.txt stays unreachable
        # (RFC 9309 §2.3.1.4); forgetting it would lift the publisher's last known rules.
        keep_for: float = 365 * 24 * 3600.0,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.store = store
        self.keep_for = keep_for
        self.clock = clock
        self.pending: list[RobotsCopy] = []
        self._pruned = False
        #: Prefetched answers not asked for yet (None: known to be absent).
        self._known: dict[str, RobotsCopy | None] = {}

    async def prefetch(self, origins: Iterable[str]) -> None:
        """Read these origins' copies in one go, ahead of the fetches that will ask."""
        wanted = [o for o in set(origins) if o not in self._known]
        if not wanted or len(self._known) > _MAX_KNOWN:
            return
        try:
            found = await asyncio.to_thread(load_robots_many, self.store, wanted)
        except Exception as exc:  # a cache: the point reads will try again
            _warn(exc, f"reading {len(wanted)} stored robots.txt copies failed")
            return
        for origin in wanted:
            self._known[origin] = found.get(origin)

    async def load(self, origin: str) -> RobotsCopy | None:
        if origin in self._known:
            return self._known.pop(origin)
        return await asyncio.to_thread(load_robots, self.store, origin)

    def save(self, copy: RobotsCopy) -> None:
        self.pending.append(copy)

    async def flush(self) -> int:
        """Write the queued copies (and, with the first, forget copies past ``keep_for``)."""
        copies, self.pending = self.pending, []
        if not copies:
            return 0
        prune = not self._pruned
        self._pruned = True

        def work() -> int:
            saved = save_robots(self.store, copies)
            if prune:
                prune_robots(self.store, self.clock() - timedelta(seconds=self.keep_for))
            return saved

        try:
            return await asyncio.to_thread(work)
        except Exception as exc:  # a cache: losing it costs requests, not data
            _warn(exc, f"saving {len(copies)} robots.txt copies failed")
            return 0


def _warn(exc: Exception, what: str) -> None:
    """A refusal of the database (StoreError) is one line, its traceback for a debug log; any
    other exception is a bug of ours and keeps its traceback."""
    if isinstance(exc, FairfetchError):
        log.warning("%s: %s", what, exc)
        log.debug("the refused robots.txt cache access", exc_info=exc)
    else:
        log.warning("%s", what, exc_info=exc)

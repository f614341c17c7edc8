"""The crawler's :class:`~fairfetch.net.robots.RobotsBacking`: robots.txt copies in the store.

Loads are point reads off the event loop; saves queue up and are written by the crawler's one
writer between its batches, so a crawl adds no transaction per host. A copy lost to a crash only
costs one robots.txt request next run.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

from fairfetch.net.robots import RobotsCopy
from fairfetch.store import SqlStore
from fairfetch.store.robots_repo import load_robots, prune_robots, save_robots

__all__ = ["StoreRobotsBacking"]

log = logging.getLogger("fairfetch.crawl")


class StoreRobotsBacking:
    def __init__(self, store: SqlStore, *, keep_for: float = 30 * 24 * 3600.0) -> None:
        self.store = store
        self.keep_for = keep_for
        self.pending: list[RobotsCopy] = []
        self._pruned = False

    async def load(self, origin: str) -> RobotsCopy | None:
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
            saved = save_robots(self.store, copies) if copies else 0
            if prune:
                prune_robots(self.store, datetime.now(UTC) - timedelta(seconds=self.keep_for))
            return saved

        try:
            return await asyncio.to_thread(work)
        except Exception:  # a cache: losing it costs requests, not data
            log.warning("saving %d robots.txt copies failed", len(copies), exc_info=True)
            return 0

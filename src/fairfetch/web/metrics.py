"""Prometheus metrics at /metrics.

The crawler writes a row per fetch; the counters here follow that table from where it stood when
the app started (a counter that starts at zero with the process is what Prometheus expects), so
the numbers are the same whether the crawler runs in this process (``run``) or another. Gauges
(queue depth, in flight per key) are read at scrape time.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from datetime import datetime
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from fairfetch.config import Settings
from fairfetch.store import directory_repo as repo
from fairfetch.store.sql import SqlStore

#: Latency buckets (seconds) around what feed fetches take: most well under a second, the
#: total-time cap at a minute.
_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

log = logging.getLogger(__name__)

#: How long a crawl row may take to commit after taking its id (one write batch's
#: transaction, seconds at most): until then a smaller id may still appear (PostgreSQL).
SETTLE_SECONDS = 300.0


def key_snapshot(crawler: Any) -> dict[str, Any]:
    """Per politeness key state from the running crawler's dispatcher, or {} without one."""
    if crawler is None:
        return {}
    try:
        return dict(crawler.snapshot())
    except Exception:  # metrics must never break the page: report no keys rather than a 500,
        # but loudly: silence here would read as "nothing in flight"
        log.exception("crawler snapshot failed; /metrics shows no per-key gauges")
        return {}


class DirectoryMetrics:
    def __init__(
        self, store: SqlStore, settings: Settings, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.store = store
        self._clock = clock
        self.settings = settings
        self.registry = CollectorRegistry(auto_describe=True)
        self.crawls = Counter(
            "fairfetch_crawls",
            "Crawls recorded since this process started, by outcome and error kind",
            ["outcome", "error_kind"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "fairfetch_fetch_duration_seconds",
            "Duration of recorded fetches",
            buckets=_BUCKETS,
            registry=self.registry,
        )
        self.queue = Gauge(
            "fairfetch_queue_depth", "Feeds due for a crawl now", registry=self.registry
        )
        self.in_flight = Gauge(
            "fairfetch_in_flight",
            "Requests in flight per politeness key (this process's crawler)",
            ["key"],
            registry=self.registry,
        )
        self.key_queued = Gauge(
            "fairfetch_key_queued",
            "Requests waiting per politeness key (this process's crawler)",
            ["key"],
            registry=self.registry,
        )
        #: Every crawl row with an id up to the floor is counted or will never appear.
        self._floor: int | None = None
        #: Ids above the floor already counted (they are read again until the floor passes).
        self._counted: set[int] = set()
        #: (clock, highest id seen then), for moving the floor once those ids are final.
        self._marks: deque[tuple[float, int]] = deque()
        # SQLite has one writer at a time: ids become visible in id order. PostgreSQL takes an
        # id from a sequence at insert and commits in any order: a smaller id can show up
        # after a larger one, so the rows above the floor are read again for a while.
        self._in_order = store.dialect == "sqlite"
        self._lock = threading.Lock()

    def start(self) -> None:
        """Remember where the crawls table stands; later rows are counted."""
        with self._lock:
            if self._floor is None:
                self._floor = repo.max_crawl_id(self.store)

    def _count_new_crawls(self) -> None:
        assert self._floor is not None
        after = top = self._floor
        while True:
            rows = repo.crawls_after(self.store, after)
            for row_id, outcome, error_kind, duration in rows:
                after = top = row_id
                if row_id in self._counted:
                    continue
                self._counted.add(row_id)
                self.crawls.labels(outcome, error_kind or "").inc()
                if outcome != "skipped":
                    self.latency.observe(duration)
            if len(rows) < 50_000:
                break
        if self._in_order:
            self._floor = top
        else:
            # An id below the highest seen at time T was taken before T; its transaction has
            # committed (or rolled back) SETTLE_SECONDS later.
            now = self._clock()
            self._marks.append((now, top))
            while self._marks and self._marks[0][0] <= now - SETTLE_SECONDS:
                self._floor = max(self._floor, self._marks.popleft()[1])
        floor = self._floor
        self._counted = {i for i in self._counted if i > floor}

    def collect(self, now: datetime, crawler: Any = None) -> bytes:
        self.start()
        with self._lock:
            self._count_new_crawls()
            self.queue.set(
                repo.count_due(
                    self.store, now, dead_probe_interval=self.settings.dead_probe_interval
                )
            )
            self.in_flight.clear()
            self.key_queued.clear()
            for key, stats in key_snapshot(crawler).items():
                self.in_flight.labels(key).set(getattr(stats, "in_flight", 0))
                self.key_queued.labels(key).set(getattr(stats, "queued", 0))
            return generate_latest(self.registry)

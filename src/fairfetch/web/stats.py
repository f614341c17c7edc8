"""/crawlstats: crawls by outcome, throttles by politeness key, the queue, troubled feeds.

The crawls table grows by one row per fetch (millions a day on a big directory), so aggregating
a day of it on every page view would make the page slow exactly when the crawler is busiest.
Instead the per-minute counts of minutes that can no longer change are cached in the process,
and only the most recent minutes are read again on each view. A crawl row is written within
seconds of its ``at`` (fetches are capped at a minute), so minutes older than ``SETTLE`` are final.
The page only reads: it never takes a lock the crawler waits on (SQLite WAL; PostgreSQL MVCC).
"""

from __future__ import annotations

import heapq
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from fairfetch.config import Settings
from fairfetch.store import directory_repo as repo
from fairfetch.store.sql import SqlStore
from fairfetch.web.chart import series_of

#: Minutes older than this are final and cached.
SETTLE = timedelta(minutes=10)
DAY = timedelta(days=1)
HOUR = timedelta(hours=1)


def floor_minute(t: datetime) -> datetime:
    return t.astimezone(UTC).replace(second=0, microsecond=0)


def outcome_label(outcome: str, error_kind: str | None) -> str:
    """``ok``, ``not_modified``, ``throttled``, ``error:dns`` …: one label per bucket."""
    return f"error:{error_kind}" if outcome == "error" and error_kind else outcome


@dataclass
class _Minute:
    counts: Counter[str] = field(default_factory=Counter)
    bytes: int = 0
    throttles: Counter[str] = field(default_factory=Counter)


@dataclass
class _Totals:
    counts: Counter[str] = field(default_factory=Counter)
    bytes: int = 0
    throttles: Counter[str] = field(default_factory=Counter)

    _top: list[tuple[str, int]] | None = None

    def add(self, slot: _Minute | _Totals) -> None:
        self.counts.update(slot.counts)
        self.throttles.update(slot.throttles)
        self.bytes += slot.bytes
        self._top = None

    def top_throttles(self, n: int) -> list[tuple[str, int]]:
        if self._top is None or len(self._top) < min(n, len(self.throttles)):
            self._top = _top(self.throttles, n)
        return self._top[:n]


class MinuteCache:
    """Per-minute crawl counts for the last day; settled minutes are read once.

    The totals of the settled minutes of a window are kept too (they change once a minute, when
    a minute settles or leaves the day), so a view only adds the few fresh minutes to them.
    """

    def __init__(self) -> None:
        self._settled: dict[datetime, _Minute] = {}
        self._settled_until: datetime | None = None
        self._totals: dict[tuple[datetime, datetime], _Totals] = {}
        self._lock = threading.Lock()

    def _refresh(self, store: SqlStore, now: datetime) -> datetime:
        start = floor_minute(now - DAY)
        edge = floor_minute(now - SETTLE)
        if self._settled_until is None or self._settled_until < start:
            self._settled = {}
            self._settled_until = start
            self._totals = {}
        if self._settled_until < edge:
            _fill(self._settled, store, self._settled_until, edge)
            self._settled_until = edge
            self._totals = {}
        for m in [m for m in self._settled if m < start]:
            del self._settled[m]
            self._totals = {}
        return self._settled_until

    def minutes(self, store: SqlStore, now: datetime) -> dict[datetime, _Minute]:
        """Every minute of the day before ``now`` that had crawls (settled ones from cache)."""
        with self._lock:
            settled_until = self._refresh(store, now)
            out = dict(self._settled)
        fresh: dict[datetime, _Minute] = {}
        _fill(fresh, store, settled_until, floor_minute(now) + timedelta(minutes=1))
        out.update(fresh)
        return out

    def view(self, store: SqlStore, now: datetime) -> tuple[dict[datetime, _Minute], Any]:
        """(all minutes, window totals function) for one page view."""
        with self._lock:
            settled_until = self._refresh(store, now)
            settled = dict(self._settled)
        fresh: dict[datetime, _Minute] = {}
        _fill(fresh, store, settled_until, floor_minute(now) + timedelta(minutes=1))

        def window(since: datetime) -> dict[str, Any]:
            """Crawls at ``since`` or later: whole minutes from the cache, and the rows of the
            minute ``since`` falls inside read to the second, so the window is exactly as
            long as it says (the CLI's ``stats`` counts the same rows)."""
            first = floor_minute(since)
            if first < since:
                first += timedelta(minutes=1)
            with self._lock:
                # keyed by the settled boundary too: a view never mixes another view's minutes
                base = self._totals.get((first, settled_until))
                if base is None:
                    base = _Totals()
                    for m, slot in settled.items():
                        if m >= first:
                            base.add(slot)
                    self._totals[(first, settled_until)] = base
            recent = _Totals()
            for m, slot in fresh.items():
                if m >= first:
                    recent.add(slot)
            if since < first:
                partial: dict[datetime, _Minute] = {}
                _fill(partial, store, since, first)
                for slot in partial.values():
                    recent.add(slot)
            return _window(base, recent)

        return {**settled, **fresh}, window


def _fill(into: dict[datetime, _Minute], store: SqlStore, since: datetime, until: datetime) -> None:
    for mc in repo.crawl_minutes(store, since, until):
        slot = into.setdefault(mc.minute, _Minute())
        slot.counts[outcome_label(mc.outcome, mc.error_kind)] += mc.count
        slot.bytes += mc.bytes
    for minute, key, n in repo.throttle_minutes(store, since, until):
        into.setdefault(minute, _Minute()).throttles[key or "(none)"] += n


def _window(base: _Totals, recent: _Totals, top: int = 25) -> dict[str, Any]:
    """A window's figures: the settled minutes' totals plus the fresh minutes.

    The busiest keys are found without merging the settled counter (one entry per throttled
    key of the day): a key absent from the fresh minutes keeps its settled count, so the top
    keys are among the settled top ones and the fresh ones.
    """
    counts = base.counts + recent.counts
    candidates = {k for k, _n in base.top_throttles(top)} | set(recent.throttles)
    merged = {k: base.throttles.get(k, 0) + recent.throttles.get(k, 0) for k in candidates}
    return {
        "crawls": dict(sorted(counts.items())),
        "total": sum(counts.values()),
        "bytes": base.bytes + recent.bytes,
        "throttles_by_key": [{"key": k, "throttles": n} for k, n in _top(merged, top)],
    }


def _top(counter: Mapping[str, int], n: int) -> list[tuple[str, int]]:
    return heapq.nsmallest(n, counter.items(), key=lambda kv: (-kv[1], kv[0]))


def chart_minutes(
    minutes: dict[datetime, _Minute], now: datetime, span: int = 60
) -> list[tuple[datetime, dict[str, int]]]:
    """The last ``span`` minutes (current one included), each with counts per chart series."""
    end = floor_minute(now)
    out = []
    for i in range(span - 1, -1, -1):
        m = end - timedelta(minutes=i)
        series: Counter[str] = Counter()
        slot = minutes.get(m)
        if slot is not None:
            for label, n in slot.counts.items():
                series[series_of(label)] += n
        out.append((m, dict(series)))
    return out


def _websub_stats() -> Callable[[SqlStore, datetime], dict[str, Any]] | None:
    """The WebSub job's ping counters, when that job is installed (it owns the function)."""
    try:
        from fairfetch.websub.status import websub_stats
    except ImportError:
        return None
    return websub_stats


def crawlstats(
    store: SqlStore, settings: Settings, cache: MinuteCache, now: datetime
) -> dict[str, Any]:
    minutes, window = cache.view(store, now)
    out: dict[str, Any] = {
        "generated_at": now,
        "last_hour": window(now - HOUR),
        "last_day": window(now - DAY),
        "queue": repo.queue_stats(store, now, dead_probe_interval=settings.dead_probe_interval),
        "feeds": {"by_status": repo.status_counts(store)},
        "troubled_feeds": repo.troubled_feeds(store, limit=20),
        "per_minute": [{"minute": m, "counts": c} for m, c in chart_minutes(minutes, now)],
        "websub": None,
    }
    out["feeds"]["total"] = sum(out["feeds"]["by_status"].values())
    ws = _websub_stats()
    if ws is not None:
        try:
            out["websub"] = {"last_hour": ws(store, now - HOUR), "last_day": ws(store, now - DAY)}
        except Exception as exc:  # another job's bug must not take the page down; say so
            out["websub"] = {"error": f"{type(exc).__name__}: {exc}"}
    return out

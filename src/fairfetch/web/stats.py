"""/crawlstats: crawls by outcome, throttles by politeness key, the queue, troubled feeds.

The crawls table grows by one row per fetch (millions a day on a big directory), so aggregating
a day of it on every page view would make the page slow exactly when the crawler is busiest.
Instead the per-minute counts of minutes that can no longer change are cached in the process,
and only the most recent minutes are read again on each view. A crawl row is written within
seconds of its ``at`` (fetches are capped at a minute), so minutes older than ``SETTLE`` are final.
The page only reads: it never takes a lock the crawler waits on (SQLite WAL; PostgreSQL MVCC).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
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


class MinuteCache:
    """Per-minute crawl counts for the last day; settled minutes are read once."""

    def __init__(self) -> None:
        self._settled: dict[datetime, _Minute] = {}
        self._settled_until: datetime | None = None
        self._lock = threading.Lock()

    def minutes(self, store: SqlStore, now: datetime) -> dict[datetime, _Minute]:
        """Every minute of the day before ``now`` that had crawls (settled ones from cache)."""
        start = floor_minute(now - DAY)
        edge = floor_minute(now - SETTLE)
        with self._lock:
            if self._settled_until is None or self._settled_until < start:
                self._settled = {}
                self._settled_until = start
            if self._settled_until < edge:
                _fill(self._settled, store, self._settled_until, edge)
                self._settled_until = edge
            for m in [m for m in self._settled if m < start]:
                del self._settled[m]
            settled_until = self._settled_until
            out = dict(self._settled)
        fresh: dict[datetime, _Minute] = {}
        _fill(fresh, store, settled_until, floor_minute(now) + timedelta(minutes=1))
        out.update(fresh)
        return out


def _fill(into: dict[datetime, _Minute], store: SqlStore, since: datetime, until: datetime) -> None:
    for mc in repo.crawl_minutes(store, since, until):
        slot = into.setdefault(mc.minute, _Minute())
        slot.counts[outcome_label(mc.outcome, mc.error_kind)] += mc.count
        slot.bytes += mc.bytes
    for minute, key, n in repo.throttle_minutes(store, since, until):
        into.setdefault(minute, _Minute()).throttles[key or "(none)"] += n


def _window(minutes: dict[datetime, _Minute], since: datetime) -> dict[str, Any]:
    counts: Counter[str] = Counter()
    throttles: Counter[str] = Counter()
    nbytes = 0
    for m, slot in minutes.items():
        if m >= since:
            counts.update(slot.counts)
            throttles.update(slot.throttles)
            nbytes += slot.bytes
    return {
        "crawls": dict(sorted(counts.items())),
        "total": sum(counts.values()),
        "bytes": nbytes,
        "throttles_by_key": [
            {"key": k, "throttles": n}
            for k, n in sorted(throttles.items(), key=lambda kv: (-kv[1], kv[0]))[:25]
        ],
    }


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
    minutes = cache.minutes(store, now)
    out: dict[str, Any] = {
        "generated_at": now,
        "last_hour": _window(minutes, floor_minute(now - HOUR) + timedelta(minutes=1)),
        "last_day": _window(minutes, floor_minute(now - DAY)),
        "queue": repo.queue_stats(store, now, dead_probe_interval=settings.dead_probe_interval),
        "feeds": {
            "by_status": repo.status_counts(store),
            "by_kind": repo.kind_counts(store),
        },
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

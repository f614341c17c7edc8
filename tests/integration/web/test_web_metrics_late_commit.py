"""/metrics counts every crawl row, including one that commits after a later one.

On PostgreSQL a crawl row takes its id from a sequence when it is inserted, and transactions
commit in any order: two writers (``run`` and a ``feeds refresh`` beside it, or ``serve``'s add
beside a ``crawl``) make a smaller id visible after a larger one. Counting "rows after the last
id seen" skipped it for good: an error less in fairfetch_crawls_total, silently.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa

from fairfetch.config import Settings
from fairfetch.feeds.model import Entry
from fairfetch.store import CrawlWrite, hooks, open_store
from fairfetch.web.metrics import DirectoryMetrics


def _crawl(feed_id: int, url: str, outcome: str, error_kind: str | None, entry: str) -> CrawlWrite:
    at = datetime.now(UTC)
    return CrawlWrite(
        feed_id=feed_id,
        url=url,
        at=at,
        outcome=outcome,
        politeness_key="example.test",
        feed_changes={"next_crawl_at": at + timedelta(hours=1)},
        error_kind=error_kind,
        duration=0.1,
        entries=[Entry(id=entry, title=entry)],
    )


def _total(metrics: DirectoryMetrics, now: datetime) -> dict[tuple[str, str], float]:
    out: dict[tuple[str, str], float] = {}
    for line in metrics.collect(now).decode().splitlines():
        if line.startswith("fairfetch_crawls_total{"):
            labels, value = line.rsplit(" ", 1)
            kind = labels.split('error_kind="')[1].split('"')[0]
            outcome = labels.split('outcome="')[1].split('"')[0]
            out[(outcome, kind)] = float(value)
    return out


def test_web_metrics_count_a_crawl_committed_after_a_later_one(pg_url: str) -> None:
    store = open_store(pg_url)
    clock = [1000.0]
    metrics = DirectoryMetrics(store, Settings(db=pg_url), clock=lambda: clock[0])
    metrics.start()
    now = datetime.now(UTC)
    slow, _ = store.add_feed("http://slow.example.test/feed", now=now,
                             politeness_key="example.test")
    fast, _ = store.add_feed("http://fast.example.test/feed", now=now,
                             politeness_key="example.test")

    inserted = threading.Event()
    release = threading.Event()

    def hold_slow(conn: sa.Connection, feed_id: int, ids: Sequence[int], *rest: Any) -> None:
        if feed_id == slow.id:  # the slow writer's crawl row is inserted, not committed
            inserted.set()
            assert release.wait(60)

    hooks.register_new_entries_hook(hold_slow)
    try:
        writer = threading.Thread(
            target=store.write, args=([_crawl(slow.id, slow.url, "error", "dns", "s1")],)
        )
        writer.start()
        assert inserted.wait(60)
        store.write([_crawl(fast.id, fast.url, "ok", None, "f1")])  # larger id, commits first
        assert _total(metrics, now) == {("ok", ""): 1.0}
        release.set()
        writer.join(60)
        assert not writer.is_alive()
    finally:
        release.set()
        hooks.unregister_new_entries_hook(hold_slow)

    with store.engine.connect() as conn:
        ids = dict(conn.execute(sa.text("SELECT feed_id, id FROM crawls")).all())
    assert ids[slow.id] < ids[fast.id]  # the case: the smaller id became visible last

    assert _total(metrics, now) == {("ok", ""): 1.0, ("error", "dns"): 1.0}
    clock[0] += 3600  # long after: rows are final, and nothing is counted twice
    assert _total(metrics, now) == {("ok", ""): 1.0, ("error", "dns"): 1.0}
    store.close()

"""Our outage is not their failure: many unrelated keys failing at the network level in the
same minute are recorded as an outage and counted against no feed — and a few failing keys,
below the threshold, still count (the filter is tested in both directions)."""

from __future__ import annotations

import socket
from pathlib import Path

import sqlalchemy as sa

from fairfetch.config import load_settings
from fairfetch.crawl import Crawler, utcnow
from fairfetch.net.politeness import politeness_key
from fairfetch.store import open_store
from fairfetch.store.tables import outages


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed on exit: connections are refused


def _settings(store):  # type: ignore[no-untyped-def]
    """Loopback allowed, every *.test host on it, the outage threshold at 20 keys."""
    return load_settings(
        environ={}, db=store.url, allow_networks="127.0.0.1/32", resolve="*.test:127.0.0.1",
        outage_keys=20, obey_robots=False,
    )  # fmt: skip


async def _crawl_unreachable(tmp_path: Path, n: int):  # type: ignore[no-untyped-def]
    port = _closed_port()
    store = open_store(f"sqlite:///{tmp_path}/outage.db")
    urls = [f"http://down{i}.test:{port}/feed" for i in range(n)]  # n registrable domains
    for u in urls:
        store.add_feed(u, now=utcnow(), politeness_key=politeness_key(u))
    async with Crawler(store, _settings(store)) as crawler:
        summary = await crawler.crawl_due()
    return store, summary


async def test_many_keys_failing_together_is_our_outage(tmp_path: Path) -> None:
    store, summary = await _crawl_unreachable(tmp_path, 30)
    assert summary.due == summary.accounted == 30
    assert summary.outage
    assert summary.counts["error"] == 0
    feeds = list(store.iter_feeds())
    assert all(f.status == "new" and f.error_count == 0 and f.last_error is None for f in feeds)
    assert all(f.next_crawl_at is not None and f.next_crawl_at <= utcnow() for f in feeds)
    with store.engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(outages)).scalar_one() == 1
    store.close()


async def test_a_few_keys_failing_is_their_failure(tmp_path: Path) -> None:
    store, summary = await _crawl_unreachable(tmp_path, 5)
    assert not summary.outage
    assert summary.errors["connect"] == 5
    assert all(f.status == "error" and f.error_count == 1 for f in store.iter_feeds())
    with store.engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(outages)).scalar_one() == 0
    store.close()


async def test_adding_many_unreachable_feeds_at_once_is_our_outage(tmp_path: Path) -> None:
    """`feeds add` (or an OPML import) of many feeds while our network is down: the adds' held
    failures get one verdict once every fetch of the batch is in, as a pass's do. Each add
    decided alone before the detector tripped: 30 such adds gave 19 feeds in error."""
    port = _closed_port()
    store = open_store(f"sqlite:///{tmp_path}/adds.db")
    urls = [f"http://down{i}.test:{port}/feed" for i in range(30)]
    async with Crawler(store, _settings(store)) as crawler:
        report = await crawler.add(urls)
    assert sorted(report.added) == sorted(urls)
    feeds = list(store.iter_feeds())
    assert len(feeds) == 30
    assert all(f.status == "new" and f.error_count == 0 and f.last_error is None for f in feeds)
    with store.engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(outages)).scalar_one() == 1
    store.close()


async def test_adding_a_few_unreachable_feeds_is_their_failure(tmp_path: Path) -> None:
    port = _closed_port()
    store = open_store(f"sqlite:///{tmp_path}/adds.db")
    urls = [f"http://down{i}.test:{port}/feed" for i in range(5)]
    async with Crawler(store, _settings(store)) as crawler:
        await crawler.add(urls)
    assert all(f.status == "error" and f.error_count == 1 for f in store.iter_feeds())
    store.close()

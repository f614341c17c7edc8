"""``feeds add`` of a URL whose first fetch fails at the network level (connection refused)
ends: the feed is added with its failure recorded. Network failures are held back for an
outage verdict, and nothing on the add path released them, so ``feeds add``, ``POST /add``
and the API's add waited for ever."""

from __future__ import annotations

import asyncio
import socket

import sqlalchemy as sa

from fairfetch.config import Settings
from fairfetch.crawl.loop import Crawler
from fairfetch.store import SqlStore
from fairfetch.store.tables import crawls


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_crawl_add_of_a_refused_url_ends_with_the_failure_recorded(
    store: SqlStore, settings: Settings
) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/feed.xml"
    async with Crawler(store, settings.replace(obey_robots=False)) as c:
        # A guard against the hang this test is about, not a measure of speed.
        report = await asyncio.wait_for(c.add([url]), timeout=30)
    assert report.added == [url]
    feed = store.get_feed(url)
    assert feed.error_count == 1
    with store.engine.connect() as conn:
        rows = conn.execute(
            sa.select(crawls.c.trigger, crawls.c.outcome, crawls.c.error_kind)
        ).all()
    assert [tuple(r) for r in rows] == [("add", "error", "connect")]

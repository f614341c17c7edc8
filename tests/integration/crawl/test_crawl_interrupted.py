"""Ctrl-C during a crawl (the crawl task cancelled): the crawler stops without waiting for the
fetches in flight — each could take ``total_timeout``, or a key's Retry-After — and their feeds
stay due, as after a kill. `crawl --once` and the demo took up to 70 s to stop."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import sqlalchemy as sa
from aiohttp import web

from fairfetch.config import load_settings
from fairfetch.crawl import Crawler, utcnow
from fairfetch.net.politeness import politeness_key
from fairfetch.store import open_store
from fairfetch.store.tables import crawls
from fairfetch.testing import loopback_server


async def test_a_cancelled_crawl_stops_without_waiting_for_its_fetches(tmp_path: Path) -> None:
    asked = asyncio.Event()
    release = asyncio.Event()  # never set before the crawler is left: the fetches hang

    async def handle(request: web.Request) -> web.StreamResponse:
        asked.set()
        await release.wait()
        return web.Response(text="<rss version='2.0'><channel><title>t</title></channel></rss>")

    store = open_store(f"sqlite:///{tmp_path}/stop.db")
    async with loopback_server(handle) as port:
        urls = [f"http://slow{i}.test:{port}/feed" for i in range(5)]
        for u in urls:
            store.add_feed(u, now=utcnow(), politeness_key=politeness_key(u))
        settings = load_settings(
            environ={}, db=store.url, allow_networks="127.0.0.1/32", resolve="*.test:127.0.0.1",
            obey_robots=False, first_byte_timeout=600.0, total_timeout=600.0,
        )  # fmt: skip

        async def crawl() -> None:
            async with Crawler(store, settings) as crawler:
                await crawler.crawl_due()

        crawling = asyncio.create_task(crawl())
        await asyncio.wait_for(asked.wait(), timeout=30)  # a guard against a hang
        crawling.cancel()
        # The crawler is left without the server ever answering: a guard (not a measure), as
        # the fetches would otherwise wait for their 600 s timeout.
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(crawling, timeout=30)
        release.set()
    feeds = list(store.iter_feeds())
    assert all(f.status == "new" and f.error_count == 0 and f.last_fetched_at is None
               for f in feeds)
    with store.engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(crawls)).scalar_one() == 0
    store.close()

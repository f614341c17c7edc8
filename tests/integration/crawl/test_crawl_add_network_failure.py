"""``feeds add`` of a URL whose first fetch fails at the network level (connection refused)
ends: the feed is added with its failure recorded. Network failures are held back for an
outage verdict, and nothing on the add path released them, so ``feeds add``, ``POST /add``
and the API's add waited for ever."""

from __future__ import annotations

import asyncio
import contextlib
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


async def test_crawl_add_cancelled_mid_fetch_ends_cleanly(
    store: SqlStore, settings: Settings
) -> None:
    """Ctrl-C during `feeds add`: the fetch finishes after nobody waits for it any more. Its
    result went into a cancelled future (InvalidStateError), and closing the crawler raised an
    ExceptionGroup of them: 250 lines of traceback for a Ctrl-C."""
    from aiohttp import web

    from fairfetch.testing import loopback_server

    asked, release = asyncio.Event(), asyncio.Event()

    async def handle(request: web.Request) -> web.StreamResponse:
        asked.set()
        await release.wait()
        return web.Response(text="<rss version='2.0'><channel><title>t</title></channel></rss>",
                            content_type="application/rss+xml")

    async with loopback_server(handle) as port:
        url = f"http://127.0.0.1:{port}/feed.xml"
        async with Crawler(store, settings.replace(obey_robots=False)) as c:
            adding = asyncio.create_task(c.add([url]))
            await asyncio.wait_for(asked.wait(), timeout=30)  # a guard against a hang
            adding.cancel()
            release.set()
            with contextlib.suppress(asyncio.CancelledError):
                await adding
        # Leaving the crawler raised the ExceptionGroup; reaching here is the test.

"""Review of 04f3ac9 (crawl/loop.py: a feed's results in one process decided one at a time).

``_decide_on_fresh_row`` waits for the feed's results still in the writer's queue
(``_unwritten``), then reads the row. A network-level failure (dns, connect, timeout) is not in
that queue: it is *held* in ``Crawler._held`` for the outage verdict, written only when the
pass (or a refresh) flushes it. So a ping's re-fetch of a feed whose pass result is a held
connect failure is decided on the row without it; when it fails at the network level too, both
held writes carry the same count: two error rows, ``error_count`` 1 (the fixed case's symptom,
for the failures of a host that is down, which are the ones a ping meets most).

The order is made certain: a second feed of the pass, on another host, is answered only once
the ping's refresh has returned, so the pass cannot flush its failure before the ping decides.
No outage: one key fails, the threshold is 20. Loopback only: the refused port is one of
127.0.0.1's, closed. Fixed: a held failure counts as decided and unwritten from the moment it
is held.
"""

from __future__ import annotations

import asyncio
import socket
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from aiohttp import web

from fairfetch.config import Settings
from fairfetch.crawl import Crawler
from fairfetch.net.politeness import politeness_key
from fairfetch.store import open_store
from fairfetch.store import tables as T
from fairfetch.testing import loopback_server

RSS = (b'<?xml version="1.0"?><rss version="2.0"><channel><title>R</title>'
       b"<item><guid>r1</guid><title>r</title></item></channel></rss>")


class _Held(list[Any]):
    """Crawler._held, telling its appends (until a flush replaces it with a plain list)."""

    def __init__(self) -> None:
        super().__init__()
        self.changed = asyncio.Event()

    def append(self, item: Any) -> None:
        super().append(item)
        self.changed.set()

    async def wait_for(self, n: int) -> None:
        while len(self) < n:
            self.changed.clear()
            await self.changed.wait()


async def test_review_s10_a_ping_beside_a_held_connect_failure_counts_both(db_url: str) -> None:
    with socket.socket() as probe:  # a loopback port nobody listens on: connect refused
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    release = asyncio.Event()

    async def handle(request: web.Request) -> web.StreamResponse:
        await release.wait()
        return web.Response(body=RSS, content_type="application/rss+xml")

    start = datetime(2026, 3, 2, tzinfo=UTC)
    store = open_store(db_url)
    try:
        async with loopback_server(handle) as port:
            down = f"http://down.test:{closed_port}/feed.xml"
            slow = f"http://slow.test:{port}/feed.xml"
            feed, _ = store.add_feed(down, now=start, politeness_key=politeness_key(down))
            store.add_feed(slow, now=start, politeness_key=politeness_key(slow))
            settings = Settings(db=db_url, allow_networks=("127.0.0.1/32",),
                                resolve=("*.test:127.0.0.1",), obey_robots=False)
            now = start + timedelta(hours=1)
            async with Crawler(store, settings, clock=lambda: now) as crawler:
                held = _Held()
                crawler._held = held
                passing = asyncio.create_task(crawler.crawl_due())
                await held.wait_for(1)  # the pass's connect failure, held
                # The pass cannot flush it meanwhile: its other feed is not answered yet.
                ping = await crawler.refresh([feed.id], trigger="ping")
                release.set()
                poll = await passing
            assert poll.counts["error"] == 1, poll
            assert ping.counts["error"] == 1, ping
        with store.engine.connect() as conn:
            rows = conn.execute(sa.select(T.crawls.c.outcome, T.crawls.c.error_kind)
                                .where(T.crawls.c.feed_id == feed.id)).all()
        assert [tuple(r) for r in rows] == [("error", "connect"), ("error", "connect")]
        after = store.find_feed(feed.id)
        assert after is not None
        assert after.error_count == 2
    finally:
        store.close()

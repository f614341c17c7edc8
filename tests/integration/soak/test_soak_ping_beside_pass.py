"""A WebSub ping's re-fetch (a refresh) beside a crawl pass of the same process, on the same
feed, both answered 500: two failures recorded, and the feed's ``error_count`` must count both.

The pass decided its result on the row it read when it claimed the feed's key; the ping's
result, decided and written in between, was undone by it: two error rows, ``error_count`` 1
(the soak's delta, pinged while down: 3 error rows since its last success, a count of 2). A
failure hidden inside a slightly different number, and ten failures that no longer make a feed
dead. (The ping's own re-read had the same hole the other way round: a result of the pass still
in the writer's queue is not in the row yet.)

The order is made certain: the server holds the ping's request until the pass has read the
feed's row for its claim, then answers both, one after the other (one request per host)."""

from __future__ import annotations

import asyncio
import threading
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


async def test_soak_a_ping_beside_the_pass_counts_both_failures(db_url: str) -> None:
    loop = asyncio.get_running_loop()
    claimed = threading.Event()  # the pass has read the feed's row for its claim
    ping_asked = asyncio.Event()
    requests = 0

    async def handle(request: web.Request) -> web.StreamResponse:
        nonlocal requests
        if request.path == "/robots.txt":
            return web.Response(status=404)
        requests += 1
        if requests == 1:  # the ping's: answered once the pass has read the row
            ping_asked.set()
            assert await loop.run_in_executor(None, claimed.wait, 60)
        return web.Response(status=500, text="down")

    start = datetime(2026, 3, 2, tzinfo=UTC)
    store = open_store(db_url)
    real_recheck = store.recheck_due

    def recheck_due(*args: Any, **kwargs: Any) -> Any:
        try:
            return real_recheck(*args, **kwargs)
        finally:
            claimed.set()

    store.recheck_due = recheck_due  # type: ignore[method-assign]
    try:
        async with loopback_server(handle) as port:
            url = f"http://down.test:{port}/feed.xml"
            feed, _ = store.add_feed(url, now=start, politeness_key=politeness_key(url))
            settings = Settings(db=db_url, allow_networks=("127.0.0.1/32",),
                                resolve=("*.test:127.0.0.1",))
            now = start + timedelta(hours=1)
            async with Crawler(store, settings, clock=lambda: now) as crawler:
                pinged = asyncio.create_task(crawler.refresh([feed.id], trigger="ping"))
                await ping_asked.wait()
                poll = await crawler.crawl_due()
                ping = await pinged
            assert ping.counts["error"] == 1, ping
            assert poll.counts["error"] == 1, poll
        assert requests == 2
        with store.engine.connect() as conn:
            rows = conn.execute(sa.select(T.crawls.c.outcome)
                                .where(T.crawls.c.feed_id == feed.id)).scalars().all()
        assert rows == ["error", "error"]
        after = store.find_feed(feed.id)
        assert after is not None
        assert after.status == "error"
        assert after.error_count == 2
    finally:
        store.close()

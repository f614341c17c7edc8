"""A refresh (a WebSub ping's re-fetch in `run`, `feeds refresh`) in one process beside a
crawl pass of another process (cron's `crawl --once`), on the same feed, both answered 500.
The pass decides on the row it read at its claim; the refresh, taking no claim, decides on the
row as it is and writes first. The pass's write used to undo its count (two error rows,
``error_count`` 1: the soak met it on PostgreSQL about one run in three). The store now
compares the row's ``crawl_count`` with the one the pass decided on, and decides the pass's
columns again on the row it holds (crawl/redecide.py, store/batch_write._rebased).

The order is made certain: the server holds the pass's request (read for its claim already)
until the other process's refresh has been decided and written."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from aiohttp import web

from fairfetch.config import Settings
from fairfetch.crawl import Crawler
from fairfetch.net.politeness import politeness_key
from fairfetch.store import open_store
from fairfetch.store import tables as T
from fairfetch.testing import loopback_server


async def test_soak_a_refresh_beside_another_process_pass_counts_both_failures(
    db_url: str,
) -> None:
    pass_asked = asyncio.Event()
    refreshed = asyncio.Event()
    requests = 0

    async def handle(request: web.Request) -> web.StreamResponse:
        nonlocal requests
        if request.path == "/robots.txt":
            return web.Response(status=404)
        requests += 1
        if requests == 1:  # the pass's: answered once the refresh is written
            pass_asked.set()
            await refreshed.wait()
        return web.Response(status=500, text="down")

    start = datetime(2026, 3, 2, tzinfo=UTC)
    run_store, cron_store = open_store(db_url), open_store(db_url)
    try:
        async with loopback_server(handle) as port:
            url = f"http://down.test:{port}/feed.xml"
            feed, _ = run_store.add_feed(url, now=start, politeness_key=politeness_key(url))
            settings = Settings(db=db_url, allow_networks=("127.0.0.1/32",),
                                resolve=("*.test:127.0.0.1",))
            now = start + timedelta(hours=1)
            async with Crawler(cron_store, settings, clock=lambda: now) as cron, \
                    Crawler(run_store, settings, clock=lambda: now) as run:
                passing = asyncio.create_task(cron.crawl_due())
                await pass_asked.wait()
                ping = await run.refresh([feed.id], trigger="ping")
                refreshed.set()
                poll = await passing
            assert ping.counts["error"] == 1, ping
            assert poll.counts["error"] == 1, poll
        assert requests == 2
        with run_store.engine.connect() as conn:
            rows = conn.execute(sa.select(T.crawls.c.outcome)
                                .where(T.crawls.c.feed_id == feed.id)).scalars().all()
        assert rows == ["error", "error"]
        after = run_store.find_feed(feed.id)
        assert after is not None
        assert after.error_count == 2
    finally:
        run_store.close()
        cron_store.close()

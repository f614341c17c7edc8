"""A crawl pass stopped (cancelled: Ctrl-C, an embedder's timeout) must hand its politeness keys
back. When the cancellation landed on the release of the claims (the pass's last step) before a
worker thread had taken that release up, the release never ran: the next pass of the same
process found every key still claimed by the stopped one, skipped every due feed as "another
crawler holds its politeness key", and went on skipping them for the life of the process (the
soak's day-10 pass: all five due feeds skipped)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web

from fairfetch.config import Settings
from fairfetch.crawl import Crawler
from fairfetch.net.politeness import politeness_key
from fairfetch.store import open_store
from fairfetch.store.crawl_claims import KeyClaims
from fairfetch.testing import loopback_server

RSS = (b'<?xml version="1.0"?><rss version="2.0"><channel><title>R</title>'
       b"<item><guid>r1</guid><title>r</title></item></channel></rss>")
ROUNDS = 8  # whether the release was taken up in time is a race: each round is a chance


async def _stopped_pass(crawler: Crawler, feeds: int) -> None:
    """A pass cancelled as its last result comes in: the cancellation lands on the pass's last
    step, the hand-back of its keys."""
    task: asyncio.Task[Any]
    seen: list[Any] = []

    def stop(result: Any) -> None:
        seen.append(result)
        if len(seen) == feeds:
            task.cancel()

    task = asyncio.create_task(crawler.crawl_due(on_result=stop))
    try:
        await task
    except asyncio.CancelledError:
        pass
    assert task.cancelled()


async def test_soak_a_stopped_pass_leaves_no_key_claimed(db_url: str) -> None:
    async def handle(request: web.Request) -> web.StreamResponse:
        if request.path == "/robots.txt":
            return web.Response(status=404)
        return web.Response(body=RSS, content_type="application/rss+xml")

    start = datetime(2026, 3, 2, tzinfo=UTC)
    store = open_store(db_url)
    try:
        async with loopback_server(handle) as port:
            keys = []
            for name in "abcd":
                url = f"http://{name}.test:{port}/feed.xml"
                keys.append(politeness_key(url))
                store.add_feed(url, now=start, politeness_key=keys[-1])
            settings = Settings(db=db_url, allow_networks=("127.0.0.1/32",),
                                resolve=("*.test:127.0.0.1",))
            for i in range(ROUNDS):
                at = start + timedelta(days=2 * i)  # every feed due again
                async with Crawler(store, settings, clock=lambda at=at: at) as crawler:
                    await _stopped_pass(crawler, len(keys))
                claims = KeyClaims(store)  # what the next pass would get
                try:
                    assert claims.claim(keys) == set(keys), f"keys still claimed, round {i}"
                finally:
                    claims.close()
            later = start + timedelta(days=2 * ROUNDS)
            async with Crawler(store, settings, clock=lambda: later) as crawler:
                summary = await crawler.crawl_due()
    finally:
        store.close()
    assert summary.due == 4
    assert dict(summary.skipped) == {}
    assert summary.counts["ok"] + summary.counts["not_modified"] == 4

"""A refresh on a key the publisher paused is not held for the pause, nor sent into it.

In `run`, one Crawler serves the passes and every refresh (the web's refresh button, the
API). A 429 with ``Retry-After: 3600`` paused the key; a refresh of a feed on that key then
waited in the dispatcher for the whole hour (up to a day), and the web request with it,
although the page has a notice for exactly this ("Not refreshed now: its politeness key is
paused …"). A refresh on a key paused in this process now comes back at once, ``deferred
(key paused)``, nothing fetched, nothing about the feed changed.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable

from aiohttp import web

from fairfetch.crawl import Crawler, utcnow
from fairfetch.net.politeness import politeness_key
from fairfetch.store import open_store
from fairfetch.testing import loopback_server

from .conftest import loopback_settings

_FEED = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
<item><guid>1</guid><title>one</title></item></channel></rss>"""


def _server(seen: Counter[str]) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    async def handler(request: web.Request) -> web.StreamResponse:
        seen[request.path] += 1
        if request.path == "/robots.txt":
            return web.Response(status=404)
        if request.path == "/throttled.xml":
            return web.Response(status=429, headers={"Retry-After": "3600"})
        return web.Response(body=_FEED, content_type="application/rss+xml")

    return handler


async def test_a_refresh_on_a_key_paused_in_this_process_is_deferred(db_url: str) -> None:
    seen: Counter[str] = Counter()
    async with loopback_server(_server(seen)) as port:
        throttled = f"http://a.platform.test:{port}/throttled.xml"
        other = f"http://b.platform.test:{port}/other.xml"
        store = open_store(db_url)
        try:
            now = utcnow()
            store.add_feed(throttled, now=now, politeness_key=politeness_key(throttled))
            async with Crawler(store, loopback_settings(store.url)) as crawler:
                first = await crawler.crawl_due()
                assert first.counts["throttled"] == 1
                # The other feed of the platform was added afterwards (not due in that pass).
                before, _ = store.add_feed(other, now=now, politeness_key=politeness_key(other))
                summary = await asyncio.wait_for(crawler.refresh([before.id]), 60)  # hang guard
            assert seen["/other.xml"] == 0
            assert summary.due == summary.accounted == 1
            assert summary.skipped["deferred (key paused)"] == 1
            after = store.get_feed(before.id)
            for column in ("status", "error_count", "last_error", "last_fetched_at",
                           "last_success_at", "next_crawl_at"):  # fmt: skip
                assert getattr(after, column) == getattr(before, column), column
        finally:
            store.close()

"""A one-shot pass defers the feeds queued on a paused key — the key they were queued on.

Hosts of different domains throttled together from one address share a backend key
(``backend:addr:<address>``, evidence in memory: `run`'s later passes submit their feeds under
it). When a feed under that key was throttled with a Retry-After, the key paused, and the
pass was to reschedule the feeds still queued on it to the reopening (``deferred (key
paused)``) rather than sit out the pause. It looked at each feed's own stored key (its
registrable domain), which nothing had paused: the pass waited the whole Retry-After — an
hour here, up to a day — with every other due feed of the directory behind it.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from datetime import timedelta

from aiohttp import web

from fairfetch.crawl import Crawler, utcnow
from fairfetch.net.politeness import politeness_key
from fairfetch.store import SqlStore
from fairfetch.testing import loopback_server

from .conftest import loopback_settings

_FEED = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
<item><guid>1</guid><title>one</title></item></channel></rss>"""


async def test_feeds_queued_on_a_paused_backend_key_are_deferred(store: SqlStore) -> None:
    seen: Counter[str] = Counter()

    async def handler(request: web.Request) -> web.StreamResponse:
        seen[request.path] += 1
        if request.path == "/robots.txt":
            return web.Response(status=404)
        if request.path == "/first.xml":
            return web.Response(status=429, headers={"Retry-After": "3600"})
        return web.Response(body=_FEED, content_type="application/rss+xml")

    async with loopback_server(handler) as port:
        urls = [f"http://a.one.test:{port}/{name}.xml" for name in ("first", "second", "third")]
        now = utcnow()
        for url in urls:
            store.add_feed(url, now=now, politeness_key=politeness_key(url))
        async with Crawler(store, loopback_settings(store.url)) as crawler:
            # Evidence from an earlier pass of this process: a.one.test and b.two.test,
            # two domains on 127.0.0.1, throttled within the same minute.
            t = time.monotonic()
            crawler.grouper.observe_throttle("a.one.test", "127.0.0.1", t)
            crawler.grouper.observe_throttle("b.two.test", "127.0.0.1", t)
            assert crawler.grouper.backend_for("a.one.test", t) == "backend:addr:127.0.0.1"
            summary = await asyncio.wait_for(crawler.crawl_due(), 120)  # a hang guard only
        assert summary.due == summary.accounted == 3
        assert summary.counts["throttled"] == 1
        assert summary.skipped["deferred (key paused)"] == 2
        assert seen["/second.xml"] == seen["/third.xml"] == 0
        for url in urls[1:]:
            feed = store.get_feed(url)
            assert feed.next_crawl_at is not None
            assert feed.next_crawl_at >= now + timedelta(minutes=59)

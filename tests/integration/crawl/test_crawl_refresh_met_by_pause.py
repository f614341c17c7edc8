"""A refresh met by a pause that begins while it waits is deferred, not sat out.

``feeds refresh`` of four feeds on one platform that throttled (Retry-After 60 s) took three
minutes, each feed waiting out the pause its neighbour had just been given; a Retry-After of a
day would have held the command, or the web's refresh request, or every WebSub ping queued
behind it, for a day. A refresh asked for on a key *already* paused came back at once as
``deferred (key paused)``; one queued before the pause now does the same. Its schedule is
left as it was — except a ping's feed, made due when the key reopens (never later than it
was), as the WebSub service does for a ping that arrives during a pause.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import timedelta

import pytest
from aiohttp import web

from fairfetch.crawl import Crawler, utcnow
from fairfetch.net.politeness import politeness_key
from fairfetch.store import open_store
from fairfetch.testing import loopback_server

from .conftest import loopback_settings

_FEED = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
<link>http://example.test/</link><item><guid>1</guid><title>one</title></item></channel></rss>"""


@pytest.mark.parametrize("trigger", ["refresh", "ping"])
async def test_crawl_a_refresh_queued_before_a_pause_is_deferred(
    db_url: str, trigger: str
) -> None:
    seen: Counter[str] = Counter()

    async def handler(request: web.Request) -> web.StreamResponse:
        seen[request.path] += 1
        if request.path == "/robots.txt":
            return web.Response(status=404)
        if request.path == "/first.xml":
            return web.Response(status=429, headers={"Retry-After": "3600"})
        return web.Response(body=_FEED, content_type="application/rss+xml")

    async with loopback_server(handler) as port:
        first = f"http://a.platform.test:{port}/first.xml"
        second = f"http://b.platform.test:{port}/second.xml"
        store = open_store(db_url)
        try:
            now = utcnow()
            ids = [
                store.add_feed(url, now=now, politeness_key=politeness_key(url))[0].id
                for url in (first, second)
            ]
            later = now + timedelta(days=2)
            store.set_due(ids, later)
            # One request at a time on the key: the second waits behind the first's 429.
            settings = loopback_settings(store.url).replace(per_key_in_flight=1)
            async with Crawler(store, settings) as crawler:
                # A guard, not a timing: without the deferral this waits out the hour.
                summary = await asyncio.wait_for(crawler.refresh(ids, trigger=trigger), 60)
            assert seen["/first.xml"] == 1
            assert seen["/second.xml"] == 0, "the key was paused for an hour"
            assert summary.due == summary.accounted == 2
            assert summary.counts["throttled"] == 1
            assert summary.skipped["deferred (key paused)"] == 1
            deferred = store.find_feed(ids[1])
            assert deferred is not None
            assert deferred.next_crawl_at is not None
            if trigger == "ping":
                # Due when the key reopens (within the hour), not two days later.
                assert now + timedelta(minutes=59) < deferred.next_crawl_at
                assert deferred.next_crawl_at < now + timedelta(minutes=61)
            else:
                assert deferred.next_crawl_at == later
            assert deferred.error_count == 0
            assert deferred.status == "new"
        finally:
            store.close()

"""A Retry-After answered to `feeds add` binds the next crawl process too.

The pause of a key is kept in the store so that the next process to crawl (a cron `crawl
--once`) sits it out (see test_crawl_key_pause_shared.py). The first request to a platform is
often the add of one of its feeds, and that request's Retry-After was kept in the adding
process only: the cron pass a minute later fetched the platform's other feeds at once, into
the door it had just been told was shut for an hour.
"""

from __future__ import annotations

from collections import Counter

from aiohttp import web

from fairfetch.crawl import Crawler, utcnow
from fairfetch.net.politeness import politeness_key
from fairfetch.store import open_store
from fairfetch.testing import loopback_server

from .conftest import loopback_settings

_FEED = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
<link>http://example.test/</link><item><guid>1</guid><title>one</title></item></channel></rss>"""


async def test_a_retry_after_answered_to_an_add_binds_the_next_crawler(db_url: str) -> None:
    seen: Counter[str] = Counter()

    async def handler(request: web.Request) -> web.StreamResponse:
        seen[request.path] += 1
        if request.path == "/robots.txt":
            return web.Response(status=404)
        if request.path == "/added.xml":
            return web.Response(status=429, headers={"Retry-After": "3600"})
        return web.Response(body=_FEED, content_type="application/rss+xml")

    async with loopback_server(handler) as port:
        added = f"http://a.platform.test:{port}/added.xml"
        other = f"http://b.platform.test:{port}/other.xml"
        assert politeness_key(added) == politeness_key(other) == "platform.test"
        store = open_store(db_url)
        try:
            settings = loopback_settings(store.url)
            store.add_feed(other, now=utcnow(), politeness_key=politeness_key(other))
            async with Crawler(store, settings) as adding:
                report = await adding.add([added])
            assert report.added == [added]
            assert seen["/added.xml"] == 1

            async with Crawler(store, settings) as cron:  # another process, as far as it knows
                summary = await cron.crawl_due()
            assert seen["/other.xml"] == 0, "the platform asked for an hour's rest"
            assert summary.due == summary.accounted == 1
            assert summary.skipped["deferred (key paused)"] == 1
        finally:
            store.close()

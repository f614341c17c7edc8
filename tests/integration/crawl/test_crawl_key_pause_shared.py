"""A key's Retry-After binds the next crawl process too, not only the one that was told.

A platform answers 429 with ``Retry-After: 3600``. The pass that saw it paused the key and
rescheduled the feeds it had queued there; but a feed of that key that fell due later (another
of the platform's hostnames, say) was fetched at once by the next process to look — a cron
`crawl --once`, or `run` restarted during the hour — at full rate, into the closed door. The
pause is now kept in the store with the key, and a pass defers that key's feeds to the end of
it without a request.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

from aiohttp import web

from fairfetch.crawl import Crawler, utcnow
from fairfetch.net.politeness import politeness_key
from fairfetch.store import open_store
from fairfetch.testing import loopback_server

from .conftest import loopback_settings

_FEED = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
<link>http://example.test/</link><item><guid>1</guid><title>one</title></item></channel></rss>"""


async def test_retry_after_binds_the_next_crawler_on_the_store(db_url: str) -> None:
    seen: Counter[str] = Counter()

    async def handler(request: web.Request) -> web.StreamResponse:
        seen[request.path] += 1
        if request.path == "/robots.txt":
            return web.Response(status=404)
        if request.path == "/throttled.xml":
            return web.Response(status=429, headers={"Retry-After": "3600"})
        return web.Response(body=_FEED, content_type="application/rss+xml")

    async with loopback_server(handler) as port:
        throttled = f"http://a.platform.test:{port}/throttled.xml"
        later = f"http://b.platform.test:{port}/later.xml"
        assert politeness_key(throttled) == politeness_key(later) == "platform.test"
        store = open_store(db_url)
        try:
            settings = loopback_settings(store.url)
            start = utcnow()
            store.add_feed(throttled, now=start, politeness_key=politeness_key(throttled))
            async with Crawler(store, settings) as first:
                one = await first.crawl_due()
            assert one.counts["throttled"] == 1

            # Due after the first pass ended: nothing of that pass rescheduled it.
            before, _ = store.add_feed(
                later, now=utcnow(), politeness_key=politeness_key(later)
            )
            async with Crawler(store, settings) as second:  # a new process, as far as it knows
                two = await second.crawl_due()

            assert seen["/later.xml"] == 0, "the platform asked for an hour's rest"
            assert two.due == 1
            assert two.skipped["deferred (key paused)"] == 1
            after = store.get_feed(before.id)
            assert after.next_crawl_at is not None
            assert after.next_crawl_at >= start + timedelta(seconds=3600) - timedelta(seconds=5)
            # A deferral is no attempt: every health column as it was, no crawls row.
            for column in ("status", "error_count", "last_error", "last_fetched_at",
                           "last_success_at"):  # fmt: skip
                assert getattr(after, column) == getattr(before, column), column
        finally:
            store.close()


async def test_a_short_stored_pause_is_waited_out_not_deferred(db_url: str) -> None:
    """A pause shorter than the deferral threshold (DEFER_AFTER) is waited for, as one this
    process was told itself: the feed is read in this pass, after the pause, not before."""
    import time

    from fairfetch.crawl.loop import DEFER_AFTER
    from fairfetch.store.politeness_repo import save_key_pauses

    arrived: dict[str, float] = {}

    async def handler(request: web.Request) -> web.StreamResponse:
        arrived.setdefault(request.path, time.time())
        if request.path == "/robots.txt":
            return web.Response(status=404)
        return web.Response(body=_FEED, content_type="application/rss+xml")

    async with loopback_server(handler) as port:
        url = f"http://b.platform.test:{port}/later.xml"
        store = open_store(db_url)
        try:
            store.add_feed(url, now=utcnow(), politeness_key=politeness_key(url))
            until = utcnow() + timedelta(seconds=0.5)
            assert DEFER_AFTER > 0.5
            save_key_pauses(store, {"platform.test": until}, utcnow())
            async with Crawler(store, loopback_settings(store.url)) as crawler:
                summary = await crawler.crawl_due()
            assert summary.counts["ok"] == 1, (dict(summary.counts), dict(summary.skipped))
            assert arrived["/later.xml"] >= until.timestamp()
        finally:
            store.close()

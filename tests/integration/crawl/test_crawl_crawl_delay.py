"""A robots.txt Crawl-delay is honoured within bounds, like a Retry-After.

The publisher's number went straight into the key's gap: ``Crawl-delay: 1e300`` crashed the
pass (OverflowError scheduling the deferred feeds, so no feed of the directory was crawled while
that robots.txt stood), and ``Crawl-delay: 99999999999`` rescheduled the key's other feeds to
the year 5195, gone from the directory without a failure anywhere."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

import pytest
from aiohttp import web

from fairfetch.config import Settings
from fairfetch.crawl import Crawler, utcnow
from fairfetch.net.politeness import politeness_key
from fairfetch.net.retry_after import MAX_RETRY_AFTER
from fairfetch.store import SqlStore
from fairfetch.testing import loopback_server

FEED = (
    b'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>'
    b"<item><guid>one</guid></item></channel></rss>"
)


@asynccontextmanager
async def site(delay: str) -> AsyncIterator[int]:
    async def handle(request: web.Request) -> web.Response:
        if request.path == "/robots.txt":
            return web.Response(text=f"User-agent: *\nCrawl-delay: {delay}\n")
        return web.Response(body=FEED, content_type="application/rss+xml")

    async with loopback_server(handle) as port:
        yield port


@pytest.mark.parametrize("delay", ["1e300", "99999999999"])
async def test_an_absurd_crawl_delay_defers_within_a_day(store: SqlStore, delay: str) -> None:
    async with site(delay) as port:
        settings = Settings(
            db=store.url, allow_networks=("127.0.0.1/32",), resolve=("*.test:127.0.0.1",)
        )
        now = utcnow()
        urls = [f"http://h.test:{port}/f{i}" for i in range(3)]
        for url in urls:
            store.add_feed(url, now=now, politeness_key=politeness_key(url))
        async with Crawler(store, settings) as crawler:
            summary = await crawler.crawl_due()
    assert summary.due == summary.accounted == 3
    assert summary.counts["ok"] == 1
    assert summary.skipped["deferred (key paused)"] == 2
    limit = utcnow() + timedelta(seconds=MAX_RETRY_AFTER)
    for url in urls:
        feed = store.get_feed(url)
        assert feed.next_crawl_at is not None
        assert feed.next_crawl_at <= limit, (url, feed.next_crawl_at)

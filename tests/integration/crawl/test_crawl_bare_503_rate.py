"""A 503 without Retry-After slows the key down (DESIGN.md: on 429/503 a key's rate halves).

The crawl loop built its own feedback for the dispatcher and left the overload out: a server
answering bare 503s was asked at full speed for the whole pass. It is not a throttle (no pause,
no health exemption): the 503 still counts against the feed."""

from __future__ import annotations

from aiohttp import web

from fairfetch.config import Settings
from fairfetch.crawl import Crawler, utcnow
from fairfetch.net.politeness import politeness_key
from fairfetch.store import SqlStore
from fairfetch.testing import loopback_server


async def test_a_bare_503_halves_the_keys_rate_and_still_counts(store: SqlStore) -> None:
    async def handle(request: web.Request) -> web.Response:
        if request.path == "/robots.txt":
            return web.Response(status=404)
        return web.Response(status=503, text="busy")

    async with loopback_server(handle) as port:
        settings = Settings(
            db=store.url, allow_networks=("127.0.0.1/32",), resolve=("*.test:127.0.0.1",)
        )
        now = utcnow()
        urls = [f"http://busy.test:{port}/f{i}" for i in range(3)]
        for url in urls:
            store.add_feed(url, now=now, politeness_key=politeness_key(url))
        async with Crawler(store, settings) as crawler:
            summary = await crawler.crawl_due()
            assert crawler._dispatcher is not None
            stats = crawler._dispatcher.snapshot()[politeness_key(urls[0])]
    assert summary.due == summary.accounted == 3
    assert stats.rate is not None  # limited: the key's rate was cut
    assert stats.throttles == 0  # no Retry-After: not a throttle, no pause
    for url in urls:
        feed = store.get_feed(url)
        assert feed.error_count == 1, url  # a 503 is the feed's failure

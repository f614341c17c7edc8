"""Backends found by evidence (DESIGN.md, Politeness): hosts of different registrable domains
on one address, throttled in the same window, share one politeness key from then on.

The grouping existed (``BackendGrouper``, unit-tested) but the crawler never told it about a
throttle, so ``backend_for`` was always empty and a platform on custom domains kept one budget
per domain however hard it pushed back."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp import web

from fairfetch.config import Settings
from fairfetch.crawl import Crawler, utcnow
from fairfetch.net.politeness import politeness_key
from fairfetch.store import SqlStore
from fairfetch.testing import loopback_server


@asynccontextmanager
async def one_throttling_backend() -> AsyncIterator[int]:
    async def handle(request: web.Request) -> web.Response:
        return web.Response(status=429, headers={"Retry-After": "120"})

    async with loopback_server(handle) as port:
        yield port


async def test_domains_throttled_together_from_one_address_share_a_key(store: SqlStore) -> None:
    async with one_throttling_backend() as port:
        settings = Settings(
            db=store.url,
            allow_networks=("127.0.0.1/32",),
            resolve=("*.test:127.0.0.1",),
            obey_robots=False,
        )
        urls = [f"http://news.alpha.test:{port}/feed", f"http://www.beta.test:{port}/feed"]
        now = utcnow()
        for url in urls:
            store.add_feed(url, now=now, politeness_key=politeness_key(url))
        assert len({politeness_key(u) for u in urls}) == 2  # two budgets by domain
        async with Crawler(store, settings) as crawler:
            summary = await crawler.crawl_due()
            assert summary.counts["throttled"] == 2
            group = "backend:addr:127.0.0.1"
            assert [crawler.grouper.backend_for(u) for u in urls] == [group, group]
            # From now on both feeds are dispatched under the one key.
            feeds = [store.get_feed(u) for u in urls]
            assert {crawler._key_for(f) for f in feeds} == {group}

"""Backends found by evidence (DESIGN.md, Politeness): hosts of different registrable domains
on one address, throttled in the same window, share one politeness key from then on.

The grouping existed (``BackendGrouper``, unit-tested) but the crawler never told it about a
throttle, so ``backend_for`` was always empty and a platform on custom domains kept one budget
per domain however hard it pushed back."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from aiohttp import web

from fairfetch.config import Settings
from fairfetch.crawl import Crawler, utcnow
from fairfetch.net.politeness import politeness_key
from fairfetch.store import SqlStore, open_store


@asynccontextmanager
async def one_throttling_backend() -> AsyncIterator[int]:
    async def handle(request: web.Request) -> web.Response:
        return web.Response(status=429, headers={"Retry-After": "120"})

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    finally:
        await runner.cleanup()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqlStore]:
    s = open_store(f"sqlite:///{tmp_path}/evidence.db")
    yield s
    s.close()


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

"""Issue 2, "Feed health": "Permanent redirects move the feed once confirmed", and DESIGN.md:
301 and 308 move the feed's `url` once the same target has answered on consecutive crawls (never
to an address the perimeter refuses); 302, 303 and 307 are followed and recorded, never a move.

The crawl tests use the testbed's 301 and 302 only. Here every status, over two crawls each, and
a permanent redirect into a loopback address that is not allowed (its listener must see nothing).
"""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import web

from fairfetch.crawl import Crawler, utcnow
from fairfetch.net.politeness import politeness_key
from fairfetch.store import SqlStore
from fairfetch.testing import loopback_server

from .conftest import loopback_settings

RSS = (
    b'<?xml version="1.0"?><rss version="2.0"><channel><title>R</title>'
    b"<link>http://r.test/</link><item><guid>r1</guid><title>r</title></item></channel></rss>"
)


@pytest.mark.parametrize(("status", "moves"), [(301, True), (308, True), (302, False),
                                               (303, False), (307, False)])
async def test_acceptance_permanent_moves_when_confirmed_temporary_never(
    store: SqlStore, status: int, moves: bool
) -> None:
    async def handle(request: web.Request) -> web.StreamResponse:
        if request.path == "/robots.txt":
            return web.Response(status=404)
        if request.path == "/old.xml":
            return web.Response(status=status, headers={"Location": "/new.xml"})
        return web.Response(body=RSS, content_type="application/rss+xml")

    async with loopback_server(handle) as port:
        old = f"http://r.test:{port}/old.xml"
        new = f"http://r.test:{port}/new.xml"
        store.add_feed(old, now=utcnow(), politeness_key=politeness_key(old))
        settings = loopback_settings(store.url)
        urls_seen = []
        for _ in range(2):
            async with Crawler(store, settings) as crawler:
                summary = await crawler.refresh([old])
            assert summary.accounted == 1
            feed = store.get_feed(old)
            urls_seen.append(feed.url)
            assert feed.status == "ok"
            hops = store.feed_details(feed.id)["redirects"]
            assert [h["status"] for h in hops] == [status]
    assert urls_seen[0] == old  # one answer is not yet a move
    assert urls_seen[1] == (new if moves else old)
    assert store.get_feed(old).original_url == old


async def test_acceptance_permanent_redirect_into_a_refused_address_never_moves(
    store: SqlStore,
) -> None:
    connections = 0

    async def count(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        writer.close()

    inside = await asyncio.start_server(count, "127.0.0.2", 0)
    inside_port = inside.sockets[0].getsockname()[1]
    target = f"http://inside.test:{inside_port}/feed.xml"

    async def handle(request: web.Request) -> web.StreamResponse:
        if request.path == "/robots.txt":
            return web.Response(status=404)
        return web.Response(status=301, headers={"Location": target})

    try:
        async with loopback_server(handle) as port:
            old = f"http://out.test:{port}/feed.xml"
            store.add_feed(old, now=utcnow(), politeness_key=politeness_key(old))
            settings = loopback_settings(
                store.url, resolve=("inside.test:127.0.0.2", "*.test:127.0.0.1"))
            for _ in range(3):
                async with Crawler(store, settings) as crawler:
                    await crawler.refresh([old])
        feed = store.get_feed(old)
        assert feed.url == old
        assert feed.status == "error"
        assert (feed.last_error or "").startswith("perimeter")
        assert feed.error_count == 3
        assert connections == 0
    finally:
        inside.close()
        await inside.wait_closed()

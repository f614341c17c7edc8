"""`fairfetch serve` has no running crawler: its add and refresh each crawl through a one-off
Crawler, and two of those at once knew nothing of each other's politeness slots. A double-click,
two admins or an API client with a few requests in flight sent the publisher several requests
at once (per host: at most one in flight, DESIGN.md). The web's own fetches take turns."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from aiohttp import web

from fairfetch.config import Settings
from fairfetch.store import open_store
from fairfetch.web.app import create_app

from .conftest import TOKEN

FEED = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>Polite</title>
<item><title>one</title><guid>one</guid></item></channel></rss>"""

#: How long the publisher holds a request open for another one to overlap it. Not a wait for
#: anything: requests that take turns each spend it, requests sent at once meet inside it.
WINDOW = 0.5


@dataclass
class Host:
    base: str
    in_flight: int = 0
    peak: int = 0
    requests: int = 0


@pytest.fixture
async def host() -> AsyncIterator[Host]:
    """One loopback publisher host that records how many requests it had open at once."""
    state = Host("")
    arrived = asyncio.Condition()

    async def answer(request: web.Request) -> web.Response:
        state.requests += 1
        state.in_flight += 1
        state.peak = max(state.peak, state.in_flight)
        async with arrived:
            arrived.notify_all()
            # another request arriving now shows requests overlapping: answer at once
            with_company = state.in_flight > 1
            if not with_company:
                try:
                    await asyncio.wait_for(arrived.wait(), WINDOW)
                except TimeoutError:
                    pass
        state.in_flight -= 1
        if request.path == "/robots.txt":
            return web.Response(status=404)
        return web.Response(body=FEED, content_type="application/rss+xml")

    app = web.Application()
    app.router.add_get("/{path:.*}", answer)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    state.base = f"http://127.0.0.1:{port}"
    try:
        yield state
    finally:
        await runner.cleanup()


async def test_web_adds_and_refreshes_at_once_without_a_crawler_send_one_request_at_a_time(
    tmp_path: Path, host: Host
) -> None:
    store = open_store(f"sqlite:///{tmp_path}/w.db")
    settings = Settings(db=store.url, admin_token=TOKEN, allow_networks=("127.0.0.1/32",))
    app = create_app(settings, store)  # as `fairfetch serve` makes it: no crawler
    transport = httpx.ASGITransport(app=app)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    urls = [f"{host.base}/feed{i}.xml" for i in range(3)]
    async with httpx.AsyncClient(transport=transport, base_url="http://web.test") as client:
        added = await asyncio.gather(
            client.post("/add", data={"url": urls[0], "token": TOKEN}),
            client.post("/add", data={"url": urls[0], "token": TOKEN}),  # a double-click
            client.post("/api/v1/feeds", json={"url": urls[1]}, headers=auth),
            client.post("/api/v1/feeds", json={"url": urls[2]}, headers=auth),
        )
        assert [r.status_code for r in added] == [303, 303, 201, 201]
        ids = [store.get_feed(u).id for u in urls]
        refreshed = await asyncio.gather(
            *(client.post(f"/api/v1/feeds/{i}/refresh", headers=auth) for i in ids),
            client.post(f"/feeds/{ids[0]}/refresh", data={"token": TOKEN}),
        )
        assert [r.status_code for r in refreshed] == [200, 200, 200, 303]
    assert host.peak == 1, f"{host.peak} requests at once on one host"
    assert all(store.get_feed(u).status == "ok" for u in urls)
    store.close()

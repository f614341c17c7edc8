"""The refresh button's page says what the refresh did: refreshed, throttled (nothing fetched,
the publisher's wait honoured) or failed; it said 'Feed refreshed.' whatever happened."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web

from fairfetch.config import Settings
from fairfetch.store import open_store
from fairfetch.web.app import create_app

from .conftest import TOKEN

FEED = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>Answers</title>
<item><title>one</title><guid>one</guid></item></channel></rss>"""


@dataclass
class Publisher:
    url: str
    #: the statuses of the next answers (then 200 with the feed)
    plan: list[int] = field(default_factory=list)
    #: how many feed requests it saw
    hits: int = 0


@pytest.fixture
async def publisher() -> AsyncIterator[Publisher]:
    """A loopback publisher answering each request with the next status of its plan."""
    pub = Publisher("")
    plan = pub.plan

    async def feed(request: web.Request) -> web.Response:
        pub.hits += 1
        status = plan.pop(0) if plan else 200
        if status == 429:
            return web.Response(status=429, headers={"Retry-After": "120"})
        if status != 200:
            return web.Response(status=status)
        return web.Response(body=FEED, content_type="application/rss+xml")

    async def no_robots(_request: web.Request) -> web.Response:
        return web.Response(status=404)

    app = web.Application()
    app.router.add_get("/feed.xml", feed)
    app.router.add_get("/robots.txt", no_robots)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    pub.url = f"http://127.0.0.1:{port}/feed.xml"
    try:
        yield pub
    finally:
        await runner.cleanup()


def _notice(html: str) -> str:
    return html.split('<p class="notice" role="status">', 1)[1].split("</p>", 1)[0]


async def test_web_refresh_page_says_what_the_refresh_did(
    tmp_path: Path, publisher: Publisher
) -> None:
    url, plan = publisher.url, publisher.plan
    store = open_store(f"sqlite:///{tmp_path}/r.db")
    settings = Settings(db=store.url, admin_token=TOKEN, allow_networks=("127.0.0.1/32",))
    app = create_app(settings, store)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://web.test", follow_redirects=True
    ) as client:
        added = await client.post("/add", data={"url": url, "token": TOKEN})
        assert "Feed added and crawled." in added.text
        feed = store.find_feed(url)
        assert feed is not None

        async def refresh() -> Any:
            return await client.post(f"/feeds/{feed.id}/refresh", data={"token": TOKEN})

        assert _notice((await refresh()).text) == "Feed refreshed."
        plan.append(429)
        throttled = _notice((await refresh()).text)
        assert "Feed refreshed." not in throttled
        assert "throttled" in throttled
        plan.append(500)
        failed = _notice((await refresh()).text)
        assert "failed" in failed
        assert "Feed refreshed." not in failed
    crawls = [c["outcome"] for c in store.feed_details(feed.id)["crawls"]]
    assert sorted(crawls) == sorted(["ok", "ok", "throttled", "error"])
    store.close()


async def test_web_form_add_whose_first_fetch_was_throttled_says_it_is_not_crawled_yet(
    tmp_path: Path, publisher: Publisher
) -> None:
    url, plan = publisher.url, publisher.plan
    plan.append(429)
    store = open_store(f"sqlite:///{tmp_path}/t.db")
    settings = Settings(db=store.url, admin_token=TOKEN, allow_networks=("127.0.0.1/32",))
    transport = httpx.ASGITransport(app=create_app(settings, store))
    async with httpx.AsyncClient(
        transport=transport, base_url="http://web.test", follow_redirects=True
    ) as client:
        added = await client.post("/add", data={"url": url, "token": TOKEN})
    feed = store.find_feed(url)
    assert feed is not None
    assert feed.status == "new"  # a throttle is no failure: nothing about its health changed
    assert feed.last_fetched_at is None
    notice = _notice(added.text)
    assert "crawled." not in notice
    assert "not crawled yet" in notice
    # one request: the publisher said to wait, so nothing asked again at once
    assert publisher.hits == 1
    assert [c["outcome"] for c in store.feed_details(feed.id)["crawls"]] == ["throttled"]
    assert feed.next_crawl_at is not None
    store.close()

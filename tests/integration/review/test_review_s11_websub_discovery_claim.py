"""Review of 03dc22a (a feed claiming a platform can no longer pause the platform's key).

The gate is in the crawl loop only. WebSub's discovery GET of a feed (websub/service.py
``_throttled_by``, reached from ``subscribe_feed`` and a renewal's hub check) stores the pause
of a throttled answer under ``feed.politeness_key``, which for a claimant is the platform's key
(its earlier answers claimed the platform). A hostile feed claiming Letterbox, advertising a
hub and answering the discovery GET 429 + Retry-After: a day pauses every Letterbox feed for a
day, in every process.

The claimant listens on 127.0.1.1 (another /24 than the platform's 127.0.0.1); only it is
allowed, and nothing else is reached."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path

from aiohttp import web

from fairfetch.config import Settings
from fairfetch.crawl import Crawler, utcnow
from fairfetch.net.fetch import Fetcher
from fairfetch.store import open_store
from fairfetch.store.politeness_repo import load_key_pauses
from fairfetch.testing import loopback_server
from fairfetch.websub.service import WebSubService

PLATFORM = "backend:letterbox"
DAY = 86400
MEMBER = "127.0.1.1"


@asynccontextmanager
async def _discovery_of(tmp_path: Path, host: str) -> AsyncIterator[tuple[list[str], bool]]:
    """A feed on ``host`` (served from 127.0.1.1), keyed by the platform as a crawl that read
    its claim left it, offered to WebSub: its discovery GET is answered 429, Retry-After a
    day. Yields the hosts that reached the server and whether the platform's key is paused."""
    seen: list[str] = []

    async def throttling(request: web.Request) -> web.Response:
        if request.path == "/robots.txt":
            return web.Response(status=404)
        seen.append(request.host.split(":")[0])
        return web.Response(status=429, headers={"Retry-After": str(DAY)})

    async with loopback_server(throttling, address=MEMBER) as port:
        settings = Settings(
            db=f"sqlite:///{tmp_path}/fairfetch.db",
            allow_networks=(f"{MEMBER}/32",),
            resolve=(f"{host}:{MEMBER}",),
            obey_robots=False,
        )
        store = open_store(settings.db)
        fetcher = Fetcher(settings)
        crawler = Crawler(store, settings, fetcher=fetcher)
        service = WebSubService(store, settings, crawler=crawler, fetcher=fetcher)
        try:
            now = utcnow()
            feed, _ = store.add_feed(f"http://{host}:{port}/feed",
                                     now=now - timedelta(hours=1), politeness_key=PLATFORM)
            outcome = await service.subscribe_feed(feed.id)
            assert outcome.subscription is None
            paused = PLATFORM in load_key_pauses(store, [PLATFORM], utcnow())
            yield seen, paused
        finally:
            await service.aclose()
            await crawler.aclose()
            await fetcher.aclose()
            store.close()


async def test_review_s11_a_claimants_throttled_discovery_get_does_not_pause_the_platform(
    tmp_path: Path,
) -> None:
    async with _discovery_of(tmp_path, "evil.test") as (seen, paused):
        assert seen == ["evil.test"]
        assert not paused


async def test_review_s11_the_platforms_own_host_throttling_discovery_pauses_it(
    tmp_path: Path,
) -> None:
    """The control: the same answer from one of the platform's own hosts binds its key."""
    async with _discovery_of(tmp_path, "zed.letterbox.test") as (seen, paused):
        assert seen == ["zed.letterbox.test"]
        assert paused

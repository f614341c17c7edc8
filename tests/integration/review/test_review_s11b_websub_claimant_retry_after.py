"""Second review of aef380b: a throttled discovery GET of a feed on a platform's key by its own
say no longer pauses the platform, and "only that feed's subscription waits" (its message says
until when). Nothing made it wait: no pause was stored, so the next upkeep pass (every 30 s in
``run``) asked the publisher again, whatever its Retry-After said.

The claimant listens on 127.0.1.1 (another /24 than the platform's 127.0.0.1); only it is
allowed, and nothing else is reached."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from aiohttp import web

from fairfetch.config import Settings
from fairfetch.crawl import Crawler
from fairfetch.net.fetch import Fetcher
from fairfetch.store import open_store
from fairfetch.store.politeness_repo import load_key_pauses
from fairfetch.store.tables import feeds
from fairfetch.testing import loopback_server
from fairfetch.websub.service import WebSubService

PLATFORM = "backend:letterbox"
HOUR = 3600
MEMBER = "127.0.1.1"


async def test_review_s11b_a_claimants_throttled_discovery_waits_its_retry_after(
    tmp_path: Path,
) -> None:
    hits: list[str] = []

    async def throttling(request: web.Request) -> web.Response:
        if request.path == "/robots.txt":
            return web.Response(status=404)
        hits.append(request.path)
        return web.Response(status=429, headers={"Retry-After": str(HOUR)})

    async with loopback_server(throttling, address=MEMBER) as port:
        settings = Settings(
            db=f"sqlite:///{tmp_path}/fairfetch.db",
            allow_networks=(f"{MEMBER}/32",),
            resolve=(f"evil.test:{MEMBER}",),
            obey_robots=False,
        )
        store = open_store(settings.db)
        fetcher = Fetcher(settings)
        crawler = Crawler(store, settings, fetcher=fetcher)
        service = WebSubService(store, settings, crawler=crawler, fetcher=fetcher)
        try:
            t0 = datetime.now(UTC)
            service.clock = lambda: t0
            feed, _ = store.add_feed(f"http://evil.test:{port}/feed",
                                     now=t0 - timedelta(hours=1), politeness_key=PLATFORM)
            with store.engine.begin() as conn:  # advertising a hub, as a crawl left it
                conn.execute(feeds.update().where(feeds.c.id == feed.id).values(
                    hub_urls=[f"http://evil.test:{port}/hub"], status="ok"))
            await service.tick()
            assert hits == ["/feed"]
            # The platform is not paused (aef380b)...
            assert PLATFORM not in load_key_pauses(store, [PLATFORM], t0)
            # ...and the feed waits: the next passes within its Retry-After do not ask again.
            soon = t0 + timedelta(seconds=30)
            service.clock = lambda: soon
            await service.tick()
            outcome = await service.subscribe_feed(feed.id)
            assert hits == ["/feed"]
            assert outcome.deferred
            assert outcome.subscription is None
            assert "throttled the discovery GET" in outcome.detail
            # Once it is over, the feed is offered to discovery again.
            later = t0 + timedelta(seconds=HOUR + 60)
            service.clock = lambda: later
            await service.tick()
            assert hits == ["/feed", "/feed"]
        finally:
            await service.aclose()
            await crawler.aclose()
            await fetcher.aclose()
            store.close()

"""Review of 03dc22a (a feed claiming a platform can no longer pause the platform's key).

A Retry-After of a claimant no longer binds ``backend:<platform>``, but its robots.txt still
does the same by another name: crawl/loop.py ``_handle`` sets the claimant host's Crawl-delay
as a gap of the key its feed is fetched under (``set_gap(self._key_for(feed), ...)``), and a
key keeps the longest gap its hosts asked for. ``Crawl-delay: 86400`` spaces the platform's
starts a day apart: the pass defers every feed of the platform still queued (a gap of 10 s or
more defers a poll, to the key's reopening), in this process and at the next pass's claim.

Two loopback servers: the platform's hosts on 127.0.0.1, the claimant on 127.0.1.1 (another
/24). Both are allowed; nothing else is."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from aiohttp import web

from fairfetch.config import Settings
from fairfetch.crawl import Crawler, utcnow
from fairfetch.store import SqlStore, open_store
from fairfetch.testing import loopback_server

PLATFORM = "backend:letterbox"
RSS = (b'<rss version="2.0"><channel><title>t</title><generator>Letterbox</generator>'
       b"</channel></rss>")
DAY = 86400
MEMBER = "127.0.1.1"
OWN = ("alice", "bob", "carol", "dave")


async def _feed(request: web.Request) -> web.Response:
    if request.path == "/robots.txt":
        return web.Response(status=404)
    return web.Response(body=RSS, content_type="application/rss+xml")


async def _slow_robots(request: web.Request) -> web.Response:
    if request.path == "/robots.txt":
        return web.Response(text=f"User-agent: *\nAllow: /\nCrawl-delay: {DAY}\n")
    return web.Response(body=RSS, content_type="application/rss+xml")


async def _pass(store: SqlStore, member: str) -> list[str]:
    """The platform's own feeds and one member keyed by the platform (its earlier answers
    claimed it), due first, whose robots.txt asks a day between requests. Returns the
    platform's own feeds that were read."""
    async with loopback_server(_feed) as port, \
            loopback_server(_slow_robots, address=MEMBER) as member_port:
        settings = Settings(
            db=store.url,
            allow_networks=("127.0.0.1/32", f"{MEMBER}/32"),
            resolve=("*.letterbox.test:127.0.0.1", f"{member}:{MEMBER}"),
            per_key_in_flight=1,
        )
        now = utcnow()
        store.add_feed(f"http://{member}:{member_port}/feed", now=now - timedelta(hours=1),
                       politeness_key=PLATFORM)
        for name in OWN:
            store.add_feed(f"http://{name}.letterbox.test:{port}/feed",
                           now=now - timedelta(minutes=1), politeness_key=PLATFORM)
        async with Crawler(store, settings) as crawler:
            await crawler.crawl_due()
    return sorted(
        f.url.split(".")[0].removeprefix("http://")
        for f in store.list_feeds()
        if ".letterbox.test:" in f.url and f.last_success_at is not None
        and not f.url.startswith(f"http://{member}")
    )


async def test_review_s11_a_claimants_crawl_delay_does_not_space_the_platform(
    tmp_path: Path,
) -> None:
    store = open_store(f"sqlite:///{tmp_path}/crawl.db")
    try:
        assert await _pass(store, "evil.test") == sorted(OWN)
        evil = next(f for f in store.list_feeds() if "evil.test" in f.url)
        assert evil.last_success_at is not None  # its own feed is read (its robots allow it)
    finally:
        store.close()


async def test_review_s11_the_platforms_own_hosts_crawl_delay_spaces_it(tmp_path: Path) -> None:
    """The control: the same robots.txt on one of the platform's own hosts binds its key."""
    store = open_store(f"sqlite:///{tmp_path}/crawl.db")
    try:
        assert await _pass(store, "zed.letterbox.test") == []
    finally:
        store.close()

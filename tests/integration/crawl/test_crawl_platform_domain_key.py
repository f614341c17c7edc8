"""A domain whose hosts answered as one platform puts its other feeds on the platform's key.

Feeds added after a platform was fingerprinted kept their domain's key until their first
answer: two keys for one platform, each with its own cap, so the platform saw twice the cap in
flight (tests/integration/acceptance/test_acceptance_platform_politeness.py measures it). One
custom domain on a platform says nothing of the domain's other hosts."""

from __future__ import annotations

from fairfetch.config import Settings
from fairfetch.crawl import Crawler, utcnow
from fairfetch.net.politeness import politeness_key
from fairfetch.store import SqlStore


def _feed(store: SqlStore, url: str, key: str | None = None):  # type: ignore[no-untyped-def]
    store.add_feed(url, now=utcnow(), politeness_key=key or politeness_key(url))
    return store.get_feed(url)


async def test_two_hosts_of_a_domain_on_a_platform_make_the_domain_its(store: SqlStore) -> None:
    settings = Settings(db=store.url)
    new = _feed(store, "https://carol.letterbox.test/feed")
    async with Crawler(store, settings) as crawler:
        assert crawler._key_for(new) == "letterbox.test"
        crawler._learn_platform("https://alice.letterbox.test/feed", "backend:letterbox")
        assert crawler._key_for(new) == "letterbox.test"  # one host is no evidence yet
        crawler._learn_platform("https://bob.letterbox.test/feed", "backend:letterbox")
        assert crawler._key_for(new) == "backend:letterbox"


async def test_one_custom_domain_on_a_platform_keeps_its_other_hosts(store: SqlStore) -> None:
    settings = Settings(db=store.url)
    podcast = _feed(store, "https://podcast.example.com/rss")
    async with Crawler(store, settings) as crawler:
        crawler._learn_platform("https://blog.example.com/feed", "backend:ghost")
        crawler._learn_platform("https://blog.example.com/comments/feed", "backend:ghost")
        assert crawler._key_for(podcast) == "example.com"


async def test_a_throttle_of_a_platform_domains_feed_is_stored_for_the_platform_too(
    store: SqlStore,
) -> None:
    # The feed is dispatched on the platform's key: its Retry-After must bind the platform's
    # own feeds (stored under backend:<name>) in the next process, not only the domain's. The
    # domain is the platform's by claim only, so its answer must come from the network the
    # platform's own hosts answer from (net/platform_trust.py): one of them is read first.
    from aiohttp import web

    from fairfetch.store.politeness_repo import load_key_pauses
    from fairfetch.testing import loopback_server

    rss = b'<rss version="2.0"><channel><title>t</title></channel></rss>'

    async def handle(request: web.Request) -> web.Response:
        if request.path == "/robots.txt":
            return web.Response(status=404)
        if request.host.startswith("carol."):
            return web.Response(status=429, headers={"Retry-After": "600"})
        return web.Response(body=rss, content_type="application/rss+xml")

    async with loopback_server(handle) as port:
        settings = Settings(
            db=store.url, allow_networks=("127.0.0.1/32",),
            resolve=("*.plat.test:127.0.0.1", "*.letterbox.test:127.0.0.1"),
        )
        _feed(store, f"http://dave.letterbox.test:{port}/feed")
        async with Crawler(store, settings) as crawler:
            assert (await crawler.crawl_due()).counts["ok"] == 1
            for name in ("alice", "bob"):
                _feed(store, f"http://{name}.plat.test:{port}/feed", "backend:letterbox")
            _feed(store, f"http://carol.plat.test:{port}/feed")
            summary = await crawler.crawl_due()
    assert summary.counts["throttled"] == 1
    stored = load_key_pauses(store, ["plat.test", "backend:letterbox"], utcnow())
    assert set(stored) == {"plat.test", "backend:letterbox"}

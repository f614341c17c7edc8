"""A feed on a platform's key by its own say cannot pause the platform.

A feed joins ``backend:letterbox`` on what its response claims (its generator). A hostile
publisher claiming the platform, answering 429 with ``Retry-After: 86400``, stopped every feed
of the platform for a day, in every process (the pause is stored). Its throttle now binds the
platform's key only when it answers from the network the platform's own hosts answer from
(net/platform_trust.py); otherwise its own feed waits the day, and the platform's do not.

Two loopback servers: the platform's hosts on 127.0.0.1, the claimant on 127.0.1.1 (another
/24). Both are allowed; nothing else is."""

from __future__ import annotations

from datetime import timedelta

from aiohttp import web

from fairfetch.config import Settings
from fairfetch.crawl import Crawler, utcnow
from fairfetch.store import SqlStore
from fairfetch.store.politeness_repo import load_key_pauses
from fairfetch.testing import loopback_server

PLATFORM = "backend:letterbox"
RSS = (b'<rss version="2.0"><channel><title>t</title><generator>Letterbox</generator>'
       b"</channel></rss>")
DAY = 86400


def _throttling(request_log: list[str]):  # type: ignore[no-untyped-def]
    async def handle(request: web.Request) -> web.Response:
        if request.path == "/robots.txt":
            return web.Response(status=404)
        request_log.append(request.host.split(":")[0])
        return web.Response(status=429, headers={"Retry-After": str(DAY)})

    return handle


async def _platform(request: web.Request) -> web.Response:
    if request.path == "/robots.txt":
        return web.Response(status=404)
    return web.Response(body=RSS, content_type="application/rss+xml")


async def _pass_with_a_throttling_member(
    store: SqlStore, member: str, member_address: str
) -> tuple[dict[str, int], list[str]]:
    """The platform's own feeds and one member keyed by the platform (its earlier answers
    claimed it), due first and throttling. Returns the pass's counts and the member's log."""
    seen: list[str] = []
    async with loopback_server(_platform) as port, \
            loopback_server(_throttling(seen), address=member_address) as member_port:
        settings = Settings(
            db=store.url,
            allow_networks=("127.0.0.1/32", "127.0.1.1/32"),
            resolve=("*.letterbox.test:127.0.0.1", f"{member}:{member_address}"),
        )
        now = utcnow()
        store.add_feed(f"http://{member}:{member_port}/feed", now=now - timedelta(hours=1),
                       politeness_key=PLATFORM)
        for name in ("alice", "bob", "carol", "dave"):
            store.add_feed(f"http://{name}.letterbox.test:{port}/feed",
                           now=now - timedelta(minutes=1), politeness_key=PLATFORM)
        async with Crawler(store, settings) as crawler:
            summary = await crawler.crawl_due()
    return dict(summary.counts), seen


async def test_a_claimant_from_another_network_pauses_its_feed_not_the_platform(
    store: SqlStore,
) -> None:
    counts, seen = await _pass_with_a_throttling_member(store, "evil.test", "127.0.1.1")
    assert seen == ["evil.test"]
    assert counts["throttled"] == 1
    assert counts["ok"] == 4  # the platform's own feeds were read, not deferred a day
    assert PLATFORM not in load_key_pauses(store, [PLATFORM], utcnow())
    evil = store.get_feed(next(f.id for f in store.list_feeds() if "evil.test" in f.url))
    assert evil.next_crawl_at is not None
    assert evil.next_crawl_at > utcnow() + timedelta(seconds=DAY - 600)  # its own wait


async def test_the_platforms_own_host_throttling_pauses_the_platform(store: SqlStore) -> None:
    """The same answer from one of the platform's own hosts binds the key (the control)."""
    counts, seen = await _pass_with_a_throttling_member(
        store, "zed.letterbox.test", "127.0.1.1"
    )
    assert seen == ["zed.letterbox.test"]
    assert counts["throttled"] == 1
    assert counts.get("ok", 0) < 4  # the rest of the platform waits
    assert PLATFORM in load_key_pauses(store, [PLATFORM], utcnow())

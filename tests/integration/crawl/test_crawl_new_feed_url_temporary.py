"""``itunes:new-feed-url`` moves the feed to the URL the publisher named, like a confirmed
permanent redirect (DESIGN.md) — never to where a temporary redirect of that URL points today.

The confirming fetch of the new URL follows redirects; the feed used to move to the final URL
of that fetch, so a new URL answering ``302`` to a signed CDN address (or any temporary
stand-in) became the feed's address, and the publisher's own URL was lost.
"""

from __future__ import annotations

from collections import Counter

from aiohttp import web

from fairfetch.crawl import Crawler, utcnow
from fairfetch.net.politeness import politeness_key
from fairfetch.store import SqlStore
from fairfetch.testing import loopback_server

from .conftest import loopback_settings


def rss(title: str, extra: str = "") -> bytes:
    return (
        '<?xml version="1.0"?><rss version="2.0" '
        'xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel>'
        f"<title>{title}</title>{extra}<item><guid>{title}-1</guid></item></channel></rss>"
    ).encode()


async def _crawl_move(store: SqlStore, status: int) -> tuple[str, str, str, Counter[str]]:
    seen: Counter[str] = Counter()
    port_box: list[int] = []

    async def handle(request: web.Request) -> web.StreamResponse:
        host = request.host.split(":")[0]
        seen[f"{host}{request.path}"] += 1
        port = port_box[0]
        if request.path == "/robots.txt":
            return web.Response(status=404)
        if host == "old.test":
            moved = f"http://new.test:{port}/feed"
            return web.Response(
                body=rss("old", f"<itunes:new-feed-url>{moved}</itunes:new-feed-url>"),
                content_type="application/rss+xml",
            )
        if host == "new.test":
            return _redirect(status, f"http://cdn.test:{port}/signed/abc123")
        return web.Response(body=rss("moved"), content_type="application/rss+xml")

    async with loopback_server(handle) as port:
        port_box.append(port)
        old = f"http://old.test:{port}/feed"
        store.add_feed(old, now=utcnow(), politeness_key=politeness_key(old))
        async with Crawler(store, loopback_settings(store.url)) as crawler:
            summary = await crawler.crawl_due()
        assert summary.due == summary.accounted == 1
        assert summary.counts["ok"] == 1
        return old, f"http://new.test:{port}/feed", f"http://cdn.test:{port}/signed/abc123", seen


def _redirect(status: int, location: str) -> web.Response:
    return web.Response(status=status, headers={"Location": location})


async def test_new_feed_url_behind_a_temporary_redirect_moves_to_the_named_url(
    store: SqlStore,
) -> None:
    old, named, temporary, seen = await _crawl_move(store, 302)
    assert seen["new.test/feed"] == 1  # the move was confirmed through the named URL
    feed = store.get_feed(old)
    assert feed.url == named, "a temporary redirect never moves the feed"
    assert feed.url != temporary


async def test_new_feed_url_behind_a_permanent_redirect_moves_to_its_target(
    store: SqlStore,
) -> None:
    old, _named, target, _seen = await _crawl_move(store, 301)
    assert store.get_feed(old).url == target

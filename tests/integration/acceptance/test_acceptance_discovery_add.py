"""Issue 3, "Discovery": `feeds add https://some.site/` finds the site's feeds in its HTML
(`<link rel="alternate">`, well-known paths as a fallback) and adds them; WebSub hub and self links
from `Link` headers and the feed are stored.

The crawl tests add a testbed page that declares its feed, and a page with none that adds
nothing; the well-known fallback finding a real feed, and hub/self from a `Link` header reaching
the store, were checked only as pure functions.
"""

from __future__ import annotations

from aiohttp import web

from fairfetch.crawl import Crawler, utcnow
from fairfetch.store import SqlStore
from fairfetch.testing import loopback_server

from .conftest import loopback_settings


def _rss(title: str, extra: str = "") -> bytes:
    return (
        '<?xml version="1.0"?><rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">'
        f"<channel><title>{title}</title><link>http://x.test/</link>{extra}"
        f"<item><guid>{title}-1</guid><title>one</title></item></channel></rss>"
    ).encode()


async def test_acceptance_add_finds_declared_feeds_and_falls_back_to_well_known_paths(
    store: SqlStore,
) -> None:
    asked: list[tuple[str, str]] = []

    async def handle(request: web.Request) -> web.StreamResponse:
        host = request.host.split(".")[0]
        asked.append((host, request.path))
        if request.path == "/robots.txt":
            return web.Response(status=404)
        if request.path == "/":
            links = (
                '<link rel="alternate" type="application/rss+xml" href="/posts.rss">'
                '<link rel="alternate" type="application/atom+xml" href="/comments.atom">'
                if host == "declared" else ""
            )
            return web.Response(
                text=f"<!doctype html><html><head><title>Site</title>{links}</head>"
                "<body><p>hello</p></body></html>",
                content_type="text/html",
            )
        if host == "declared" and request.path == "/posts.rss":
            return web.Response(body=_rss("posts"), content_type="application/rss+xml")
        if host == "declared" and request.path == "/comments.atom":
            return web.Response(
                body=b'<feed xmlns="http://www.w3.org/2005/Atom"><title>c</title><id>urn:c</id>'
                b"<entry><id>c1</id><title>c</title></entry></feed>",
                content_type="application/atom+xml",
            )
        if host == "fallback" and request.path == "/rss.xml":
            return web.Response(body=_rss("guessed"), content_type="application/rss+xml")
        return web.Response(status=404)

    async with loopback_server(handle) as port:
        site_declared = f"http://declared.test:{port}/"
        site_fallback = f"http://fallback.test:{port}/"
        async with Crawler(store, loopback_settings(store.url)) as crawler:
            report = await crawler.add([site_declared, site_fallback])

    assert sorted(report.added) == sorted([
        f"http://declared.test:{port}/posts.rss",
        f"http://declared.test:{port}/comments.atom",
        f"http://fallback.test:{port}/rss.xml",
    ])
    # A page that declares its feeds is not guessed at.
    assert not [p for h, p in asked if h == "declared" and p in ("/feed", "/rss", "/rss.xml")]
    # The guess was fetched to be checked: that GET was its first crawl.
    guessed = store.get_feed(f"http://fallback.test:{port}/rss.xml")
    assert guessed.status == "ok"
    assert guessed.entry_count == 1
    # The declared ones are added as the page names them, due for the next pass.
    for path in ("/posts.rss", "/comments.atom"):
        feed = store.get_feed(f"http://declared.test:{port}{path}")
        assert feed.status == "new", path
        assert feed.next_crawl_at is not None, path
        assert feed.next_crawl_at <= utcnow(), path


async def test_acceptance_hub_and_self_from_link_header_and_feed_are_stored(
    store: SqlStore,
) -> None:
    async def handle(request: web.Request) -> web.StreamResponse:
        if request.path == "/robots.txt":
            return web.Response(status=404)
        port = request.url.port
        if request.path == "/header.xml":
            return web.Response(
                body=_rss("h"),
                content_type="application/rss+xml",
                headers={"Link": f'<http://hub.test:{port}/hub>; rel="hub", '
                                 f'<http://pub.test:{port}/header.xml>; rel="self"'},
            )
        return web.Response(
            body=_rss("in-feed",
                      f'<atom:link rel="hub" href="http://hub2.test:{port}/"/>'
                      f'<atom:link rel="self" href="http://pub.test:{port}/infeed.xml"/>'),
            content_type="application/rss+xml",
        )

    async with loopback_server(handle) as port:
        urls = [f"http://pub.test:{port}/header.xml", f"http://pub.test:{port}/infeed.xml"]
        async with Crawler(store, loopback_settings(store.url)) as crawler:
            report = await crawler.add(urls)
    assert sorted(report.added) == sorted(urls)
    header = store.get_feed(urls[0])
    assert header.hub_urls == [f"http://hub.test:{port}/hub"]
    assert header.self_url == urls[0]
    infeed = store.get_feed(urls[1])
    assert infeed.hub_urls == [f"http://hub2.test:{port}/"]
    assert infeed.self_url == urls[1]

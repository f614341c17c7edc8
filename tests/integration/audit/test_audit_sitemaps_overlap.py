"""The sitemaps are read while the pages are crawled, and a crawl file never holds robots.txt
without its sitemaps (what a resumed crawl relies on: it reads them back instead of fetching
them again). A small site of our own on 127.0.0.1 (port 0) holds its sitemap back until the
crawl has reached its third level."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from aiohttp import web

from fairfetch.audit.crawler import CrawlOptions, crawl_site
from fairfetch.config import Settings
from fairfetch.testing import loopback_server

SITE = "sitemap-overlap.test"


def _page(title: str, body: str) -> str:
    return f"<html lang=en><head><title>{title}</title></head><body>{body}</body></html>"


@pytest.mark.parametrize("parse_process", [False, True], ids=["in-process", "writer-process"])
async def test_audit_pages_are_crawled_while_the_sitemap_is_read(
    tmp_path: Path, parse_process: bool
) -> None:
    out = tmp_path / "overlap.db"
    # What had been asked for, and what the crawl file held, when /b (the third level) was
    # asked for: by then levels 0 and 1 are fetched and built (the next level is formed from
    # them), and the sitemap has not answered yet. Their rows may still wait in the writer's
    # batch: levels end without a flush.
    seen_at_b: dict[str, object] = {}
    asked: list[str] = []
    sitemap_answered: list[bool] = []
    sitemap_may_answer = asyncio.Event()

    def url(path: str) -> str:
        return f"http://{SITE}:{port}{path}"

    async def handle(request: web.Request) -> web.StreamResponse:
        path = request.path
        asked.append(path)
        if path == "/robots.txt":
            return web.Response(text=f"User-agent: *\nSitemap: {url('/sitemap.xml')}\n")
        if path == "/sitemap.xml":
            # Held until the crawl reaches /b. If pages waited for the sitemap, /b would never
            # be asked for: after a minute the sitemap answers anyway and the test fails below
            # (a guard against hanging, not a measurement).
            try:
                await asyncio.wait_for(sitemap_may_answer.wait(), 60)
            except TimeoutError:
                pass
            sitemap_answered.append(True)
            locs = "".join(f"<url><loc>{url(p)}</loc></url>" for p in ("/", "/a", "/orphan"))
            return web.Response(
                text=f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>',
                content_type="application/xml",
            )
        if path == "/b":
            conn = sqlite3.connect(out)
            try:
                seen_at_b["asked"] = sorted(set(asked))
                seen_at_b["sitemap_answered"] = bool(sitemap_answered)
                seen_at_b["robots"] = conn.execute("SELECT COUNT(*) FROM robots").fetchone()[0]
                seen_at_b["sitemaps"] = conn.execute("SELECT COUNT(*) FROM sitemaps").fetchone()[0]
            finally:
                conn.close()
            sitemap_may_answer.set()
            return web.Response(text=_page("B", "b"), content_type="text/html")
        bodies = {"/": '<a href="/a">a</a>', "/a": '<a href="/b">b</a>', "/orphan": "alone"}
        if path in bodies:
            return web.Response(text=_page(path, bodies[path]), content_type="text/html")
        return web.Response(status=404)

    async with loopback_server(handle) as port:
        settings = Settings(allow_networks=("127.0.0.1/32",), resolve=("*.test:127.0.0.1",))
        stats = await crawl_site(
            url("/"), out, settings, CrawlOptions(parse_process=parse_process, concurrency=2)
        )

    assert seen_at_b == {
        "asked": ["/", "/a", "/b", "/robots.txt", "/sitemap.xml"], "sitemap_answered": False,
        "robots": 0, "sitemaps": 0,
    }
    conn = sqlite3.connect(out)
    try:
        pages = dict(conn.execute("SELECT url, source FROM pages WHERE state = 'done'"))
        robots = conn.execute("SELECT url, status FROM robots").fetchall()
        sitemaps = conn.execute("SELECT url, status, url_count FROM sitemaps").fetchall()
        meta = dict(conn.execute("SELECT key, value FROM meta"))
    finally:
        conn.close()
    # The sitemap's page no link reaches is crawled last, from the sitemap.
    assert pages == {
        url("/"): "start", url("/a"): "link", url("/b"): "link", url("/orphan"): "sitemap"
    }
    assert robots == [(url("/robots.txt"), 200)]
    assert sitemaps == [(url("/sitemap.xml"), 200, 3)]
    assert meta["sitemaps"] == "read"
    assert stats.pages_done == 4

"""The sitemap's pages no link reached are crawled last, in the order the sitemaps list them,
and a --max-pages crawl is cut short only when such a page is left out.

The crawl process no longer keeps the sitemaps' URLs while it crawls (they are read back from
the crawl file when the links run out); these pin what that must keep. A small site of our own
on 127.0.0.1 (port 0): two sitemaps through an index, the second repeating one URL of the
first, a foreign URL and a linked page among the listed ones."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from aiohttp import web

from fairfetch.audit.crawler import CrawlOptions, crawl_site
from fairfetch.config import Settings
from fairfetch.testing import loopback_server

SITE = "leftovers.test"
#: Listed by the sitemaps in this order (not alphabetical, not the links' order).
FIRST = ["/", "/z-orphan", "/linked", "/m-orphan"]
SECOND = ["/m-orphan", "/a-orphan", "http://elsewhere.test/x", "/q-orphan"]


def _pages(out: Path) -> tuple[list[tuple[str, str, int | None]], dict[str, str]]:
    conn = sqlite3.connect(out)
    try:
        rows = conn.execute(
            "SELECT url, source, depth FROM pages WHERE state = 'done' ORDER BY id"
        ).fetchall()
        meta = dict(conn.execute("SELECT key, value FROM meta"))
    finally:
        conn.close()
    return rows, meta


async def _crawl(out: Path, options: CrawlOptions) -> str:
    """Crawl the site into ``out``; its base URL."""
    def url(path: str) -> str:
        return path if path.startswith("http") else f"http://{SITE}:{port}{path}"

    async def handle(request: web.Request) -> web.StreamResponse:
        path = request.path
        if path == "/robots.txt":
            return web.Response(text=f"User-agent: *\nSitemap: {url('/index.xml')}\n")
        if path == "/index.xml":
            locs = "".join(f"<sitemap><loc>{url(p)}</loc></sitemap>" for p in ("/1.xml", "/2.xml"))
            return web.Response(text=f"<sitemapindex>{locs}</sitemapindex>")
        if path in ("/1.xml", "/2.xml"):
            listed = FIRST if path == "/1.xml" else SECOND
            locs = "".join(f"<url><loc>{url(p)}</loc></url>" for p in listed)
            return web.Response(text=f"<urlset>{locs}</urlset>", content_type="application/xml")
        body = '<a href="/linked">l</a>' if path == "/" else "page"
        html = f"<html lang=en><head><title>{path}</title></head><body>{body}</body></html>"
        return web.Response(text=html, content_type="text/html")

    async with loopback_server(handle) as port:
        settings = Settings(allow_networks=("127.0.0.1/32",), resolve=("*.test:127.0.0.1",))
        await crawl_site(url("/"), out, settings, options)
    return url("")


@pytest.mark.parametrize("parse_process", [False, True], ids=["in-process", "writer-process"])
async def test_audit_sitemap_leftovers_are_crawled_last_in_sitemap_order(
    tmp_path: Path, parse_process: bool
) -> None:
    out = tmp_path / "left.db"
    base = await _crawl(out, CrawlOptions(parse_process=parse_process))
    rows, meta = _pages(out)
    assert rows == [
        (base + "/", "start", 0),
        (base + "/linked", "link", 1),
        # Orphans: first seen order across the two sitemaps, each once, the foreign one not.
        (base + "/z-orphan", "sitemap", None),
        (base + "/m-orphan", "sitemap", None),
        (base + "/a-orphan", "sitemap", None),
        (base + "/q-orphan", "sitemap", None),
    ]
    assert meta["cut_short"] == ""


@pytest.mark.parametrize("parse_process", [False, True], ids=["in-process", "writer-process"])
@pytest.mark.parametrize(("max_pages", "cut"), [(6, ""), (5, "max_pages"), (2, "max_pages")])
async def test_audit_max_pages_is_cut_short_only_when_a_sitemap_page_is_left_out(
    tmp_path: Path, parse_process: bool, max_pages: int, cut: str
) -> None:
    out = tmp_path / "cap.db"
    await _crawl(out, CrawlOptions(parse_process=parse_process, max_pages=max_pages))
    rows, meta = _pages(out)
    assert meta["cut_short"] == cut
    assert len(rows) == min(max_pages, 6)

"""Sitemaps as real sites serve them: gzip'd (a .xml.gz file, or Content-Encoding: gzip), an
index that lists itself, a byte-order mark, a text/plain or missing content type, malformed
XML (read as far as it goes), URLs of other hosts (recorded, not crawled), a WordPress-style
urlset whose entries carry image and hreflang extensions, and a sitemap larger than the fetch
engine's default body cap but within sitemaps.org's 50 MB. A small site of our own on 127.0.0.1
(port 0)."""

from __future__ import annotations

import gzip
import sqlite3
from collections.abc import Callable
from pathlib import Path

from aiohttp import web

from fairfetch.audit.crawler import CrawlOptions, crawl_site
from fairfetch.config import Settings
from fairfetch.testing import loopback_server

SITE = "sitemaps-real.test"
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
EXT = (
    'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" '
    'xmlns:xhtml="http://www.w3.org/1999/xhtml"'
)


def _page(title: str) -> str:
    return f"<html lang=en><head><title>{title}</title></head><body>{title}</body></html>"


def _urlset(base: str, paths: list[str], extra: str = "") -> str:
    locs = "".join(f"<url><loc>{base}{p}</loc>{extra}</url>" for p in paths)
    return f'<?xml version="1.0" encoding="UTF-8"?><urlset {NS} {EXT}>{locs}</urlset>'


Sitemaps = dict[str, tuple[bytes, dict[str, str]]]


async def _crawl(
    tmp_path: Path, make: Callable[[str], Sitemaps], max_pages: int | None = None
) -> Path:
    """Crawl a one-page site whose robots.txt names the sitemaps ``make(base URL)`` gives
    (path -> body, headers); every other path answers a page."""
    out = tmp_path / "site.db"
    sitemaps: Sitemaps = {}

    async def handle(request: web.Request) -> web.StreamResponse:
        if request.path == "/robots.txt":
            lines = "".join(f"Sitemap: http://{SITE}:{port}{p}\n" for p in sitemaps)
            return web.Response(text=f"User-agent: *\n{lines}")
        if request.path in sitemaps:
            body, headers = sitemaps[request.path]
            return web.Response(body=body, headers=headers)
        if request.path.startswith("/wp-content/"):
            return web.Response(body=b"\x89PNG", content_type="image/png")
        return web.Response(text=_page(request.path), content_type="text/html")

    async with loopback_server(handle) as port:
        base = f"http://{SITE}:{port}"
        sitemaps.update(make(base))
        settings = Settings(allow_networks=("127.0.0.1/32",), resolve=("*.test:127.0.0.1",))
        await crawl_site(
            base + "/", out, settings, CrawlOptions(concurrency=2, max_pages=max_pages)
        )
    return out


def _rows(out: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(out)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _paths(out: Path, sql: str) -> set[str]:
    return {r[0].split(".test:", 1)[1].split("/", 1)[1] for r in _rows(out, sql)}


async def test_audit_sitemaps_gzip_bom_plain_type_index_loop_and_other_hosts(
    tmp_path: Path,
) -> None:
    xml = "application/xml"

    def make(base: str) -> Sitemaps:
        return {
            # An index that lists itself and a gzip'd child: read once each.
            "/index.xml": (
                f"<sitemapindex {NS}><sitemap><loc>{base}/index.xml</loc></sitemap>"
                f"<sitemap><loc>{base}/gz.xml.gz</loc></sitemap></sitemapindex>".encode(),
                {"Content-Type": xml},
            ),
            "/gz.xml.gz": (gzip.compress(_urlset(base, ["/from-gz"]).encode()),
                           {"Content-Type": "application/x-gzip"}),
            "/encoded.xml": (gzip.compress(_urlset(base, ["/from-encoded"]).encode()),
                             {"Content-Type": xml, "Content-Encoding": "gzip"}),
            "/bom.xml": (b"\xef\xbb\xbf" + _urlset(base, ["/from-bom"]).encode(),
                         {"Content-Type": xml}),
            "/plain.txt.xml": (_urlset(base, ["/plain"]).encode(),
                               {"Content-Type": "text/plain"}),
            # Cut short: read as far as it goes.
            "/broken.xml": (_urlset(base, ["/from-broken"]).encode()[:-12],
                            {"Content-Type": xml}),
            "/foreign.xml": (_urlset("http://elsewhere.test", ["/x"]).encode(),
                             {"Content-Type": xml}),
        }  # fmt: skip

    out = await _crawl(tmp_path, make)
    crawled = _paths(out, "SELECT url FROM pages WHERE source = 'sitemap' AND state = 'done'")
    assert crawled == {"from-gz", "from-encoded", "from-bom", "plain", "from-broken"}
    read = _rows(out, "SELECT url, status, kind, error FROM sitemaps ORDER BY url")
    assert [(u.rsplit("/", 1)[1], s, k, e) for u, s, k, e in read] == [
        ("bom.xml", 200, "urlset", None), ("broken.xml", 200, "urlset", None),
        ("encoded.xml", 200, "urlset", None), ("foreign.xml", 200, "urlset", None),
        ("gz.xml.gz", 200, "urlset", None), ("index.xml", 200, "sitemapindex", None),
        ("plain.txt.xml", 200, "urlset", None),
    ]  # fmt: skip
    # Another host's URL is listed (the rule sitemap-url-not-crawled names it), never fetched.
    listed = {r[0] for r in _rows(out, "SELECT url FROM sitemap_urls")}
    assert "http://elsewhere.test/x" in listed
    assert not _rows(out, "SELECT url FROM pages WHERE url LIKE '%elsewhere%'")


async def test_audit_sitemap_image_extension_is_no_page_url(tmp_path: Path) -> None:
    """Yoast (WordPress) lists each page's images in its sitemap entries: an <image:loc> is an
    image of the page, not a page of the site."""
    extra = (
        "<image:image><image:loc>BASE/wp-content/a.png</image:loc></image:image>"
        '<xhtml:link rel="alternate" hreflang="de" href="BASE/de/"/>'
    )
    out = await _crawl(tmp_path, lambda base: {
        "/sitemap.xml": (_urlset(base, ["/post"], extra.replace("BASE", base)).encode(),
                         {"Content-Type": "application/xml"}),
    })  # fmt: skip
    assert _paths(out, "SELECT url FROM sitemap_urls") == {"post"}
    assert _rows(out, "SELECT url_count FROM sitemaps") == [(1,)]


async def test_audit_sitemap_over_the_page_cap_within_50_mb_is_read(tmp_path: Path) -> None:
    """sitemaps.org allows 50 MB uncompressed; a 12 MB one (long URLs, 40,000 of them) is
    a sitemap, not a body too large."""
    paths = [f"/p/{i}/{'x' * 250}" for i in range(40_000)]

    def make(base: str) -> Sitemaps:
        body = _urlset(base, paths).encode()
        assert 10 * 1024 * 1024 < len(body) < 50 * 1024 * 1024
        return {"/big.xml": (body, {"Content-Type": "application/xml"})}

    out = await _crawl(tmp_path, make)
    assert _rows(out, "SELECT status, url_count, error FROM sitemaps") == [(200, 40_000, None)]


async def test_audit_sitemap_over_50000_urls_is_read_whole(tmp_path: Path) -> None:
    """sitemaps.org's limit is the publisher's to keep; a sitemap past it is still read whole
    (every URL recorded), not cut at 50,000."""
    paths = [f"/p/{i}" for i in range(50_001)]
    out = await _crawl(tmp_path, lambda base: {
        "/sitemap.xml": (_urlset(base, paths).encode(), {"Content-Type": "application/xml"}),
    }, max_pages=1)  # fmt: skip
    assert _rows(out, "SELECT status, url_count, error FROM sitemaps") == [(200, 50_001, None)]
    assert _rows(out, "SELECT COUNT(*) FROM sitemap_urls") == [(50_001,)]

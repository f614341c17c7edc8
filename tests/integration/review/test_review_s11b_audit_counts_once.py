"""Second review of bc1eecd / 0486f0c: what was not checked or not followed is counted once per
URL, the same in a crawl of one run and in a crawl cut by --max-pages and resumed.

A site on 127.0.0.1 (port 0). Its externals live on 127.0.0.2 (loopback, not allowed): with
``max_externals`` 0 none is even registered, so nothing is sent there."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from aiohttp import web

from fairfetch.audit.crawler import CrawlOptions, CrawlStats, crawl_site
from fairfetch.audit.view import load_view
from fairfetch.config import Settings
from fairfetch.testing import loopback_server

PAGES = 8
TRAP = "/x/x/x/"


def _page(title: str, body: str) -> web.Response:
    return web.Response(
        text=f"<html><head><title>{title}</title></head><body>{body}</body></html>",
        content_type="text/html",
    )


async def _shared_external(request: web.Request) -> web.Response:
    """Every page links to the same external URL (a shared footer link)."""
    if request.path in ("/robots.txt", "/sitemap.xml"):
        return web.Response(status=404)
    n = int(request.path.strip("/p") or 0) if request.path != "/" else 0
    nxt = f'<a href="/p{n + 1}">next</a>' if n + 1 < PAGES else ""
    return _page(f"p{n}", f'{nxt} <a href="http://shared.far.test/">far</a>')


async def _crawl(port: int, out: Path, **options: object) -> CrawlStats:
    settings = Settings(allow_networks=("127.0.0.1/32",),
                        resolve=("site.test:127.0.0.1", "*.far.test:127.0.0.2"))
    return await crawl_site(
        f"http://site.test:{port}/", out, settings,
        CrawlOptions(parse_process=False, **options),  # type: ignore[arg-type]
    )  # fmt: skip


def _meta(path: Path, key: str) -> dict[str, int]:
    row = sqlite3.connect(path).execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return json.loads(row[0]) if row and row[0] else {}


async def test_review_s11b_an_external_over_the_cap_is_counted_once(tmp_path: Path) -> None:
    async with loopback_server(_shared_external) as port:
        whole = await _crawl(port, tmp_path / "whole.crawl", use_sitemaps=False, max_externals=0)
        cut = await _crawl(
            port, tmp_path / "cut.crawl", use_sitemaps=False, max_externals=0, max_pages=3
        )
        assert cut.cut_short == "max_pages"
        resumed = await _crawl(
            port, tmp_path / "cut.crawl", use_sitemaps=False, max_externals=0, resume=True
        )
    # One URL was not checked: one externals row says so, and the count says one.
    rows = sqlite3.connect(tmp_path / "whole.crawl").execute(
        "SELECT url, not_checked FROM externals"
    ).fetchall()
    assert rows == [("http://shared.far.test/", "over_cap")]
    assert whole.pages_done == PAGES
    assert whole.not_checked == {"over_cap": 1}
    assert _meta(tmp_path / "whole.crawl", "not_checked") == {"over_cap": 1}
    # The same whether or not the crawl was cut and resumed.
    assert resumed.not_checked == {"over_cap": 1}
    assert _meta(tmp_path / "cut.crawl", "not_checked") == {"over_cap": 1}


async def _trap_in_sitemap(request: web.Request) -> web.Response:
    """The home page links to a spiral URL that the site's sitemap also lists."""
    host = request.host
    if request.path == "/robots.txt":
        return web.Response(status=404)
    if request.path == "/sitemap.xml":
        return web.Response(
            text='<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/'
            f'sitemap/0.9"><url><loc>http://{host}{TRAP}</loc></url></urlset>',
            content_type="application/xml",
        )
    if request.path == "/":
        return _page("home", f'<a href="{TRAP}">spiral</a> <a href="/about">about</a>')
    return _page(request.path, "text")


async def test_review_s11b_a_trap_url_a_sitemap_lists_is_crawled_not_counted_skipped(
    tmp_path: Path,
) -> None:
    """A sitemap's URL is crawled even when it looks like a trap (docs/audit.md: a list someone
    wrote is finite). Found first by a link, it was counted 'not followed' and crawled too: the
    summary and the Overview said a URL the crawl fetched was skipped, the rule (which asks of
    the targets no page holds) named nothing, and a resumed crawl counted 0 for the same file."""
    async with loopback_server(_trap_in_sitemap) as port:
        whole = await _crawl(port, tmp_path / "whole.crawl")
        cut = await _crawl(port, tmp_path / "cut.crawl", max_pages=1)
        assert cut.cut_short == "max_pages"
        resumed = await _crawl(port, tmp_path / "cut.crawl", resume=True)
    path = tmp_path / "whole.crawl"
    crawled = sqlite3.connect(path).execute(
        "SELECT source, state FROM pages WHERE url LIKE ?", (f"%{TRAP}",)
    ).fetchall()
    assert crawled == [("sitemap", "done")]  # the sitemap's URL is crawled, as documented
    traps = {k: n for k, n in whole.links_skipped.items() if k.startswith("trap: ")}
    assert traps == {}
    assert _meta(path, "links_skipped") == {}
    assert load_view(sqlite3.connect(path)).trap_links == []
    # The same count whether or not the crawl was cut and resumed.
    assert resumed.links_skipped == whole.links_skipped
    assert _meta(tmp_path / "cut.crawl", "links_skipped") == _meta(path, "links_skipped")

"""A page reachable only through a ``<meta http-equiv="refresh">`` is crawled, and a foreign
refresh destination is status-checked (via ``refresh``): a small site of our own on 127.0.0.1
(port 0), crawled for real."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from aiohttp import web

from fairfetch.audit.crawler import CrawlOptions, crawl_site
from fairfetch.audit.rules import run_rules
from fairfetch.audit.view import load_view
from fairfetch.config import Settings
from fairfetch.testing import loopback_server

SITE = "refresh-audit.test"
SHOP = "shop.refresh-elsewhere.test"


def _page(title: str, head: str = "", body: str = "") -> str:
    return f"<html lang=en><head><title>{title}</title>{head}</head><body>{body}</body></html>"


async def test_audit_meta_refresh_destinations_crawled_and_checked(tmp_path: Path) -> None:

    async def handle(request: web.Request) -> web.StreamResponse:
        host = request.host.split(":")[0]
        if host == SHOP:
            status = 200 if request.path == "/live" else 404
            return web.Response(status=status, text="shop", content_type="text/html")
        pages = {
            "/": _page("Home", body='<a href="/old">old</a><a href="/away">away</a>'),
            "/old": _page("Old", '<meta http-equiv="refresh" content="0; url=/landing">'),
            "/away": _page("Away", f'<meta http-equiv="refresh" content="3; '
                                   f'url=http://{SHOP}:{port}/pulled">'),
            "/landing": _page("Landing", body="only a refresh leads here"),
        }
        if request.path in pages:
            return web.Response(text=pages[request.path], content_type="text/html")
        return web.Response(status=404)

    out = tmp_path / "refresh.db"
    async with loopback_server(handle) as port:
        settings = Settings(allow_networks=("127.0.0.1/32",), resolve=("*.test:127.0.0.1",))
        await crawl_site(
            f"http://{SITE}:{port}/", out, settings,
            CrawlOptions(parse_process=False, use_sitemaps=False),
        )  # fmt: skip

    conn = sqlite3.connect(out)
    try:
        landing = conn.execute(
            "SELECT state, status, source FROM pages WHERE url = ?",
            (f"http://{SITE}:{port}/landing",),
        ).fetchone()
        external = conn.execute(
            "SELECT via, status FROM externals WHERE url = ?",
            (f"http://{SHOP}:{port}/pulled",),
        ).fetchone()
        findings = run_rules(load_view(conn)).by_rule()["meta-refresh"]
    finally:
        conn.close()
    assert landing == ("done", 200, "link")
    assert external == ("refresh", 404)
    assert sorted((f.url, f.detail) for f in findings) == [
        (f"http://{SITE}:{port}/away",
         f"refreshes to http://{SHOP}:{port}/pulled after 3 s, which answers 404"),
        (f"http://{SITE}:{port}/old", f"refreshes to http://{SITE}:{port}/landing after 0 s"),
    ]

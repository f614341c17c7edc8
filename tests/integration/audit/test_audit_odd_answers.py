"""Pages that answer oddly, crawled for real from a small site of our own on 127.0.0.1
(port 0): a 3xx that names nowhere to go, and a page the site throttles before serving it."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from aiohttp import web

from fairfetch.audit.crawler import CrawlOptions, CrawlStats, crawl_site
from fairfetch.audit.rules import run_rules
from fairfetch.audit.view import load_view
from fairfetch.config import Settings
from fairfetch.testing import loopback_server

SITE = "odd-audit.test"
HOME = (
    "<!doctype html><html lang=en><head><title>Home of the odd audit site</title></head>"
    '<body><h1>Home</h1><a href="/nowhere">nowhere</a><a href="/hop">hop</a>'
    '<a href="/busy">busy</a></body></html>'
)

ASSETS = (
    "<!doctype html><html lang=en><head><title>Assets of the odd audit site</title></head>"
    '<body><img src="/busy.png" alt="busy"></body></html>'
)


@dataclass
class OddSite:
    port: int = 0
    busy_left: int = 0  # how many more times /busy answers 429
    busy_after: str = "0"
    seen: list[str] = field(default_factory=list)

    def url(self, path: str = "/") -> str:
        return f"http://{SITE}:{self.port}{path}"


@pytest.fixture
async def odd_site() -> AsyncIterator[OddSite]:
    odd = OddSite()

    async def handle(request: web.Request) -> web.StreamResponse:
        odd.seen.append(request.path)
        if request.path == "/":
            return web.Response(text=HOME, content_type="text/html")
        if request.path == "/nowhere":
            return web.Response(status=302)  # no Location header
        if request.path == "/hop":
            raise web.HTTPMovedPermanently("/nowhere")
        if request.path == "/assets":
            return web.Response(text=ASSETS, content_type="text/html")
        if request.path == "/busy.png":
            return web.Response(status=429, headers={"Retry-After": "0"})
        if request.path == "/busy":
            if odd.busy_left > 0:
                odd.busy_left -= 1
                return web.Response(status=429, headers={"Retry-After": odd.busy_after})
            return web.Response(
                text="<html><head><title>Busy</title></head><body>ok</body></html>",
                content_type="text/html",
            )
        return web.Response(status=404)

    async with loopback_server(handle) as port:
        odd.port = port
        yield odd


async def _crawl(odd: OddSite, out: Path, path: str = "/", **kw: object) -> CrawlStats:
    settings = Settings(allow_networks=("127.0.0.1/32",), resolve=("*.test:127.0.0.1",))
    return await crawl_site(
        odd.url(path), out, settings, CrawlOptions(parse_process=False, use_sitemaps=False),
        **kw,  # type: ignore[arg-type]
    )


async def test_audit_redirect_without_location_crawled(odd_site: OddSite, tmp_path: Path) -> None:
    out = tmp_path / "odd.db"
    await _crawl(odd_site, out)
    conn = sqlite3.connect(out)
    try:
        row = conn.execute(
            "SELECT status, redirect_to, error FROM pages WHERE url = ?",
            (odd_site.url("/nowhere"),),
        ).fetchone()
        by_rule = run_rules(load_view(conn)).by_rule()
    finally:
        conn.close()
    assert row == (302, None, "redirect: 302 without a Location header")
    assert {f.url for f in by_rule["redirect-without-location"]} == {odd_site.url("/nowhere")}
    assert [(f.url, f.detail) for f in by_rule["redirect-to-error"]] == [
        (odd_site.url("/hop"), odd_site.url("/nowhere") + " (302 without a usable Location)")
    ]


async def test_audit_throttle_wait_shows_in_progress(odd_site: OddSite, tmp_path: Path) -> None:
    """Each wait the site asks for is on the progress (what, how long, until when, which
    retry), cleared once over; the page is fetched again and stored with its final answer."""
    odd_site.busy_left = 2
    snapshots: list[str] = []

    def progress(s: CrawlStats) -> None:
        if not snapshots or snapshots[-1] != s.waiting:
            snapshots.append(s.waiting)

    out = tmp_path / "busy.db"
    stats = await _crawl(odd_site, out, progress=progress)
    busy = odd_site.url("/busy")
    waits = [w for w in snapshots if w]
    assert len(waits) == 2, snapshots
    for n, w in enumerate(waits, 1):
        assert w.startswith(f"site throttled {busy} (429, Retry-After 0): waiting 0 s until ")
        assert w.endswith(f" UTC, then asking again ({n}/3)")
    # Every wait was over before the crawl went on; the last report has none.
    assert snapshots[-1] == ""
    assert snapshots.index(waits[1]) > snapshots.index(waits[0]) + 1
    assert stats.waiting == ""
    assert stats.throttle_waits == 2
    assert odd_site.seen.count("/busy") == 3
    conn = sqlite3.connect(out)
    try:
        row = conn.execute("SELECT status, error FROM pages WHERE url = ?", (busy,)).fetchone()
    finally:
        conn.close()
    assert row == (200, None)


async def test_audit_last_throttle_is_honoured_too(odd_site: OddSite, tmp_path: Path) -> None:
    """A page still throttled after three retries is stored as throttled, and the site's last
    Retry-After binds the rest of the crawl as the first three did (it was dropped: the next
    pages were asked at once)."""
    odd_site.busy_left = 10
    waits: list[str] = []

    def progress(s: CrawlStats) -> None:
        if s.waiting and (not waits or waits[-1] != s.waiting):
            waits.append(s.waiting)

    out = tmp_path / "busy.db"
    stats = await _crawl(odd_site, out, progress=progress)
    assert odd_site.seen.count("/busy") == 4
    assert stats.throttle_waits == 4
    assert stats.waiting == ""
    assert [w.rsplit(", ", 1)[1] for w in waits] == [
        "then asking again (1/3)", "then asking again (2/3)", "then asking again (3/3)",
        "not asking again: recorded as throttled",
    ]
    conn = sqlite3.connect(out)
    try:
        row = conn.execute(
            "SELECT status, error FROM pages WHERE url = ?", (odd_site.url("/busy"),)
        ).fetchone()
    finally:
        conn.close()
    assert row == (429, "throttled: 429 (Retry-After 0)")


async def test_audit_throttled_asset_pauses_the_site(odd_site: OddSite, tmp_path: Path) -> None:
    """A 429 on one of the site's own assets is the site's instruction too: the crawl pauses
    (and says so) as for a page; the asset is counted as not checked, never broken."""
    waits: list[str] = []

    def progress(s: CrawlStats) -> None:
        if s.waiting and (not waits or waits[-1] != s.waiting):
            waits.append(s.waiting)

    stats = await _crawl(odd_site, tmp_path / "assets.db", path="/assets", progress=progress)
    png = odd_site.url("/busy.png")
    assert stats.throttle_waits == 1
    assert len(waits) == 1
    assert waits[0].startswith(f"site throttled {png} (429, Retry-After 0): waiting 0 s until ")
    assert waits[0].endswith(" UTC, status check counted as not checked (throttled)")
    assert stats.not_checked == {"throttled": 1}

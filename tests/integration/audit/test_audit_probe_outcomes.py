"""What a status check ends as when the far end throttles, loops or does not answer (and what
a crawl whose start URL leaves the site ends as).

A small site of our own on 127.0.0.1 (port 0): its page links to, loads from and redirects to
foreign hosts that answer 429, loop, or refuse connections.
"""

from __future__ import annotations

import csv
import socket
import sqlite3
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from aiohttp import web

from fairfetch.audit.crawler import CrawlOptions, CrawlStats, crawl_site
from fairfetch.audit.export import export_crawl
from fairfetch.audit.rules import run_rules
from fairfetch.audit.view import load_view
from fairfetch.config import Settings
from fairfetch.errors import AuditError
from fairfetch.testing import loopback_server

SITE = "mini-audit.test"
BUSY = "busy-elsewhere.test"
LOOPS = "loops-elsewhere.test"
DEAD = "dead-elsewhere.test"
NOHEAD = "nohead-elsewhere.test"
ROBOTS_DOWN = "static." + SITE  # in the site's scope with --domain; its robots.txt fails


def _page(port: int) -> str:
    busy = f"http://{BUSY}:{port}"
    return (
        "<!doctype html><html lang=en><head><title>Home of the mini audit site</title></head>"
        "<body><h1>Home</h1>"
        f'<a href="{busy}/hot">busy</a>'
        f'<img src="{busy}/hot.png" alt="busy" width=1 height=1>'
        '<a href="/go/busy">go busy</a>'
        f'<a href="http://{LOOPS}:{port}/a">loops</a>'
        '<a href="/go/loop">go loop</a>'
        '<a href="/go/dead">go dead</a>'
        f'<a href="http://{NOHEAD}:{port}/page">no HEAD</a>'
        "</body></html>"
    )


V6_PAGE = (
    "<!doctype html><html lang=en><head><title>IPv6 literals</title></head><body>"
    '<a href="http://[::1]:{port}/x">loopback v6</a><a href="http://[FD00::1]/">private v6</a>'
    '<img src="http://[fd00::2]/i.png" alt="v6"></body></html>'
)


ASSETS_PAGE = (
    "<!doctype html><html lang=en><head><title>Assets</title>"
    '<script src="/private/app.js"></script><script src="/public/app.js"></script></head>'
    '<body><img src="/private/staff.png" alt="staff"><img src="/public/ok.png" alt="ok">'
    "</body></html>"
)


ROBOTS_DOWN_PAGE = (
    "<!doctype html><html lang=en><head><title>Robots down</title></head><body>"
    '<img src="http://{host}:{port}/logo.png" alt="logo"></body></html>'
)


@dataclass
class MiniWeb:
    port: int
    seen: list[tuple[str, str, str]]
    dead_port: int = 0

    def url(self, host: str, path: str = "/") -> str:
        return f"http://{host}:{self.port}{path}"


@pytest.fixture
async def mini_web() -> AsyncIterator[MiniWeb]:
    seen: list[tuple[str, str, str]] = []
    web_ = MiniWeb(0, seen)

    async def handle(request: web.Request) -> web.StreamResponse:
        host = request.headers.get("Host", "").rsplit(":", 1)[0]
        seen.append((request.method, host, request.path))
        if host == BUSY:
            return web.Response(status=429, headers={"Retry-After": "3600"})
        if host == ROBOTS_DOWN:
            if request.path == "/robots.txt":
                return web.Response(status=503)  # no Retry-After: an error, not a throttle
            return web.Response(text="fine")
        if host == NOHEAD:
            return web.Response(status=501 if request.method == "HEAD" else 200)
        if host == LOOPS:
            raise web.HTTPMovedPermanently("/b" if request.path == "/a" else "/a")
        if host == "www." + SITE:
            return web.Response(text="<html><body><a href='/a'>a</a></body></html>",
                                content_type="text/html")
        if host == SITE:
            if request.path == "/moved":
                raise web.HTTPMovedPermanently(f"http://www.{SITE}:{web_.port}/")
            if request.path == "/":
                return web.Response(text=_page(web_.port), content_type="text/html")
            if request.path == "/robots.txt":
                return web.Response(text="User-agent: *\nDisallow: /private/\n")
            if request.path == "/assets":
                return web.Response(text=ASSETS_PAGE, content_type="text/html")
            if request.path in ("/public/ok.png", "/public/app.js"):
                return web.Response(body=b"x", content_type="application/octet-stream")
            if request.path == "/robots-down":
                page = ROBOTS_DOWN_PAGE.format(host=ROBOTS_DOWN, port=web_.port)
                return web.Response(text=page, content_type="text/html")
            if request.path == "/v6":
                return web.Response(text=V6_PAGE.format(port=web_.port), content_type="text/html")
            if request.path == "/go/busy":
                raise web.HTTPMovedPermanently(f"http://{BUSY}:{web_.port}/item")
            if request.path == "/go/loop":
                raise web.HTTPMovedPermanently(f"http://{LOOPS}:{web_.port}/a")
            if request.path == "/go/dead":
                raise web.HTTPMovedPermanently(f"http://{DEAD}:{web_.dead_port}/product")
        return web.Response(status=404)

    # Bound and not listening: connections to it are refused while we hold it.
    with socket.socket() as dead:
        dead.bind(("127.0.0.1", 0))
        web_.dead_port = dead.getsockname()[1]
        async with loopback_server(handle) as port:
            web_.port = port
            yield web_


async def _crawl(mini: MiniWeb, out: Path, path: str = "/") -> CrawlStats:
    settings = Settings(allow_networks=("127.0.0.1/32",), resolve=("*.test:127.0.0.1",))
    return await crawl_site(
        mini.url(SITE, path), out, settings,
        CrawlOptions(parse_process=False, use_sitemaps=False),
    )


async def test_audit_throttled_far_end_is_not_checked_never_broken(
    mini_web: MiniWeb, tmp_path: Path
) -> None:
    """A 429 is an instruction about when to ask, not a verdict on the URL (same for 503 +
    Retry-After): the link, the image and the redirect destination are counted as not checked,
    with the reason, and no rule calls them broken."""
    out = tmp_path / "mini.db"
    stats = await _crawl(mini_web, out)
    assert [h for m, h, p in mini_web.seen if h == BUSY]  # they were asked
    db = sqlite3.connect(out)
    rows = db.execute(
        "SELECT url, via, checked_at, not_checked FROM externals ORDER BY url"
    ).fetchall()
    busy = [r for r in rows if f"//{BUSY}:" in r[0]]
    assert [(r[1], r[2], r[3]) for r in busy] == [
        ("link", None, "throttled"), ("image", None, "throttled"), ("redirect", None, "throttled")
    ]
    assert stats.not_checked == {"throttled": 3}
    run = run_rules(load_view(db))
    judged = [f for f in run.findings
              if f.rule_id in {"broken-external-link", "broken-image", "redirect-to-error"}
              and BUSY in f.url + f.detail]
    assert judged == []
    not_checked = {f.url: f.detail for f in run.findings if f.rule_id == "external-not-checked"}
    assert set(not_checked) == {r[0] for r in busy}
    assert set(not_checked.values()) == {"throttled"}



async def test_audit_far_end_that_never_serves_a_page_is_reported(
    mini_web: MiniWeb, tmp_path: Path
) -> None:
    """A link into a foreign redirect loop, and a redirect to a loop or to a host that does
    not answer, lead nowhere: they are findings, not silence."""
    out = tmp_path / "mini.db"
    await _crawl(mini_web, out)
    run = run_rules(load_view(sqlite3.connect(out)))
    by_rule: dict[str, list[str]] = {}
    for f in run.findings:
        by_rule.setdefault(f.rule_id, []).append(f"{f.url} {f.detail}")
    broken = by_rule.get("broken-external-link", [])
    assert any(f"//{LOOPS}:{mini_web.port}/a" in d and "loop" in d for d in broken), broken
    to_error = by_rule.get("redirect-to-error", [])
    assert any(d.startswith(mini_web.url(SITE, "/go/loop ")) and "loop" in d
               for d in to_error), to_error
    assert any(d.startswith(mini_web.url(SITE, "/go/dead ")) and "connect" in d
               for d in to_error), to_error
    assert not any("/go/busy" in d for d in to_error)
    # The Broken Links sheet agrees with the rule.
    export_crawl(out, csv_dir=tmp_path / "csv")
    with (tmp_path / "csv" / "broken_links.csv").open(encoding="utf-8") as fh:
        targets = [row[1] for row in csv.reader(fh)][1:]
    assert f"http://{LOOPS}:{mini_web.port}/a" in targets
    assert not any(BUSY in t for t in targets)


async def test_audit_ipv6_literal_links_are_refused_not_fatal(
    mini_web: MiniWeb, tmp_path: Path
) -> None:
    """A link to an IPv6 literal kept its brackets: it was stored as "http://::1:PORT/x",
    which the fetch engine cannot parse, and the status check's error ended the whole crawl.
    Loopback and private IPv6 are outside the perimeter: refused, counted, never connected."""
    out = tmp_path / "v6.db"
    stats = await _crawl(mini_web, out, "/v6")
    db = sqlite3.connect(out)
    rows = db.execute("SELECT url, via, not_checked FROM externals ORDER BY rowid").fetchall()
    assert rows == [
        (f"http://[::1]:{mini_web.port}/x", "link", "perimeter"),
        ("http://[fd00::1]/", "link", "perimeter"),
        ("http://[fd00::2]/i.png", "image", "perimeter"),
    ]
    assert stats.not_checked == {"perimeter": 3}
    assert {h for _m, h, _p in mini_web.seen} == {SITE}
    assert db.execute("SELECT value FROM meta WHERE key = 'finished_at'").fetchone()


async def test_audit_site_assets_disallowed_by_robots_are_not_requested(
    mini_web: MiniWeb, tmp_path: Path
) -> None:
    """The audited site's robots.txt binds its images and scripts as it binds its pages: a
    disallowed asset is not requested, it is counted as not checked, and it is not broken."""
    out = tmp_path / "assets.db"
    stats = await _crawl(mini_web, out, "/assets")
    asked = {p for _m, h, p in mini_web.seen if h == SITE}
    assert "/public/ok.png" in asked
    assert "/public/app.js" in asked
    assert not {p for p in asked if p.startswith("/private/")}
    db = sqlite3.connect(out)
    rows = db.execute(
        "SELECT url, status, error FROM images UNION ALL SELECT url, status, error FROM resources"
    ).fetchall()
    private = {r[0].rsplit("/", 1)[1]: r for r in rows if "/private/" in r[0]}
    assert set(private) == {"staff.png", "app.js"}
    assert all(r[1] is None and (r[2] or "").startswith("robots") for r in private.values())
    assert stats.not_checked == {"robots": 2}
    run = run_rules(load_view(db))
    assert not [f for f in run.findings if f.rule_id.startswith("broken-")]


async def test_audit_head_501_falls_back_to_get(mini_web: MiniWeb, tmp_path: Path) -> None:
    out = tmp_path / "mini.db"
    await _crawl(mini_web, out)
    row = sqlite3.connect(out).execute(
        "SELECT status, method, checked_at IS NOT NULL FROM externals WHERE url = ?",
        (f"http://{NOHEAD}:{mini_web.port}/page",),
    ).fetchone()
    assert row == (200, "GET", 1)
    assert [m for m, h, _p in mini_web.seen if h == NOHEAD] == ["HEAD", "GET"]


async def test_audit_start_url_redirecting_off_the_site_is_an_error(
    mini_web: MiniWeb, tmp_path: Path
) -> None:
    """http://example.test/ -> http://www.example.test/ (another host): an audit of one
    redirect says nothing. The error names where the start URL went and what to do."""
    out = tmp_path / "moved.db"
    start = mini_web.url(SITE, "/moved")
    with pytest.raises(AuditError) as info:
        await _crawl(mini_web, out, "/moved")
    message = str(info.value)
    assert start in message
    assert mini_web.url("www." + SITE, "/") in message
    assert "--domain" in message
    assert not out.exists()
    settings = Settings(allow_networks=("127.0.0.1/32",), resolve=("*.test:127.0.0.1",))
    stats = await crawl_site(start, out, settings, CrawlOptions(
        parse_process=False, use_sitemaps=False, registrable_domain=True))
    assert stats.pages_done == 3  # /moved, www's /, www's /a


async def test_audit_asset_behind_a_failing_robots_txt_is_not_checked_never_broken(
    mini_web: MiniWeb, tmp_path: Path
) -> None:
    """An in-scope host whose robots.txt answers 5xx may not be asked (RFC 9309: assume
    complete disallow): its image is counted as not checked with that reason (the fetch
    engine's kind ``robots_unreachable``), never reported broken."""
    out = tmp_path / "robots-down.db"
    settings = Settings(allow_networks=("127.0.0.1/32",), resolve=("*.test:127.0.0.1",))
    stats = await crawl_site(
        mini_web.url(SITE, "/robots-down"), out, settings,
        CrawlOptions(parse_process=False, use_sitemaps=False, registrable_domain=True),
    )
    assert ("GET", ROBOTS_DOWN, "/robots.txt") in mini_web.seen
    assert not [s for s in mini_web.seen if s[1] == ROBOTS_DOWN and s[2] == "/logo.png"]
    db = sqlite3.connect(out)
    [(status, error)] = db.execute("SELECT status, error FROM images").fetchall()
    assert status is None
    assert (error or "").startswith("robots_unreachable")
    assert stats.not_checked == {"robots_unreachable": 1}
    run = run_rules(load_view(db))
    assert not [f for f in run.findings if f.rule_id.startswith("broken-")]

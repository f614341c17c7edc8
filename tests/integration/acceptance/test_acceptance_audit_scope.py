"""Issue 7, "Crawl" and "Probe queue": breadth first within the start URL's site — the host by
default, the registrable domain with a flag — and "nothing parsed from foreign sites".

The suite crawls with ``registrable_domain=True`` (and checks that a start URL redirecting to
another host is refused by default), but no test put a sibling host's link on a page and looked
where it went under each scope, or checked that a foreign page's own links are never followed.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from aiohttp import web

from fairfetch.audit.crawler import CrawlOptions, crawl_site
from fairfetch.config import Settings
from fairfetch.testing import loopback_server

SITE = "scope.test"
WWW = "www." + SITE
FOREIGN = "elsewhere-scope.test"


def _html(title: str, body: str) -> web.Response:
    return web.Response(
        text=f"<!doctype html><html lang=en><head><title>{title}</title></head><body>{body}"
        "</body></html>",
        content_type="text/html",
    )


async def test_acceptance_scope_host_by_default_domain_with_the_flag(tmp_path: Path) -> None:
    seen: list[tuple[str, str, str]] = []

    async def handle(request: web.Request) -> web.StreamResponse:
        host = request.host.split(":")[0]
        seen.append((request.method, host, request.path))
        if request.path == "/robots.txt" or request.path.startswith("/sitemap"):
            return web.Response(status=404)
        if host == FOREIGN:  # a foreign page full of links: none may be followed
            return _html("Foreign", '<a href="/deeper">deeper</a><img src="/pic.png" alt="x">')
        if request.path == "/":
            port = request.url.port
            return _html("Home page of scope", (
                '<a href="/a">a</a>'
                f'<a href="http://{WWW}:{port}/b">www b</a>'
                f'<a href="http://{FOREIGN}:{port}/c">foreign c</a>'
            ))
        return _html(f"Page {request.path}", '<a href="/">home</a>')

    settings = Settings(allow_networks=("127.0.0.1/32",), resolve=("*.test:127.0.0.1",))
    async with loopback_server(handle) as port:
        results = {}
        for name, domain in (("host", False), ("domain", True)):
            out = tmp_path / f"{name}.db"
            await crawl_site(
                f"http://{SITE}:{port}/", out, settings,
                CrawlOptions(parse_process=False, use_sitemaps=False, registrable_domain=domain),
            )
            db = sqlite3.connect(out)
            pages = {u.split(f":{port}")[0].split("//")[1] + u.split(f":{port}")[1]
                     for (u,) in db.execute("SELECT url FROM pages WHERE state = 'done'")}
            externals = {u.split("//")[1].split(":")[0]: (status, checked)
                         for u, status, checked in db.execute(
                             "SELECT url, status, checked_at FROM externals")}
            results[name] = (pages, externals)

    host_pages, host_externals = results["host"]
    assert host_pages == {f"{SITE}/", f"{SITE}/a"}
    assert host_externals[WWW][0] == 200  # the sibling host: status-checked, not crawled
    assert host_externals[FOREIGN][0] == 200
    domain_pages, domain_externals = results["domain"]
    # www.scope.test/b links to "/", whose page links "/a": on www, both are the site too.
    assert domain_pages == {f"{SITE}/", f"{SITE}/a", f"{WWW}/b", f"{WWW}/", f"{WWW}/a"}
    assert WWW not in domain_externals
    assert domain_externals[FOREIGN][0] == 200
    # Nothing parsed from foreign sites: its page was only status-checked, its links never asked.
    foreign = [(m, p) for m, h, p in seen if h == FOREIGN]
    assert foreign
    assert {p for _, p in foreign} <= {"/c", "/robots.txt"}
    assert not any(p in ("/deeper", "/pic.png") for _, p in foreign)

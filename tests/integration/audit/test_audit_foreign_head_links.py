"""A canonical or an hreflang alternate on another site is status-checked like an external link
and judged by its own rule: a page naming a dead or redirecting foreign URL as its preferred or
alternate version was silent before (only the audited site's own pages were looked up).

A small site on 127.0.0.1 (port 0) whose home names foreign head links that answer 404, redirect,
or answer 200; none of them is an <a> link, so none is a "broken external link" either.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from fairfetch.audit.crawler import CrawlOptions, crawl_site
from fairfetch.audit.rules import run_rules
from fairfetch.audit.view import load_view
from fairfetch.config import Settings
from fairfetch.testing import loopback_server

SITE = "own-site.test"
MIRROR = "mirror-elsewhere.test"  # the canonical: 404
FR = "fr-elsewhere.test"  # an alternate that redirects
DE = "de-elsewhere.test"  # an alternate that is fine
MOVED = "moved-elsewhere.test"  # a second page's canonical: redirects


def _home(port: int) -> str:
    return (
        "<!doctype html><html lang=en><head><title>Home of the own site</title>"
        f'<link rel="canonical" href="http://{MIRROR}:{port}/home">'
        f'<link rel="alternate" hreflang="fr" href="http://{FR}:{port}/accueil">'
        f'<link rel="alternate" hreflang="de" href="http://{DE}:{port}/start">'
        '<link rel="alternate" hreflang="x-default" href="/">'
        '</head><body><h1>Home</h1><a href="/about">about</a></body></html>'
    )


def _about(port: int) -> str:
    return (
        "<!doctype html><html lang=en><head><title>About the own site</title>"
        f'<link rel="canonical" href="http://{MOVED}:{port}/about">'
        '</head><body><h1>About</h1><a href="/">home</a></body></html>'
    )


@pytest.fixture
async def port() -> AsyncIterator[int]:
    box = {"port": 0}

    async def handle(request: web.Request) -> web.StreamResponse:
        host = request.headers.get("Host", "").rsplit(":", 1)[0]
        p = box["port"]
        if host == SITE and request.path == "/":
            return web.Response(text=_home(p), content_type="text/html")
        if host == SITE and request.path == "/about":
            return web.Response(text=_about(p), content_type="text/html")
        if host == FR and request.path == "/accueil":
            raise web.HTTPMovedPermanently(f"http://{FR}:{p}/fr/")
        if host == MOVED and request.path == "/about":
            raise web.HTTPFound(f"http://{MOVED}:{p}/new-about")
        if (host, request.path) in ((FR, "/fr/"), (DE, "/start"), (MOVED, "/new-about")):
            return web.Response(text="<html><body>ok</body></html>", content_type="text/html")
        return web.Response(status=404)

    async with loopback_server(handle) as p:
        box["port"] = p
        yield p


async def test_audit_foreign_canonical_and_hreflang_are_checked_and_judged(
    port: int, tmp_path: Path
) -> None:
    out = tmp_path / "heads.db"
    settings = Settings(allow_networks=("127.0.0.1/32",), resolve=("*.test:127.0.0.1",))
    await crawl_site(
        f"http://{SITE}:{port}/", out, settings,
        CrawlOptions(parse_process=False, use_sitemaps=False),
    )  # fmt: skip
    db = sqlite3.connect(out)
    checked = {
        url: (via, status)
        for url, via, status in db.execute("SELECT url, via, status FROM externals")
    }
    home, about = f"http://{SITE}:{port}/", f"http://{SITE}:{port}/about"
    mirror, fr = f"http://{MIRROR}:{port}/home", f"http://{FR}:{port}/accueil"
    de, moved = f"http://{DE}:{port}/start", f"http://{MOVED}:{port}/about"
    assert checked[mirror] == ("canonical", 404)
    assert checked[fr] == ("hreflang", 200)  # status after redirects, as for every external
    assert checked[de] == ("hreflang", 200)
    assert checked[moved] == ("canonical", 200)

    findings = run_rules(load_view(db)).findings
    by_rule: dict[str, set[tuple[str, str]]] = {}
    for f in findings:
        by_rule.setdefault(f.rule_id, set()).add((f.url, f.detail))
    assert by_rule.get("canonical-to-non-200") == {(home, f"{mirror} (404)")}
    assert by_rule.get("canonical-to-redirect") == {
        (about, f"{moved} (redirects to http://{MOVED}:{port}/new-about)")
    }
    assert by_rule.get("hreflang-non-200") == {
        (home, f"fr: {fr} (redirects to http://{FR}:{port}/fr/)")
    }
    # not <a> links: no broken-external-link finding for the dead canonical
    assert not any(mirror in d for _, d in by_rule.get("broken-external-link", set()))

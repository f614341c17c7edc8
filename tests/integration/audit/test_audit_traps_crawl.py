"""Crawler traps, crawled for real: a soft-404 site on 127.0.0.1 (port 0) whose broken
relative link makes /blog/blog/blog/... for ever, a filter that grows a query parameter at every
hop, a path that grows by a long segment at every hop, and a redirect that adds a segment to
the path it is asked for. Without trap limits the crawl never
ends: the test gives it a --max-pages guard, so the old code fails on ``cut_short`` instead of
hanging. A real pager (?page=1..30) and a date path (/2026/12/01/) beside them are crawled."""

from __future__ import annotations

import csv
import json
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from aiohttp import web

from fairfetch.audit.crawler import CrawlOptions, CrawlStats, crawl_site
from fairfetch.audit.export import export_crawl, report_data
from fairfetch.audit.rules import run_rules
from fairfetch.audit.view import load_view
from fairfetch.config import Settings
from fairfetch.testing import loopback_server

SITE = "traps-audit.test"
GUARD = 300  # pages: the old code reaches it (the spiral never ends); the new one stops far below
PAGER = 30
LONG = "x" * 90


def _page(title: str, links: list[str]) -> str:
    body = "".join(f'<a href="{h}">{h}</a> ' for h in links)
    return f"<html lang=en><head><title>{title}</title></head><body>{body}</body></html>"


def _answer(request: web.Request) -> str:
    """Every path answers 200 (a soft-404 server): what makes a broken relative link a trap."""
    path, query = request.path, request.query
    if path == "/":
        return _page("Home", ["/about", "/blog/", "/filter", "/long/", "/list?page=1",
                              "/2026/12/01/", "/go/"])  # fmt: skip
    if path.startswith("/blog/"):
        # The template's broken link: "blog/" where "/blog/" was meant.
        return _page("Blog", ["blog/", "/blog/post-1"])
    if path == "/filter":
        # Each filter page links to itself with one more parameter.
        n = len(query)
        params = "&".join(f"f{i}=1" for i in range(1, n + 2))
        return _page(f"Filter {n}", [f"/filter?{params}"])
    if path.startswith("/long/"):
        n = path.count("/") - 1
        return _page(f"Long {n}", [f"{path}s{n}-{LONG}/"])
    if path == "/list":
        page = int(query.get("page", "1"))
        return _page(f"List {page}", [f"/list?page={page + 1}"] if page < PAGER else [])
    return _page(f"Page {path}", ["/"])


@asynccontextmanager
async def _site() -> AsyncIterator[tuple[int, list[str]]]:
    """The site on 127.0.0.1 (port 0), and every path and query it was asked for (GET: the
    page fetches; a status check's HEAD is kept as "HEAD <path>")."""
    asked: list[str] = []

    async def handle(request: web.Request) -> web.StreamResponse:
        method = "" if request.method == "GET" else f"{request.method} "
        asked.append(method + request.path_qs)
        if request.path in ("/robots.txt", "/sitemap.xml"):
            return web.Response(status=404)
        if request.path.startswith("/go/"):
            raise web.HTTPMovedPermanently(request.path + "go/")
        return web.Response(text=_answer(request), content_type="text/html")

    async with loopback_server(handle) as port:
        yield port, asked


async def _run(port: int, out: Path, **options: object) -> CrawlStats:
    settings = Settings(allow_networks=("127.0.0.1/32",), resolve=("*.test:127.0.0.1",))
    options.setdefault("parse_process", False)
    options.setdefault("max_pages", GUARD)
    return await crawl_site(
        f"http://{SITE}:{port}/", out, settings,
        CrawlOptions(use_sitemaps=False, **options),  # type: ignore[arg-type]
    )  # fmt: skip


async def _crawl(
    tmp_path: Path, name: str, **options: object
) -> tuple[CrawlStats, Path, list[str]]:
    out = tmp_path / name
    async with _site() as (port, asked):
        stats = await _run(port, out, **options)
    return stats, out, asked


async def test_audit_traps_soft_404_spiral_is_cut_counted_and_reported(tmp_path: Path) -> None:
    stats, out, asked = await _crawl(tmp_path, "traps.db")

    # The crawl ended on its own: the guard was not what stopped it.
    assert stats.cut_short == ""
    assert stats.pages_done < GUARD
    # Each trap cut once, by its reason, each URL counted once.
    assert stats.links_skipped == {
        "trap: repeated_path_segment": 2,  # /blog/blog/blog/, /go/go/go/
        "trap: too_many_parameters": 1,  # /filter?f1=1&...&f11=1
        "trap: url_too_long": 1,  # /long/s1-xxx/s2-xxx/... past 2,000 characters
    }
    # Nothing skipped was asked for.
    assert not any("/blog/blog/blog/" in p for p in asked)
    assert not any("f11=" in p for p in asked)
    # A redirect's destination is no page fetch either: status-checked (HEAD) for the
    # Redirects sheet, as any destination the crawl does not reach.
    assert "/go/go/go/" not in asked
    assert "HEAD /go/go/go/" in asked
    assert max(len(p) for p in asked) < 2000
    # The real pager and the date path were crawled whole; the spiral up to its second copy.
    for path in [f"/list?page={n}" for n in range(1, PAGER + 1)] + [
        "/2026/12/01/", "/blog/blog/", "/filter?" + "&".join(f"f{i}=1" for i in range(1, 11)),
    ]:
        assert path in asked, path

    conn = sqlite3.connect(out)
    try:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        assert json.loads(meta["links_skipped"]) == stats.links_skipped
        assert meta["cut_short"] == ""
        # The links stay: the page does link there (the Links sheet shows it).
        spiral_links = conn.execute(
            "SELECT f.url, l.to_url, l.internal FROM links l JOIN pages f ON f.id = l.from_id "
            "WHERE l.to_url LIKE '%/blog/blog/blog/'"
        ).fetchall()
        assert spiral_links
        assert all(internal == 1 for _f, _t, internal in spiral_links)
        assert conn.execute(
            "SELECT COUNT(*) FROM pages WHERE url LIKE '%/blog/blog/blog/%'"
        ).fetchone() == (0,)
        run = run_rules(load_view(conn))
    finally:
        conn.close()

    findings = run.by_rule()["link-to-crawler-trap"]
    by_page = {f.url.split("/", 3)[3]: f.detail for f in findings}
    ten = "filter?" + "&".join(f"f{i}=1" for i in range(1, 11))
    longs = [p for p in by_page if p.startswith("long/")]
    assert len(findings) == 4
    assert set(by_page) == {"blog/blog/", "go/go/", ten, *longs}
    assert by_page["go/go/"].startswith("relative link spiral: /go/go/go/")
    assert by_page["blog/blog/"].startswith("relative link spiral: /blog/blog/blog/")
    assert "too_many_parameters" in by_page[ten]
    assert len(longs) == 1
    assert by_page[longs[0]].startswith("URL of ")
    assert "url_too_long" in by_page[longs[0]]
    # The whole-graph rules judged the crawl: nothing is missing from it.
    assert not any("link graph incomplete" in why for why in run.silenced.values())

    # The report counts the rule's findings; the Overview says what was not followed.
    report = {r["id"]: r["count"] for r in report_data(out)["rules"]}
    assert report["link-to-crawler-trap"] == 4
    export_crawl(out, csv_dir=tmp_path / "csv")
    with (tmp_path / "csv" / "overview.csv").open(newline="", encoding="utf-8") as fh:
        overview = {row[0]: row[1] for row in csv.reader(fh) if len(row) >= 2}
    assert overview["Links not followed: trap: repeated_path_segment"] == "2"
    for reason in ("too_many_parameters", "url_too_long"):
        assert overview[f"Links not followed: trap: {reason}"] == "1"


def _contents(path: Path) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]], str]:
    conn = sqlite3.connect(path)
    try:
        pages = conn.execute(
            "SELECT id, url, level, depth, status FROM pages ORDER BY id"
        ).fetchall()
        links = conn.execute("SELECT from_id, seq, to_url FROM links ORDER BY 1, 2").fetchall()
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    finally:
        conn.close()
    return pages, links, meta["links_skipped"]


async def test_audit_traps_resumed_crawl_skips_the_same_traps(tmp_path: Path) -> None:
    """Cut inside the level that first links into the spiral (/blog/blog/ is page 9, the
    next level's candidates then come from the crawl file), then resumed: the same pages,
    links and trap counts as one uninterrupted crawl, and the spiral still not asked for."""
    whole, cut = tmp_path / "whole.db", tmp_path / "cut.db"
    async with _site() as (port, asked):
        await _run(port, whole, parse_process=True)
        first = await _run(port, cut, max_pages=10)
        assert first.cut_short == "max_pages"
        conn = sqlite3.connect(cut)
        try:
            level_2 = [
                (page_id, "/" + url.split("/", 3)[3], state)
                for page_id, url, state in conn.execute(
                    "SELECT id, url, state FROM pages WHERE level = 2 ORDER BY id LIMIT 3"
                )
            ]
        finally:
            conn.close()
        assert level_2 == [(9, "/blog/blog/", "done"), (10, "/blog/post-1", "done"),
                           (11, "/filter?f1=1", "queued")]  # fmt: skip
        resumed = await _run(port, cut, resume=True)
    assert resumed.cut_short == ""
    assert _contents(cut) == _contents(whole)
    assert json.loads(_contents(cut)[2]) == {
        "trap: repeated_path_segment": 2, "trap: too_many_parameters": 1,
        "trap: url_too_long": 1,
    }  # fmt: skip
    assert not any("/blog/blog/blog/" in p for p in asked)

"""What a crawl did not follow or not check is counted for the whole crawl file, across a
resume. The counts were the last run's alone: a crawl cut by --max-pages (or killed) and
resumed showed, on the Overview sheet and in its summary, only what the resumed part met.

A site on 127.0.0.1 (port 0) whose every page has a mailto: link (not followed), a link to
another page of its own, a link to an external host on 127.0.0.2 (loopback, not allowed: not
checked, "perimeter"), and a link to a crawler trap. ``max_externals`` 3 leaves the rest of
the externals "over_cap". Nothing reaches 127.0.0.2: the perimeter refuses it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from aiohttp import web

from fairfetch.audit.crawler import CrawlOptions, CrawlStats, crawl_site
from fairfetch.config import Settings
from fairfetch.testing import loopback_server

PAGES = 12


async def _handle(request: web.Request) -> web.Response:
    if request.path in ("/robots.txt", "/sitemap.xml"):
        return web.Response(status=404)
    n = int(request.path.strip("/p") or 0) if request.path != "/" else 0
    nxt = f'<a href="/p{n + 1}">next</a>' if n + 1 < PAGES else ""
    body = (f'<a href="mailto:me{n}@example.org">mail</a> {nxt} '
            f'<a href="http://ext{n}.far.test/">far</a> <a href="/x/x/x/{n}">trap</a>')
    return web.Response(text=f"<html><head><title>p{n}</title></head><body>{body}</body></html>",
                        content_type="text/html")


async def _crawl(port: int, out: Path, parse_process: bool, **options: object) -> CrawlStats:
    settings = Settings(allow_networks=("127.0.0.1/32",),
                        resolve=("site.test:127.0.0.1", "*.far.test:127.0.0.2"))
    return await crawl_site(
        f"http://site.test:{port}/", out, settings,
        CrawlOptions(use_sitemaps=False, max_externals=3, parse_process=parse_process,
                     **options),  # type: ignore[arg-type]
    )  # fmt: skip


def _counts(path: Path) -> dict[str, dict[str, int]]:
    meta = dict(sqlite3.connect(path).execute("SELECT key, value FROM meta").fetchall())
    return {k: json.loads(meta[k]) for k in ("links_skipped", "not_checked")}


async def _both(tmp_path: Path, parse_process: bool) -> None:
    async with loopback_server(_handle) as port:
        whole = await _crawl(port, tmp_path / "whole.crawl", parse_process)
        cut = await _crawl(port, tmp_path / "cut.crawl", parse_process, max_pages=4)
        assert cut.cut_short == "max_pages"
        resumed = await _crawl(port, tmp_path / "cut.crawl", parse_process, resume=True)
    expected = {
        "links_skipped": {"not http(s): mailto": PAGES, "trap: repeated_path_segment": PAGES},
        "not_checked": {"perimeter": 3, "over_cap": PAGES - 3},
    }
    assert _counts(tmp_path / "whole.crawl") == expected
    assert (whole.links_skipped, whole.not_checked) == tuple(expected.values())
    assert _counts(tmp_path / "cut.crawl") == expected
    assert (resumed.links_skipped, resumed.not_checked) == tuple(expected.values())


async def test_audit_counts_cover_a_resumed_crawl_in_process(tmp_path: Path) -> None:
    await _both(tmp_path, parse_process=False)


async def test_audit_counts_cover_a_resumed_crawl_with_a_writer_process(tmp_path: Path) -> None:
    await _both(tmp_path, parse_process=True)

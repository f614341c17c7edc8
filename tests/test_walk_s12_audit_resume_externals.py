"""A crawl cut by --max-pages status-checks the internal redirect destinations it did not reach
(so the Redirects sheet says where they end). Resumed, it crawls them as pages, but their rows
stayed in ``externals``: the External Links sheet listed the site's own pages ("via redirect",
linked from 0 pages) and the Overview counted them as externals. The resumed file's externals
are now those of a crawl of one run."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from fairfetch.audit.crawler import CrawlOptions, crawl_site
from fairfetch.testing import running_testbed


def _externals(path: Path) -> list[tuple[str, str, int | None]]:
    con = sqlite3.connect(path)
    try:
        return con.execute("SELECT url, via, status FROM externals ORDER BY url").fetchall()
    finally:
        con.close()


def _own_pages_among_externals(path: Path) -> list[str]:
    con = sqlite3.connect(path)
    try:
        return [r[0] for r in con.execute(
            "SELECT url FROM externals WHERE url IN (SELECT url FROM pages WHERE state='done')"
        )]  # fmt: skip
    finally:
        con.close()


@pytest.mark.parametrize("parse_process", [False, True])
async def test_walk_s12_audit_resumed_crawl_keeps_its_pages_out_of_externals(
    tmp_path: Path, parse_process: bool
) -> None:
    async with running_testbed() as tb:
        url = tb.url("s120.acme-audit.test", "/")

        async def crawl(name: str, **options: object) -> None:
            opts = CrawlOptions(parse_process=parse_process, concurrency=4, **options)  # type: ignore[arg-type]
            await crawl_site(url, tmp_path / name, tb.settings(), opts)

        await crawl("whole.crawl")
        await crawl("cut.crawl", max_pages=60)
        whole = _externals(tmp_path / "whole.crawl")
        # The cut crawl did check destinations it had not reached.
        assert set(_externals(tmp_path / "cut.crawl")) - set(whole)
        await crawl("cut.crawl", resume=True)
    assert _own_pages_among_externals(tmp_path / "cut.crawl") == []
    assert _externals(tmp_path / "cut.crawl") == whole

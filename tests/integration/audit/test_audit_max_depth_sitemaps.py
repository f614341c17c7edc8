"""``--max-depth D`` ("clicks from the start URL, at most") and the sitemap's pages.

A level of sitemap seeds has no click depth, so the depth check never applied past it: the
links of every sitemap page were followed level after level (``--max-depth 1`` crawled 131 of
the testbed site's 165 pages). Now: a crawl cut at the depth leaves the sitemap's unreached
pages alone (they may lie deeper) but still reads the sitemaps; a crawl whose links ran out
within the depth crawls them (orphans) without following their links."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from fairfetch.testing import Testbed

from .conftest import crawl


def _rows(out: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(out) as db:
        return db.execute(sql).fetchall()


async def test_audit_cut_at_the_depth_reads_the_sitemap_but_leaves_its_pages(
    testbed: Testbed, tmp_path: Path
) -> None:
    out = tmp_path / "d1.db"
    stats = await crawl(testbed, out, max_depth=1)
    assert stats.cut_short == "max_depth"
    assert _rows(out, "SELECT value FROM meta WHERE key = 'sitemaps'") == [("read",)]
    assert _rows(out, "SELECT COUNT(*) FROM sitemap_urls")[0][0] > 50
    assert _rows(out, "SELECT COUNT(*) FROM pages WHERE source = 'sitemap'") == [(0,)]
    assert _rows(out, "SELECT MAX(depth) FROM pages") == [(1,)]
    assert _rows(out, "SELECT COUNT(*) FROM pages WHERE depth IS NULL") == [(0,)]


async def test_audit_depth_not_reached_crawls_orphans_without_their_links(
    testbed: Testbed, tmp_path: Path
) -> None:
    full = tmp_path / "full.db"
    await crawl(testbed, full)
    deepest = _rows(full, "SELECT MAX(depth) FROM pages")[0][0]
    orphans = {u for (u,) in _rows(full, "SELECT url FROM pages WHERE source = 'sitemap'")}
    assert orphans  # the site has sitemap-only pages
    out = tmp_path / "deep.db"
    stats = await crawl(testbed, out, max_depth=deepest)
    crawled_orphans = {
        u for (u,) in _rows(out, "SELECT url FROM pages WHERE source = 'sitemap' AND "
                                 "state = 'done'")
    }  # fmt: skip
    assert crawled_orphans == orphans
    # Nothing found through an orphan's links: every page with no click depth is a seed.
    assert _rows(out, "SELECT COUNT(*) FROM pages WHERE depth IS NULL AND source != 'sitemap'") \
        == [(0,)]
    followed = _rows(full, "SELECT COUNT(*) FROM pages WHERE depth IS NULL AND "
                           "source != 'sitemap'")[0][0]  # fmt: skip
    assert stats.cut_short == ("max_depth" if followed else "")

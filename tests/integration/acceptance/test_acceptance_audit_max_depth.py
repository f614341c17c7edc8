"""Issue 7, "Crawl": `audit crawl URL --out FILE [--max-pages N] [--max-depth D]` — breadth first,
seeded from sitemaps too.

``--max-depth`` had tests for its refused values only; no crawl was ever cut by it. Here the
testbed's audit site (165 pages, five clicks deep, with a sitemap) is crawled with a depth of 1.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from fairfetch.audit.crawler import CrawlOptions, CrawlStats, crawl_site
from fairfetch.audit.rules import run_rules
from fairfetch.audit.view import load_view
from fairfetch.testing import running_testbed


async def _crawl(out: Path, **options: object) -> CrawlStats:
    async with running_testbed() as tb:
        return await crawl_site(
            tb.url("s120.acme-audit.test", "/"), out, tb.settings(),
            CrawlOptions(concurrency=4, **options),  # type: ignore[arg-type]
        )


async def test_acceptance_max_depth_cuts_the_click_levels_and_says_so(tmp_path: Path) -> None:
    out = tmp_path / "depth1.db"
    stats = await _crawl(out, max_depth=1)
    assert stats.cut_short == "max_depth"
    db = sqlite3.connect(out)
    depths = [r[0] for r in db.execute(
        "SELECT depth FROM pages WHERE state = 'done' AND depth IS NOT NULL")]
    assert depths
    assert max(depths) == 1
    assert depths.count(0) == 1
    run = run_rules(load_view(db))
    # Rules that need the whole link graph stay silent on a crawl cut short, and say so.
    assert {"orphan-in-sitemap", "too-deep"} <= set(run.silenced)
    assert not {"orphan-in-sitemap", "too-deep"} & {f.rule_id for f in run.findings}


async def test_acceptance_max_depth_follows_no_link_past_the_depth(tmp_path: Path) -> None:
    out = tmp_path / "depth1.db"
    await _crawl(out, max_depth=1)
    db = sqlite3.connect(out)
    beyond = db.execute(
        "SELECT url, source, depth FROM pages WHERE state = 'done' AND source != 'sitemap' "
        "AND (depth IS NULL OR depth > 1)"
    ).fetchall()
    assert beyond == []

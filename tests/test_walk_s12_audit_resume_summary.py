"""The summary line of a resumed ``audit crawl`` counts the crawl file, status checks too.

"2045 pages, 11 URLs status-checked" after ``--resume``: the pages were the file's, the checks
this run's alone (the first run's 46 were missing), so the line read as if the site's links had
hardly been checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairfetch.audit.crawler import CrawlOptions, crawl_site
from fairfetch.testing import running_testbed


@pytest.mark.parametrize("parse_process", [False, True])
async def test_walk_s12_audit_resumed_summary_counts_the_files_checks(
    tmp_path: Path, parse_process: bool
) -> None:
    async with running_testbed() as tb:
        url = tb.url("s120.acme-audit.test", "/")

        async def crawl(name: str, **options: object) -> tuple[int, int]:
            opts = CrawlOptions(parse_process=parse_process, concurrency=4, **options)  # type: ignore[arg-type]
            stats = await crawl_site(url, tmp_path / name, tb.settings(), opts)
            return stats.pages_done, stats.externals_checked

        whole = await crawl("whole.crawl")
        cut = await crawl("cut.crawl", max_pages=5)
        resumed = await crawl("cut.crawl", resume=True)
    assert cut[1] > 0  # the first run did check some: the resumed count must include them
    assert resumed == whole

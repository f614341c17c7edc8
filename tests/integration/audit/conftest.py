"""Fixtures for audit integration tests: the testbed's audit site, crawled for real."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from fairfetch.audit.crawler import CrawlOptions, CrawlStats, crawl_site
from fairfetch.testing import Testbed, running_testbed


@pytest.fixture
async def testbed() -> AsyncIterator[Testbed]:
    async with running_testbed() as tb:
        yield tb


async def crawl(
    tb: Testbed, out: Path, pages: int = 120, **options: object
) -> CrawlStats:
    options.setdefault("concurrency", 4)
    return await crawl_site(
        tb.url(f"s{pages}.acme-audit.test", "/"), out, tb.settings(),
        CrawlOptions(**options),  # type: ignore[arg-type]
    )

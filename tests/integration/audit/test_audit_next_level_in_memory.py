"""The next level from the built pages' own candidates, against the crawl file's query.

The crawl forms each level from what the writer sent back with every page it built
(``Built.found``) instead of querying the file; a resumed level still uses the query. Both
must give the same URLs in the same order, or depths, ids and ``--max-pages`` cuts would
differ between a resumed crawl and a clean one.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from fairfetch.audit import crawler as crawler_module
from fairfetch.testing import Testbed

from .conftest import crawl


@pytest.mark.parametrize("parse_process", [False, True])
async def test_audit_next_level_from_built_pages_equals_the_query(
    testbed: Testbed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parse_process: bool
) -> None:
    real = crawler_module._Crawl._next_level_urls
    compared: list[int] = []

    async def checked(
        self: crawler_module._Crawl, page_ids: list[int]
    ) -> list[tuple[str, str]]:
        from_memory = self.built_count == len(page_ids)
        got = await real(self, page_ids)
        if page_ids:
            await self.sink.flush()
            rows = self.cf.next_level_candidates(min(page_ids), max(page_ids))
            queried = [(u, s) for u, s, _ in rows if u not in self.page_ids
                       and self.scope.contains(u)]  # fmt: skip
            assert got == queried
            if from_memory and got:
                compared.append(len(got))
        return got

    monkeypatch.setattr(crawler_module._Crawl, "_next_level_urls", checked)
    stats = await crawl(testbed, tmp_path / "c.db", pages=400, parse_process=parse_process)
    assert stats.pages_done > 300
    # Levels with news were formed from memory, not only from the query.
    assert len(compared) >= 3
    assert sum(compared) > 300


async def test_audit_resumed_level_is_formed_by_the_query(
    testbed: Testbed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A level some of whose pages were built before the crawl stopped: those pages' candidates
    # are only in the file. The crawl must not form the next level from the rest alone.
    out = tmp_path / "c.db"
    await crawl(testbed, out, pages=400, max_pages=150, parse_process=False)
    used_query: list[int] = []
    real_query = crawler_module.CrawlFile.next_level_candidates

    def query(self: crawler_module.CrawlFile, lo: int, hi: int) -> list[tuple[str, str, int]]:
        used_query.append(lo)
        return real_query(self, lo, hi)

    monkeypatch.setattr(crawler_module.CrawlFile, "next_level_candidates", query)
    resumed = await crawl(testbed, out, pages=400, resume=True, parse_process=False)
    clean = await crawl(testbed, tmp_path / "clean.db", pages=400, parse_process=False)
    assert used_query  # the resumed level
    assert resumed.pages_queued == clean.pages_queued
    def pages(path: Path) -> list[tuple]:
        with sqlite3.connect(path) as con:
            return con.execute("SELECT id, url, level, depth FROM pages ORDER BY id").fetchall()

    assert pages(out) == pages(tmp_path / "clean.db")

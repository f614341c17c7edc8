"""The audit starts one worker per slot: its concurrency is bounded whatever sets it.

``--concurrency`` is bounded by the CLI; the library's default comes from the feed crawl's
``per_host_in_flight``, which a config file may set to 2**31-1: the crawl then started that
many workers and never began."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairfetch.audit import crawler
from fairfetch.audit.crawler import MAX_CONCURRENCY, CrawlOptions
from fairfetch.config import Settings
from fairfetch.errors import InputError


def test_audit_concurrency_from_settings_is_held_to_the_bound(tmp_path: Path) -> None:
    from fairfetch.audit.crawlfile import CrawlFile

    cf = CrawlFile(tmp_path / "c.db")
    try:
        crawl = crawler._Crawl(
            "http://site.test/", cf, Settings(per_host_in_flight=2**31 - 1),
            CrawlOptions(parse_process=False), fetcher=None, progress=None,  # type: ignore[arg-type]
        )  # fmt: skip
        assert crawl.concurrency == MAX_CONCURRENCY
    finally:
        cf.close()


def test_audit_concurrency_option_past_the_bound_is_refused() -> None:
    with pytest.raises(InputError) as err:
        crawler._check_options(CrawlOptions(concurrency=MAX_CONCURRENCY + 1))
    assert "concurrency=1025" in str(err.value)
    crawler._check_options(CrawlOptions(concurrency=MAX_CONCURRENCY))


def test_audit_cli_bound_is_the_crawlers() -> None:
    from fairfetch.cli import _audit

    assert _audit.MAX_CONCURRENCY == MAX_CONCURRENCY

"""A start URL that cannot be fetched is a clear error naming it, not an audit of nothing."""

from __future__ import annotations

import os
import socket
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairfetch.audit.crawler import CrawlOptions, crawl_site
from fairfetch.cli import app
from fairfetch.config import Settings
from fairfetch.errors import AuditError, InputError
from fairfetch.testing import Testbed

from .conftest import crawl


@pytest.fixture
def refused_port() -> Iterator[int]:
    """Bound and not listening: connections to it are refused while we hold it."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    try:
        yield s.getsockname()[1]
    finally:
        s.close()


def _settings(*resolve: str) -> Settings:
    return Settings(allow_networks=("127.0.0.1/32",), resolve=(*resolve, "*.test:127.0.0.1"))


async def test_audit_unreachable_start_url_is_an_error_naming_it(
    tmp_path: Path, refused_port: int
) -> None:
    start = f"http://down-audit.test:{refused_port}/"
    out = tmp_path / "down.db"
    for _ in range(2):  # no half-made crawl file left to stand in the way of the next try
        with pytest.raises(AuditError, match=rf"{start}.*could not be fetched.*connect"):
            await crawl_site(start, out, _settings(), CrawlOptions(parse_process=False))
        assert not out.exists()
        assert not os.listdir(tmp_path)


async def test_audit_start_url_outside_the_perimeter_is_an_error(tmp_path: Path) -> None:
    start = "http://intranet-audit.test/"
    out = tmp_path / "intranet.db"
    with pytest.raises(AuditError, match=rf"{start}.*could not be fetched.*perimeter"):
        await crawl_site(start, out, _settings("intranet-audit.test:127.0.0.2"),
                         CrawlOptions(parse_process=False))
    assert not out.exists()


def test_audit_cli_unreachable_start_url(tmp_path: Path, refused_port: int) -> None:
    start = f"http://down-audit.test:{refused_port}/"
    out = tmp_path / "down.db"
    result = CliRunner().invoke(
        app, ["audit", "crawl", start, "--out", str(out), "--quiet", "--in-process"],
        env={"FAIRFETCH_RESOLVE": "*.test:127.0.0.1", "FAIRFETCH_ALLOW_NETWORKS": "127.0.0.1/32"},
    )
    assert result.exit_code != 0
    assert start in result.output
    assert "could not be fetched" in result.output


def _snapshot(path: Path) -> tuple[object, ...]:
    con = sqlite3.connect(path)
    try:
        return (
            con.execute("SELECT key, value FROM meta ORDER BY key").fetchall(),
            con.execute("SELECT id, url, state FROM pages ORDER BY id").fetchall(),
            con.execute("SELECT COUNT(*) FROM links").fetchone(),
        )
    finally:
        con.close()


async def test_audit_resume_refuses_another_site_or_scope(
    testbed: Testbed, tmp_path: Path
) -> None:
    """--resume continues the crawl the file holds: another start URL, or the same one with
    another scope (--domain), would mix two sites' pages in one file. Refused, file untouched."""
    out = tmp_path / "s40.db"
    await crawl(testbed, out, pages=40, max_pages=10, parse_process=False)
    before = _snapshot(out)
    other = testbed.url("s41.acme-audit.test", "/")
    with pytest.raises(AuditError, match=r"s40\.db.*s40\.acme-audit\.test.*not of.*s41"):
        await crawl_site(other, out, testbed.settings(), CrawlOptions(resume=True))
    assert _snapshot(out) == before
    with pytest.raises(AuditError, match=r"s40\.db.*--domain"):
        await crawl(testbed, out, pages=40, resume=True, registrable_domain=True)
    assert _snapshot(out) == before
    await crawl(testbed, out, pages=40, resume=True, parse_process=False)  # same site: resumes
    assert _snapshot(out) != before


@pytest.mark.parametrize(
    ("option", "value"),
    [("max_pages", 0), ("max_pages", -3), ("max_depth", -1), ("concurrency", 0),
     ("max_externals", -1), ("probe_concurrency", 0), ("batch_size", 0)],
)
async def test_audit_crawl_options_out_of_range_refused(
    tmp_path: Path, refused_port: int, option: str, value: int
) -> None:
    """The CLI bounds these; the library entry point said nothing and crawled 0 pages (or hung
    on a zero-sized semaphore). Refused naming the option, before any file is made."""
    out = tmp_path / "x.db"
    with pytest.raises(InputError, match=rf"{option}.*{value}"):
        await crawl_site(f"http://nowhere.test:{refused_port}/", out, _settings(),
                         CrawlOptions(**{option: value}))  # type: ignore[arg-type]
    assert not out.exists()

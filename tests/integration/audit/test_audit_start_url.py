"""A start URL that cannot be fetched is a clear error naming it, not an audit of nothing."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairfetch.audit.crawler import CrawlOptions, crawl_site
from fairfetch.cli import app
from fairfetch.config import Settings
from fairfetch.errors import AuditError


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

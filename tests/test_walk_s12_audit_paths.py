"""A newcomer's wrong paths for the audit: a crawl file in a directory that does not exist, a
directory given as the crawl file. Each was SQLite's "unable to open database file", naming no
cause; now the error names the path and what is wrong with it."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairfetch.audit.crawler import CrawlOptions, crawl_site
from fairfetch.cli import app
from fairfetch.config import Settings
from fairfetch.errors import AuditError

#: Nothing is fetched in these tests: each refusal comes before the first request.
_ENV = {"FAIRFETCH_RESOLVE": "*.test:127.0.0.1", "FAIRFETCH_ALLOW_NETWORKS": "127.0.0.1/32"}


async def test_walk_s12_audit_crawl_out_in_a_missing_directory(tmp_path: Path) -> None:
    out = tmp_path / "nodir" / "site.crawl"
    settings = Settings(allow_networks=("127.0.0.1/32",), resolve=("*.test:127.0.0.1",))
    with pytest.raises(AuditError, match=r"site\.crawl.*directory .*nodir.* does not exist"):
        await crawl_site("http://nowhere.test:9/", out, settings, CrawlOptions())
    assert not (tmp_path / "nodir").exists()  # refused, not made


def test_walk_s12_audit_cli_crawl_out_in_a_missing_directory(tmp_path: Path) -> None:
    out = tmp_path / "nodir" / "site.crawl"
    result = CliRunner().invoke(
        app, ["audit", "crawl", "http://nowhere.test:9/", "--out", str(out), "--quiet"], env=_ENV
    )
    assert result.exit_code == 2
    assert "does not exist" in result.output
    assert "unable to open database file" not in result.output


@pytest.mark.parametrize("command", [["report"], ["export", "--csv", "out-csv"]])
def test_walk_s12_audit_directory_given_as_the_crawl_file(
    tmp_path: Path, command: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "site-csv").mkdir()
    result = CliRunner().invoke(app, ["audit", command[0], "site-csv", *command[1:]], env=_ENV)
    assert result.exit_code == 2
    assert "'site-csv' is a directory" in result.output
    assert "unable to open database file" not in result.output
    assert not (tmp_path / "out-csv").exists()

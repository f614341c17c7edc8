"""The text (non-JSON) output of ``feeds refresh`` and ``stats`` reads as sentences: the
refresh printed the summary as a Python dict, and ``stats`` said "oldest due None" on an
empty queue."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairfetch.cli import app
from fairfetch.testing import testbed_thread


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path}/summary.db"
    monkeypatch.setenv("FAIRFETCH_DB", url)
    return url


def test_cli_feeds_refresh_prints_the_crawl_summary_line(db: str) -> None:
    with testbed_thread(seed=1) as tb:
        env = tb.env()
        url = tb.catalog(n=1, behaviours=["blog"])[0].url
        runner = CliRunner()
        added = runner.invoke(app, ["feeds", "add", url], env=env)
        assert added.exit_code == 0, added.output
        r = runner.invoke(app, ["feeds", "refresh", url], env=env)
    assert r.exit_code == 0, (r.output, r.exception)
    assert "{" not in r.stdout
    [line] = r.stdout.strip().splitlines()
    # the add made the first crawl: the refresh is a conditional GET answered 304
    assert line.startswith("due 1: ok 0, not modified 1, throttled 0, failed 0")


def test_cli_stats_on_an_empty_queue_names_no_oldest(db: str) -> None:
    r = CliRunner().invoke(app, ["stats"])
    assert r.exit_code == 0, (r.output, r.exception)
    assert "None" not in r.stdout
    assert "queue: 0 due, 0 in the next hour" in r.stdout

"""``audit crawl --concurrency`` starts one worker per slot before its first request: a value
such as 99999999999999999999 (a typo, or a script's "unlimited") never returned, building
workers until memory ran out. It is bounded, and a value past the bound is refused naming the
option. Nothing is fetched: 127.0.0.2 is loopback and not allowed, so the perimeter refuses it."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairfetch.cli import app


@pytest.mark.parametrize("value", ["1025", "99999999999999999999"])
def test_cli_audit_crawl_refuses_a_concurrency_past_its_bound(value: str, tmp_path: Path) -> None:
    r = CliRunner().invoke(
        app,
        ["audit", "crawl", "http://127.0.0.2:1/", "--out", str(tmp_path / "s.crawl"), "-q",
         "--concurrency", value],
        env={"FAIRFETCH_ALLOW_NETWORKS": None},
    )
    assert r.exit_code == 2, r.output
    assert "--concurrency" in r.output
    assert not (tmp_path / "s.crawl").exists()

"""``audit crawl --trap-max-repeats 1`` is refused in the flag's own name: the error named the
library's field (``'trap_max_segment_repeats=1'``), which the user never typed."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from fairfetch.cli import app

#: Nothing is fetched: the refusal comes before the first request.
_ENV = {"FAIRFETCH_RESOLVE": "*.test:127.0.0.1", "FAIRFETCH_ALLOW_NETWORKS": "127.0.0.1/32"}


def test_walk_s12_audit_trap_max_repeats_one_names_the_flag(tmp_path: Path) -> None:
    out = tmp_path / "site.crawl"
    result = CliRunner().invoke(
        app, ["audit", "crawl", "http://nowhere.test:9/", "--out", str(out), "--quiet",
              "--trap-max-repeats", "1"], env=_ENV,
    )  # fmt: skip
    assert result.exit_code == 2
    assert "--trap-max-repeats 1" in result.output
    assert "at least 2" in result.output
    assert "trap_max_segment_repeats" not in result.output
    assert not out.exists()

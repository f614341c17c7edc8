"""``websub renew`` with nothing to renew says so: on a directory without WebSub subscriptions it
printed nothing at all and exited 0, so a newcomer following docs/websub.md could not tell
"renewed nothing" from "renewed everything"."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from fairfetch.cli import app


def test_walkthrough_websub_renew_with_no_subscription_says_so(tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["--db", f"sqlite:///{tmp_path}/none.db", "websub", "renew"])
    assert r.exit_code == 0, (r.output, r.exception)
    assert "no WebSub subscription to renew" in r.stdout, r.stdout

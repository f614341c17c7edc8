"""``fairfetch demo --help`` says which database the demo fills: it said "a fresh SQLite
directory", yet ``--db`` names any empty database (PostgreSQL too) and without it the demo
always makes ./fairfetch-demo.db afresh, whatever FAIRFETCH_DB says."""

from __future__ import annotations

from typer.testing import CliRunner

from fairfetch.cli import app


def test_walkthrough_demo_help_names_its_database() -> None:
    r = CliRunner().invoke(app, ["demo", "--help"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    text = " ".join(r.stdout.split())
    assert "fresh SQLite directory" not in text
    assert "fairfetch-demo.db" in text
    assert "--db" in text

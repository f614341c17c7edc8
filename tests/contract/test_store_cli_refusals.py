"""The CLI when the database refuses a command: one ``error:`` line naming what was refused,
exit status 2, no traceback, no SQL and no bound parameters."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from typer.testing import CliRunner

from fairfetch.cli import app
from fairfetch.store import open_store

from .conftest import assert_clean_error

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_store_cli_remove_on_a_read_only_database_is_one_clean_error_line(tmp_path: Path) -> None:
    path = tmp_path / "fairfetch.db"
    url = "https://a.example/feed"
    store = open_store(f"sqlite:///{path}")
    store.add_feed(url, now=NOW, politeness_key="a.example")
    store.close()

    r = CliRunner().invoke(
        app, ["--db", f"sqlite:///file:{path}?mode=ro&uri=true", "feeds", "remove", url]
    )

    assert_clean_error(r, url, "readonly database")
    lines = [line for line in r.output.splitlines() if line.strip()]
    assert len(lines) == 1, r.output
    assert lines[0].startswith(f"error: store: removing feed {url!r}: "), r.output
    for marker in ("[SQL:", "[parameters:", "sqlalche.me"):
        assert marker not in r.output, r.output
    check = open_store(f"sqlite:///{path}")
    try:
        assert check.get_feed(url).url == url  # still there
    finally:
        check.close()

"""An in-memory SQLite URL (``sqlite://``, ``sqlite:///``, ``sqlite:///:memory:``) is refused by
name: every command would start on an empty database and keep nothing when it ends.

``--db sqlite:///`` (a path forgotten) listed an empty directory as if it were the user's, and
``feeds add`` crashed with an OperationalError traceback ('no such table: feeds': each thread
of the process opened a fresh, empty in-memory database).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairfetch.cli import app

MEMORY = ["sqlite://", "sqlite:///", "sqlite:///:memory:", "sqlite:///file:x?mode=memory&uri=true"]


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FAIRFETCH_DB", raising=False)


@pytest.mark.parametrize("url", MEMORY)
@pytest.mark.parametrize(
    "command",
    [["feeds", "list"], ["stats"], ["feeds", "add", "http://127.0.0.1:9/feed.xml"]],
)
def test_cli_refuses_an_in_memory_database(url: str, command: list[str]) -> None:
    r = CliRunner().invoke(app, ["--db", url, *command])
    assert r.exit_code == 2, (r.output, r.exception)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert repr(url) in r.stderr
    assert "memory" in r.stderr


def test_cli_refuses_an_in_memory_database_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FAIRFETCH_DB", "sqlite://")
    r = CliRunner().invoke(app, ["feeds", "list"])
    assert r.exit_code == 2, (r.output, r.exception)
    assert "'sqlite://'" in r.stderr


def test_cli_a_file_database_is_still_fine(tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["--db", f"sqlite:///{tmp_path}/ok.db", "feeds", "list", "--json"])
    assert r.exit_code == 0, (r.output, r.exception)
    assert r.stdout.strip() == "[]"

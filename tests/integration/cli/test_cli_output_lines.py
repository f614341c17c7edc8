"""Line output of the ``fairfetch`` command is one line per fact, however long the URL.

Scripts read ``added URL`` / ``invalid 'URL': reason`` / ``removed URL`` line by line, and a
pipe is not a terminal: rich then wraps at 80 columns, which cut long feed URLs (a YouTube
channel feed is 90 characters) in two, so the URL a script read back did not exist.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairfetch.cli import app
from fairfetch.store import open_store

LONG = "http://long.example.test/feeds/videos.xml?channel_id=" + "UC" + "x" * 100


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path}/lines.db"
    monkeypatch.setenv("FAIRFETCH_DB", url)
    monkeypatch.delenv("COLUMNS", raising=False)
    return url


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


def test_cli_long_urls_stay_on_one_line(db: str) -> None:
    store = open_store(db)
    try:
        store.add_feed(LONG, now=datetime.now(UTC), politeness_key="example.test")
    finally:
        store.close()
    runner = CliRunner()

    exists = runner.invoke(app, ["feeds", "add", LONG])
    assert exists.exit_code == 0, exists.output
    assert f"exists {LONG}" in _lines(exists.stdout)

    bad = "ftp://long.example.test/" + "y" * 120
    invalid = runner.invoke(app, ["feeds", "add", bad])
    assert invalid.exit_code == 2
    assert any(line.startswith(f"invalid {bad!r}: unsupported scheme") for line in _lines(
        invalid.stderr
    )), invalid.stderr

    unknown = "http://unknown.example.test/" + "z" * 120
    refresh = runner.invoke(app, ["feeds", "refresh", unknown, "--json"])
    assert refresh.exit_code == 2
    assert f"not found {unknown!r}" in _lines(refresh.stderr)

    removed = runner.invoke(app, ["feeds", "remove", LONG])
    assert removed.exit_code == 0, removed.output
    assert f"removed {LONG}" in _lines(removed.stdout)


def test_cli_one_line_error_for_a_long_input(db: str) -> None:
    missing = "/tmp/" + "no-such-dir-" * 12 + "/subscriptions.opml"
    r = CliRunner().invoke(app, ["feeds", "import", missing])
    assert r.exit_code == 2
    assert _lines(r.stderr) == [f"error: {missing!r}: cannot read (No such file or directory)"]


def test_cli_database_that_refuses_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """libpq explains a refused connection over two lines; the error stays one line, names
    the database (password masked) and keeps the reason."""
    url = "postgresql+psycopg://reader:hunter2@127.0.0.1:1/directory"  # nothing listens on :1
    monkeypatch.delenv("FAIRFETCH_DB", raising=False)
    r = CliRunner().invoke(app, ["--db", url, "feeds", "list"])
    assert r.exit_code == 2
    lines = [line for line in _lines(r.stderr) if line]
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("error: database 'postgresql+psycopg://reader:***@127.0.0.1:1/")
    assert "Connection refused" in lines[0]
    assert "hunter2" not in r.output


def test_cli_feeds_list_shows_each_url_whole(db: str) -> None:
    """Two feeds of one site that differ only at the end of a long URL: the table must tell
    them apart (it cut both to the same prefix and an ellipsis when the width was short)."""
    base = "http://status.example.test/very/long/path/to/the/feeds/of/this/site/"
    urls = [base + "feed-one.xml", base + "feed-two.xml"]
    store = open_store(db)
    try:
        for url in urls:
            store.add_feed(url, now=datetime.now(UTC), politeness_key="example.test")
    finally:
        store.close()
    r = CliRunner().invoke(app, ["feeds", "list"])
    assert r.exit_code == 0, r.output
    assert "…" not in r.stdout
    assert "feed-one.xml" in r.stdout
    assert "feed-two.xml" in r.stdout

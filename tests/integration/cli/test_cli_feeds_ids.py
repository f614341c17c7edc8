"""A feed named on the command line by id or URL: anything else that looks like a number
(a superscript digit, an id past the database's integer range) is an unknown feed, reported
in one line with exit 2 — it crashed with a ValueError or OverflowError traceback."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairfetch.cli import app
from fairfetch.store import open_store

ODD_IDS = ["²", "¹²", "٣", "99999999999999999999999", str(2**63)]


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path}/ids.db"
    monkeypatch.setenv("FAIRFETCH_DB", url)
    store = open_store(url)
    try:
        store.add_feed("http://ids.example.test/feed.xml", now=datetime.now(UTC),
                       politeness_key="example.test")
    finally:
        store.close()
    return url


@pytest.mark.parametrize("raw", ODD_IDS)
@pytest.mark.parametrize("command", [["feeds", "show"], ["feeds", "remove"]])
def test_cli_odd_feed_ids_are_unknown_feeds(db: str, command: list[str], raw: str) -> None:
    r = CliRunner().invoke(app, [*command, raw])
    assert r.exit_code == 2, (r.output, r.exception)
    assert not isinstance(r.exception, ValueError | OverflowError)
    assert r.stderr.strip() == f"error: not found: feed {raw!r}"


@pytest.mark.parametrize("raw", ODD_IDS)
def test_cli_refresh_names_odd_ids_and_crawls_nothing(db: str, raw: str) -> None:
    r = CliRunner().invoke(app, ["feeds", "refresh", raw, "--json"])
    assert r.exit_code == 2, (r.output, r.exception)
    assert f"not found {raw!r}" in r.stderr


def test_cli_plain_ids_still_work(db: str) -> None:
    r = CliRunner().invoke(app, ["feeds", "show", "1", "--json"])
    assert r.exit_code == 0, r.output
    assert '"url": "http://ids.example.test/feed.xml"' in r.stdout

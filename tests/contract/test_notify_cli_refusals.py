"""``fairfetch notify …`` when the database refuses: one ``error: store: …`` line naming what
was refused, exit status 2, no traceback, and never a reader's token (SQLAlchemy's own text
carried the new reader's address and tokens in ``[parameters: …]``)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from typer.testing import CliRunner, Result

from fairfetch.cli import app
from fairfetch.store import notify_repo as repo
from fairfetch.store import open_store

from .conftest import assert_clean_error

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
FEED = "https://a.example/feed"
#: A token the store mints (secrets.token_urlsafe(18)): 24 URL-safe characters.
TOKENISH = re.compile(r"(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{24}(?![A-Za-z0-9_-])")


def _read_only(path: Path) -> str:
    return f"sqlite:///file:{path}?mode=ro&uri=true"


def _one_store_line(r: Result, *named: str) -> str:
    assert_clean_error(r, *named)
    lines = [line for line in r.output.splitlines() if line.strip()]
    assert len(lines) == 1, r.output
    assert lines[0].startswith("error: store: "), r.output
    for marker in ("[SQL:", "[parameters:", "sqlalche.me"):
        assert marker not in r.output, r.output
    return lines[0]


def test_notify_cli_subscribe_on_a_read_only_database_is_one_line_without_tokens(
    tmp_path: Path,
) -> None:
    path = tmp_path / "fairfetch.db"
    store = open_store(f"sqlite:///{path}")
    feed, _ = store.add_feed(FEED, now=NOW, politeness_key="a.example")
    store.close()

    r = CliRunner().invoke(
        app, ["--db", _read_only(path), "notify", "subscribe", "reader@x.example", FEED]
    )

    line = _one_store_line(r, "readonly database")
    assert line.startswith(f"error: store: subscribing 'reader@x.example' to feed {feed.id}: "), (
        r.output
    )
    assert TOKENISH.search(r.output) is None, r.output
    check = open_store(f"sqlite:///{path}")
    try:
        assert repo.list_subscriptions(check) == []
    finally:
        check.close()


def test_notify_cli_confirm_on_a_read_only_database_keeps_the_token_out(tmp_path: Path) -> None:
    path = tmp_path / "fairfetch.db"
    store = open_store(f"sqlite:///{path}")
    try:
        feed, _ = store.add_feed(FEED, now=NOW, politeness_key="a.example")
        sub = repo.subscribe(store, "reader@x.example", feed.id, mode="realtime", hour=8,
                             weekday=0, tz="UTC", only=(), exclude=(), now=NOW).subscription
    finally:
        store.close()
    token = sub["confirm_token"]

    r = CliRunner().invoke(app, ["--db", _read_only(path), "notify", "confirm", token])

    line = _one_store_line(r, "confirming a subscription", "readonly database")
    assert token not in r.output, r.output
    assert TOKENISH.search(line) is None, line

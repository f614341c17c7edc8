"""The notify commands find a feed as the ``feeds`` commands do: by id, current or given URL,
in any spelling of it (scheme and host case, a fragment).

``notify subscribe r@x HTTP://BLOG.example.test/feed.xml`` added a second feed, spelled as typed,
next to the directory's own and subscribed the reader to that copy (two crawls of one feed, the
reader's digest on a feed nobody else sees); ``notify unsubscribe`` and ``notify grant --feed``
did not find a feed by its id or by another spelling ('not found').
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from fairfetch.cli import app
from fairfetch.store import open_store

FEED = "http://blog.example.test/feed.xml"
SPELLINGS = ["HTTP://BLOG.Example.TEST/feed.xml", "http://blog.example.test/feed.xml#top", "1"]

Run = Callable[..., Result]


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Run:
    url = f"sqlite:///{tmp_path}/lookup.db"
    monkeypatch.setenv("FAIRFETCH_DB", url)
    # Nothing listens on the discard port: confirmation mails stay queued, nothing leaves.
    monkeypatch.setenv("FAIRFETCH_SMTP_URL", "smtp://127.0.0.1:9")
    store = open_store(url)
    try:
        feed, _ = store.add_feed(FEED, now=datetime.now(UTC), politeness_key="example.test")
        assert feed.id == 1
    finally:
        store.close()

    def run(*args: str) -> Result:
        return CliRunner().invoke(app, list(args))

    return run


def _feeds(cli: Run) -> list[str]:
    r = cli("feeds", "list", "--json")
    assert r.exit_code == 0, r.output
    return [f["url"] for f in json.loads(r.stdout)]


@pytest.mark.parametrize("given", SPELLINGS)
def test_cli_notify_subscribe_finds_the_directory_feed(cli: Run, given: str) -> None:
    r = cli("notify", "subscribe", "reader@example.test", given)
    assert r.exit_code == 0, (r.output, r.exception)
    assert _feeds(cli) == [FEED]
    subs = json.loads(cli("notify", "list", "--json").stdout)
    assert [s["feed_url"] for s in subs] == [FEED]


def test_cli_notify_subscribe_adds_an_unknown_feed_in_its_normal_spelling(cli: Run) -> None:
    r = cli("notify", "subscribe", "reader@example.test", "HTTP://New.Example.TEST/rss#x")
    assert r.exit_code == 0, (r.output, r.exception)
    assert sorted(_feeds(cli)) == [FEED, "http://new.example.test/rss"]
    r = cli("feeds", "add", "http://new.example.test/rss")  # the same feed, not a second one
    assert "http://new.example.test/rss" in r.stdout
    assert sorted(_feeds(cli)) == [FEED, "http://new.example.test/rss"]


@pytest.mark.parametrize("given", SPELLINGS)
def test_cli_notify_unsubscribe_finds_the_feed(cli: Run, given: str) -> None:
    assert cli("notify", "subscribe", "reader@example.test", FEED).exit_code == 0
    r = cli("notify", "unsubscribe", "reader@example.test", given)
    assert r.exit_code == 0, (r.output, r.exception)
    assert "1 subscription(s) ended" in r.stdout


@pytest.mark.parametrize("given", SPELLINGS)
def test_cli_notify_grant_finds_the_feed(cli: Run, given: str) -> None:
    r = cli("notify", "grant", "Publisher", "5", "--feed", given, "--json")
    assert r.exit_code == 0, (r.output, r.exception)
    assert json.loads(r.stdout)["balance"] == 5


def test_cli_notify_unknown_feed_is_still_not_found(cli: Run) -> None:
    for args in (["notify", "unsubscribe", "reader@example.test", "http://nowhere.test/f"],
                 ["notify", "grant", "P", "5", "--feed", "http://nowhere.test/f"]):
        r = cli(*args)
        assert r.exit_code == 2, (args, r.output)
        assert r.stderr.strip() == "error: not found: feed 'http://nowhere.test/f'"


@pytest.mark.parametrize("bad", ["http://bad.example.test/\x01feed", "http://[oops/feed"])
def test_cli_notify_subscribe_refuses_a_url_feeds_add_refuses(cli: Run, bad: str) -> None:
    r = cli("notify", "subscribe", "reader@example.test", bad)
    assert r.exit_code == 2, (r.output, r.exception)
    assert repr(bad) in r.stderr
    assert _feeds(cli) == [FEED]  # nothing added

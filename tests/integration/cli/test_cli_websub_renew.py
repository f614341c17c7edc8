"""``fairfetch websub renew`` finds feeds as the other commands do, and each once.

``websub renew URL URL`` subscribed the same feed twice (two subscriptions, two callbacks: the hub
pushes every update twice); a feed named by its id or by a differently spelled URL was 'not
found', though ``feeds show`` and ``feeds refresh`` find it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from fairfetch.cli import app
from fairfetch.store import open_store
from fairfetch.store import websub_repo as repo
from fairfetch.testing import Testbed, testbed_thread


def _run(db: str, *args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(app, ["--db", db, *args], env=env)

@pytest.fixture(scope="module")
def tb() -> Iterator[Testbed]:
    with testbed_thread(seed=3) as testbed:
        yield testbed


@pytest.fixture
def video(tb: Testbed, tmp_path: Path) -> tuple[str, str, dict[str, str]]:
    """A fresh database holding one video feed that advertises the testbed's hub."""
    db = f"sqlite:///{tmp_path}/renew.db"
    # The hub verifies at this address, where nothing answers: the subscription stays pending,
    # which is all these tests look at.
    env = {**tb.env(), "FAIRFETCH_PUBLIC_URL": "http://127.0.0.1:9/"}
    url = tb.catalog(behaviours=["youtube"])[0].url
    r = _run(db, "feeds", "add", url, env=env)
    assert r.exit_code == 0, r.output
    return db, url, env


def _subscriptions(db: str) -> list[repo.SubscriptionRecord]:
    store = open_store(db)
    try:
        return list(repo.list_subscriptions(store))
    finally:
        store.close()


def test_cli_websub_renew_a_feed_named_twice_subscribes_it_once(
    video: tuple[str, str, dict[str, str]],
) -> None:
    db, url, env = video
    r = _run(db, "websub", "renew", url, url, env=env)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    subs = _subscriptions(db)
    assert len(subs) == 1, [(s.id, s.state) for s in subs]
    assert r.stdout.count("feed 1") == 1, r.stdout


@pytest.mark.parametrize("name", ["id", "spelling"])
def test_cli_websub_renew_finds_a_feed_as_the_other_commands_do(
    video: tuple[str, str, dict[str, str]], name: str
) -> None:
    db, url, env = video
    given = "1" if name == "id" else url.replace("http://www.youtube.test", "HTTP://WWW.YouTube.TEST")
    shown = _run(db, "feeds", "show", given, "--json", env=env)
    assert shown.exit_code == 0, shown.output  # the feed is found this way elsewhere
    r = _run(db, "websub", "renew", given, env=env)
    assert "not found" not in r.stderr, r.stderr
    assert [s.feed_id for s in _subscriptions(db)] == [json.loads(shown.stdout)["id"]]


def test_cli_websub_renew_an_unknown_feed_is_one_line(
    video: tuple[str, str, dict[str, str]],
) -> None:
    db, _url, env = video
    r = _run(db, "websub", "renew", "http://nowhere.test/feed", env=env)
    assert r.exit_code == 2, (r.output, r.exception)
    assert r.stderr.strip() == "error: not found: feed 'http://nowhere.test/feed'"
    assert _subscriptions(db) == []

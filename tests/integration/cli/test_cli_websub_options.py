"""``fairfetch websub list|stats`` refuse what they cannot use, naming it.

- ``websub list --state bogus`` listed nothing with exit 0, as if there were no subscriptions;
- ``websub stats --hours`` took a negative window (a 'since' in the future: every count 0) and
  crashed with an OverflowError / ValueError traceback on inf, nan or 1e9.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from fairfetch.cli import app
from fairfetch.store import open_store
from fairfetch.store import websub_repo as repo
from fairfetch.websub.state import STATES, Event


def _run(db: str, *args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(app, ["--db", db, *args], env=env)


@pytest.fixture
def db(tmp_path: Path) -> str:
    """A store with one denied subscription (and one ping), like test_websub_cli's."""
    url = f"sqlite:///{tmp_path}/ws.db"
    store = open_store(url)
    try:
        now = datetime.now(UTC)
        feed, _ = store.add_feed("http://pub.test/f", now=now, politeness_key="pub.test")
        sub = repo.create_subscription(store, feed_id=feed.id, hub_url="http://hub.test/",
                                       topic_url="http://pub.test/f", secret="s",
                                       requested_lease=60, now=now)
        repo.apply_event(store, sub.id, Event.DENIED, now, denied_reason="quota")
        repo.record_ping(store, subscription_id=sub.id, feed_id=feed.id, outcome="ignored",
                         http_status=200, now=now)
    finally:
        store.close()
    return url


@pytest.mark.parametrize("state", ["bogus", "Denied", "activ"])
def test_cli_websub_list_refuses_an_unknown_state(db: str, state: str) -> None:
    r = _run(db, "websub", "list", "--state", state)
    assert r.exit_code == 2, (r.output, r.exception)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert repr(state) in r.stderr
    assert "pending" in r.stderr  # what it accepts
    assert "unsubscribed" in r.stderr
    assert r.stdout == ""


def test_cli_websub_list_every_known_state_is_accepted(db: str) -> None:
    for state in STATES:
        r = _run(db, "websub", "list", "--state", state, "--json")
        assert r.exit_code == 0, (state, r.output)
        rows = json.loads(r.stdout)
        assert [row["state"] for row in rows] == (["denied"] if state == "denied" else [])


@pytest.mark.parametrize("hours", ["-1", "0", "nan", "inf", "-inf", "1e9"])
def test_cli_websub_stats_refuses_a_window_it_cannot_use(db: str, hours: str) -> None:
    r = _run(db, "websub", "stats", "--hours", hours)
    assert r.exit_code == 2, (r.output, r.exception)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "--hours" in r.stderr
    assert "Traceback" not in r.output


@pytest.mark.parametrize("hours", ["0.5", "24", str(24 * 366 * 100)])
def test_cli_websub_stats_takes_a_positive_window(db: str, hours: str) -> None:
    r = _run(db, "websub", "stats", "--hours", hours, "--json")
    assert r.exit_code == 0, (r.output, r.exception)
    stats = json.loads(r.stdout)
    assert (stats["received"], stats["ignored"]) == (1, 1)


def test_cli_websub_list_folds_a_long_note_instead_of_cutting_it(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/note.db"
    reason = "the-hub-refused-this-topic-because-the-publisher-asked-it-to-stop-pushing-updates"
    store = open_store(url)
    try:
        now = datetime.now(UTC)
        feed, _ = store.add_feed("http://pub.test/f", now=now, politeness_key="pub.test")
        sub = repo.create_subscription(store, feed_id=feed.id, hub_url="http://hub.test/",
                                       topic_url="http://pub.test/f", secret="s",
                                       requested_lease=60, now=now)
        repo.apply_event(store, sub.id, Event.DENIED, now, denied_reason=reason)
    finally:
        store.close()
    r = _run(url, "websub", "list")  # 80 columns, as in a pipe
    assert r.exit_code == 0, r.output
    assert "…" not in r.stdout, r.stdout
    note = "".join(ln.split("│")[6].strip() for ln in r.stdout.splitlines() if ln.count("│") == 7)
    assert reason in note, r.stdout

"""Strings from other parties never reach the terminal as control sequences.

A hub's ``hub.reason`` (the query of its "denied" GET on our callback) is kept as the hub wrote
it, and ``websub list`` printed it raw in its note column: ``\\x1b]0;…\\x07`` retitles the
operator's terminal, ``\\x1b[2J`` clears it, and U+009B is a one-character CSI. Text output
shows the rest of the string; ``--json`` escapes them (valid JSON that reads back the same)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from typer.testing import CliRunner

from fairfetch.cli import app
from fairfetch.store import open_store
from fairfetch.store import websub_repo as repo
from fairfetch.websub.state import Event

REASON = "Denied\x1b]0;pwned\x07 \x1b[2J\x1b[31mRed\x1b[0m \x9b31mC1\x85 end"
CONTROLS = ("\x1b", "\x9b", "\x07", "\x85")


def _db(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path}/ctl.db"
    store = open_store(url)
    try:
        now = datetime.now(UTC)
        feed, _ = store.add_feed("http://pub.test/f", now=now, politeness_key="pub.test")
        sub = repo.create_subscription(
            store, feed_id=feed.id, hub_url="http://hub.test/", topic_url=feed.url,
            secret="s", requested_lease=864000, now=now)
        repo.apply_event(store, sub.id, Event.DENIED, now, denied_reason=REASON)
    finally:
        store.close()
    return url


def test_cli_a_hubs_reason_reaches_the_terminal_without_control_characters(
    tmp_path: Path,
) -> None:
    db = _db(tmp_path)
    runner = CliRunner()
    for args in (["websub", "list"], ["feeds", "show", "http://pub.test/f"]):
        r = runner.invoke(app, ["--db", db, *args])
        assert r.exit_code == 0, r.output
        assert not any(c in r.stdout for c in CONTROLS), (args, r.stdout)
    text = runner.invoke(app, ["--db", db, "websub", "list"]).stdout
    for word in ("Denied", "Red", "end"):  # the words are still shown
        assert word in text, text

    for args in (["websub", "list", "--json"], ["feeds", "show", "http://pub.test/f", "--json"]):
        r = runner.invoke(app, ["--db", db, *args])
        assert r.exit_code == 0, r.output
        assert not any(c in r.stdout for c in CONTROLS), (args, r.stdout)
        data = json.loads(r.stdout)
        reason = data[0]["denied_reason"] if args[0] == "websub" else (
            data["websub"]["denied_reason"])
        assert reason == REASON  # the data itself is kept whole

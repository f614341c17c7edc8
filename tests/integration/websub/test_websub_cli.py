"""``fairfetch websub list|stats`` on a store with a subscription."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from typer.testing import CliRunner

from fairfetch.cli import app
from fairfetch.store import open_store
from fairfetch.store import websub_repo as repo
from fairfetch.websub.state import Event


def test_websub_cli_list_and_stats(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/ff.db"
    store = open_store(db)
    now = datetime.now(UTC)
    feed, _ = store.add_feed("http://pub.test/f", now=now, politeness_key="pub.test")
    sub = repo.create_subscription(store, feed_id=feed.id, hub_url="http://hub.test/",
                                   topic_url="http://pub.test/f", secret="s", requested_lease=60,
                                   now=now)
    repo.apply_event(store, sub.id, Event.DENIED, now, denied_reason="quota")
    repo.record_ping(store, subscription_id=sub.id, feed_id=feed.id, outcome="ignored",
                     http_status=200, now=now)
    store.close()
    runner = CliRunner()
    result = runner.invoke(app, ["--db", db, "websub", "list", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert [(r["feed"], r["state"], r["denied_reason"]) for r in rows] == [
        ("http://pub.test/f", "denied", "quota")]
    result = runner.invoke(app, ["--db", db, "websub", "stats", "--json"])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.output)
    assert (stats["received"], stats["ignored"], stats["accepted"]) == (1, 1, 0)

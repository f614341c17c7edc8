"""``fairfetch websub stats`` as text, as docs/websub.md's Operations section has a newcomer
run it: it printed the delivery queue and the subscriptions as Python dicts
(``subs : {'active': 1}``) and left out what ``--json`` has: the rejected pings by reason and a
bucket the code does not know (``other``, which websub_stats adds precisely so that it is shown
rather than dropped: received 5 was followed by buckets adding up to 4).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from fairfetch.cli import app
from fairfetch.store import open_store
from fairfetch.store import websub_repo as repo
from fairfetch.websub.state import Event


def _run(db: str, *args: str) -> Result:
    return CliRunner().invoke(app, ["--db", db, *args])


@pytest.fixture
def db(tmp_path: Path) -> str:
    """One active and one denied subscription, a queued delivery and pings of every kind."""
    url = f"sqlite:///{tmp_path}/wstext.db"
    store = open_store(url)
    try:
        now = datetime.now(UTC)
        subs = []
        for n in (1, 2):
            feed, _ = store.add_feed(
                f"http://pub{n}.test/f", now=now, politeness_key=f"pub{n}.test"
            )
            subs.append(repo.create_subscription(
                store, feed_id=feed.id, hub_url="http://hub.test/", topic_url=feed.url,
                secret="s", requested_lease=864000, now=now))  # fmt: skip
        repo.apply_event(store, subs[0].id, Event.VERIFIED, now, lease_seconds=864000,
                         verified_at=now, lease_expires_at=now + timedelta(days=10))
        repo.apply_event(store, subs[1].id, Event.DENIED, now, denied_reason="quota")
        repo.enqueue_delivery(store, subs[0], b"", "application/atom+xml", now)
        for outcome, detail in (("accepted", ""), ("rejected", "unsigned"),
                                ("rejected", "invalid"), ("rejected", "invalid"),
                                ("mystery", "")):  # fmt: skip
            repo.record_ping(store, subscription_id=subs[0].id, feed_id=subs[0].feed_id,
                             outcome=outcome, http_status=202, now=now - timedelta(minutes=1),
                             detail=detail)  # fmt: skip
    finally:
        store.close()
    return url


def test_walkthrough_websub_stats_text_says_what_json_says_in_words(db: str) -> None:
    data = json.loads(_run(db, "websub", "stats", "--json").stdout)
    assert data["rejected_by_reason"] == {"unsigned": 1, "invalid": 2}
    assert data["other"] == {"mystery": 1}
    [queued] = data["queue"]

    r = _run(db, "websub", "stats")
    assert r.exit_code == 0, (r.output, r.exception)
    out = r.stdout
    assert "{" not in out, out
    assert "'" not in out, out
    assert re.search(r"received: 5\b", out), out
    assert re.search(r"rejected: 3 \(invalid 2, unsigned 1\)", out), out
    assert re.search(r"other: mystery 1\b", out), out
    assert re.search(rf"queue: {queued} 1\b", out), out
    assert re.search(r"subscriptions: active 1, denied 1\b", out), out


def test_walkthrough_websub_stats_text_on_an_empty_store(tmp_path: Path) -> None:
    r = _run(f"sqlite:///{tmp_path}/empty.db", "websub", "stats")
    assert r.exit_code == 0, (r.output, r.exception)
    assert "{" not in r.stdout, r.stdout
    assert re.search(r"queue: empty", r.stdout), r.stdout
    assert re.search(r"subscriptions: none", r.stdout), r.stdout

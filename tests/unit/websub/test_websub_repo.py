"""The WebSub repository on both databases (SQLite and PostgreSQL): one contract, two engines."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from fairfetch.store import SqlStore, open_store
from fairfetch.store import websub_repo as repo
from fairfetch.store.tables import feeds
from fairfetch.store.tables_websub import websub_deliveries
from fairfetch.websub.state import Event, InvalidTransition
from fairfetch.websub.status import websub_stats, websub_summary

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.fixture
def store(db_url: str) -> Iterator[SqlStore]:
    s = open_store(db_url)
    try:
        yield s
    finally:
        s.close()


def _feed(store: SqlStore, url: str, *, hubs: list[str] | None = None, status: str = "ok") -> int:
    rec, _ = store.add_feed(url, now=T0, politeness_key="pub.test")
    with store.engine.begin() as conn:
        conn.execute(feeds.update().where(feeds.c.id == rec.id).values(
            hub_urls=hubs or [], status=status))
    return rec.id


def _sub(
    store: SqlStore, feed_id: int | None, topic: str = "http://pub.test/f"
) -> repo.SubscriptionRecord:
    return repo.create_subscription(store, feed_id=feed_id, hub_url="http://hub.test/",
                                    topic_url=topic, secret="s" * 43, requested_lease=86400,
                                    now=T0)


def test_websub_repo_create_and_lookup(store: SqlStore) -> None:
    fid = _feed(store, "http://pub.test/f")
    a, b = _sub(store, fid), _sub(store, fid)
    assert a.state == "pending"
    assert a.callback_token != b.callback_token
    assert repo.subscription_by_token(store, a.callback_token) == a
    assert repo.subscription_by_token(store, "nope") is None
    latest = repo.latest_for_feed(store, fid)
    assert latest is not None
    assert latest.id == b.id


def test_websub_repo_state_machine_enforced(store: SqlStore) -> None:
    sub = _sub(store, _feed(store, "http://pub.test/f"))
    later = T0 + timedelta(seconds=5)
    rec = repo.apply_event(store, sub.id, Event.VERIFIED, later, lease_seconds=100,
                           verified_at=later, lease_expires_at=later + timedelta(seconds=100))
    assert (rec.state, rec.lease_seconds, rec.updated_at) == ("active", 100, later)
    with pytest.raises(InvalidTransition):
        repo.apply_event(store, sub.id, Event.UNSUBSCRIBE_VERIFIED, later)
    after = repo.get_subscription(store, sub.id)
    assert after is not None
    assert after.state == "active"
    # a write older than the row's last change is skipped, not applied
    skipped = repo.apply_event(store, sub.id, Event.DENIED, later,
                               unless_changed_since=T0, denied_reason="x")
    assert skipped.state == "active"
    assert skipped.denied_reason is None
    with pytest.raises(LookupError):
        repo.apply_event(store, 99999, Event.VERIFIED, later)


def test_websub_repo_feeds_to_subscribe(store: SqlStore) -> None:
    with_hub = _feed(store, "http://pub.test/a", hubs=["http://hub.test/"])
    _feed(store, "http://pub.test/b")                                       # no hub
    _feed(store, "http://pub.test/c", hubs=["http://hub.test/"], status="dead")
    already = _feed(store, "http://pub.test/d", hubs=["http://hub.test/"])
    _sub(store, already)
    got = repo.feeds_to_subscribe(store, T0, retry_denied_after=3600)
    assert got == [(with_hub, "http://pub.test/a")]
    # a denial holds the feed back until retry_denied_after has passed
    denied = _sub(store, with_hub)
    repo.apply_event(store, denied.id, Event.DENIED, T0)
    assert repo.feeds_to_subscribe(store, T0 + timedelta(seconds=60), retry_denied_after=3600) == []
    assert repo.feeds_to_subscribe(store, T0 + timedelta(hours=2), retry_denied_after=3600) == [
        (with_hub, "http://pub.test/a")]


def test_websub_repo_to_unsubscribe_removed_and_dead(store: SqlStore) -> None:
    live = _feed(store, "http://pub.test/live")
    dead = _feed(store, "http://pub.test/dead", status="dead")
    gone = _feed(store, "http://pub.test/gone")
    s_live, s_dead, s_gone = _sub(store, live), _sub(store, dead), _sub(store, gone)
    store.delete_feed(gone)
    after = repo.get_subscription(store, s_gone.id)
    assert after is not None
    assert after.feed_id is None  # kept: we still owe the hub an unsubscribe
    ids = {s.id for s in repo.subscriptions_to_unsubscribe(store)}
    assert ids == {s_dead.id, s_gone.id}
    assert s_live.id not in ids


def test_websub_repo_subscriptions_due(store: SqlStore) -> None:
    sub = _sub(store, _feed(store, "http://pub.test/f"))
    repo.update_subscription(store, sub.id, T0, next_action_at=T0 + timedelta(hours=1))
    assert repo.subscriptions_due(store, T0) == []
    assert [s.id for s in repo.subscriptions_due(store, T0 + timedelta(hours=1))] == [sub.id]
    with pytest.raises(ValueError, match="apply_event"):
        repo.update_subscription(store, sub.id, T0, state="active")


def test_websub_repo_delivery_queue(store: SqlStore) -> None:
    fid = _feed(store, "http://pub.test/f")
    sub = _sub(store, fid)
    ids = [repo.enqueue_delivery(store, sub, b"\x00body\xff", "text/xml", T0) for _ in range(3)]
    claimed = repo.claim_deliveries(store, T0, limit=2)
    assert [d.id for d in claimed] == ids[:2]
    assert claimed[0].body == b"\x00body\xff"
    assert claimed[0].feed_id == fid
    assert repo.claim_deliveries(store, T0, ids=ids[:2]) == []        # not claimed twice
    # a claim abandoned by a crashed processor is taken again once stale
    again = repo.claim_deliveries(store, T0 + timedelta(hours=1), ids=ids[:2])
    assert [d.attempts for d in again] == [2, 2]
    repo.finish_deliveries(store, ids[:2], T0, status="done")
    assert repo.delivery_counts(store) == {"done": 2, "queued": 1}


def test_websub_repo_pings_and_status(store: SqlStore) -> None:
    fid = _feed(store, "http://pub.test/f")
    sub = _sub(store, fid)
    for outcome, detail in [("accepted", "queued"), ("rejected", "invalid"),
                            ("rejected", "unsigned"), ("ignored", "too old"),
                            ("retried", "")]:
        repo.record_ping(store, subscription_id=sub.id, feed_id=fid, outcome=outcome,
                         http_status=200, now=T0, detail=detail)
    repo.record_ping(store, subscription_id=None, feed_id=None, outcome="accepted",
                     http_status=202, now=T0 - timedelta(days=2))
    stats = websub_stats(store, T0 - timedelta(hours=1))
    assert stats["received"] == 5
    buckets = (stats["accepted"], stats["rejected"], stats["ignored"], stats["retried"])
    assert buckets == (1, 2, 1, 1)
    assert stats["rejected_by_reason"] == {"invalid": 1, "unsigned": 1}
    assert stats["subscriptions"] == {"pending": 1}
    summary = websub_summary(store, fid)
    assert summary is not None
    assert summary["state"] == "pending"
    assert summary["hub"] == "http://hub.test/"
    assert summary["lease_expires_at"] is None


def test_websub_repo_active_feed_ids(store: SqlStore) -> None:
    fid = _feed(store, "http://pub.test/f")
    sub = _sub(store, fid)
    repo.apply_event(store, sub.id, Event.VERIFIED, T0, lease_expires_at=T0 + timedelta(days=1))
    assert repo.active_feed_ids(store, T0) == {fid}
    assert repo.active_feed_ids(store, T0 + timedelta(days=2)) == set()


def test_websub_repo_tables_match_migration(store: SqlStore) -> None:
    insp = sa.inspect(store.engine)
    for table in ("websub_subscriptions", "websub_deliveries", "websub_pings"):
        assert table in insp.get_table_names()
    cols = {c["name"] for c in insp.get_columns("websub_subscriptions")}
    from fairfetch.store.tables_websub import websub_subscriptions
    assert cols == {c.name for c in websub_subscriptions.columns}


def test_websub_repo_done_delivery_drops_its_body(store: SqlStore) -> None:
    """A fat ping's body (up to 10 MB) is read once, by the processor; kept after that, every
    push grew the database for ever. A done delivery keeps its record, not its body; a failed
    one keeps the body, for the operator to look at why."""
    fid = _feed(store, "http://pub.test/f")
    sub = _sub(store, fid)
    done, failed = (repo.enqueue_delivery(store, sub, b"x" * 5000, "text/xml", T0) for _ in "ab")
    repo.finish_deliveries(store, [done], T0, status="done")
    repo.finish_deliveries(store, [failed], T0, status="failed", error="not a feed")
    with store.engine.connect() as conn:
        sizes = dict(conn.execute(
            sa.select(websub_deliveries.c.id, sa.func.length(websub_deliveries.c.body))
        ).all())  # fmt: skip
    assert sizes == {done: 0, failed: 5000}
    assert repo.delivery_counts(store) == {"done": 1, "failed": 1}


def test_websub_repo_migration_empties_bodies_of_deliveries_done_before(db_url: str) -> None:
    """A store written before 0009 holds every done delivery's body: the migration empties
    them (bytes on both backends) and leaves queued and failed ones as they were."""
    from alembic import command

    from fairfetch.store.engine import create_engine
    from fairfetch.store.migrate import _config

    store = open_store(db_url)
    fid = _feed(store, "http://pub.test/f")
    sub = _sub(store, fid)
    ids = [repo.enqueue_delivery(store, sub, b"x" * 300, "text/xml", T0) for _ in "abc"]
    with store.engine.begin() as conn:  # as an earlier fairfetch left them
        for i, status in zip(ids, ("done", "failed", "queued"), strict=True):
            conn.execute(websub_deliveries.update().where(websub_deliveries.c.id == i)
                         .values(status=status, body=b"x" * 300))  # fmt: skip
    store.close()
    engine = create_engine(db_url)
    with engine.begin() as conn:
        command.downgrade(_config(conn), "0009_websub_done_bodies-1")
        command.upgrade(_config(conn), "heads")
    engine.dispose()
    store = open_store(db_url)
    try:
        with store.engine.connect() as conn:
            bodies = dict(conn.execute(sa.select(websub_deliveries.c.id,
                                                 websub_deliveries.c.body)).all())  # fmt: skip
        assert bodies == {ids[0]: b"", ids[1]: b"x" * 300, ids[2]: b"x" * 300}
    finally:
        store.close()

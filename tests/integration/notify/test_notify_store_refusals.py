"""The notifier's store when the database refuses: one line naming what we were doing, and
never a reader's token.

SQLAlchemy's own text of a refused statement ends in ``[parameters: …]``: for the notifier's
tables that is a reader's address with their confirmation, management and digest tokens (each
one acts for the reader: confirms, changes, ends their subscriptions). Printed by the CLI or
logged by the notifier's pass, that leaked them. Every refusal here is a real one: a read-only
SQLite file, a second connection holding SQLite's write lock (ours does not wait for it), a
row lock held on PostgreSQL, and a foreign key refusing a subscription to a removed feed."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import event

from fairfetch.errors import StoreError
from fairfetch.store import SqlStore, open_store
from fairfetch.store import notify_repo as repo
from fairfetch.store.tables_notify import notify_readers, notify_subscriptions

from .conftest import T0, _world

#: What a token minted by the store looks like (secrets.token_urlsafe(18)); outbox Message-IDs
#: (token_hex(12)) match it too.
TOKENISH = re.compile(r"^[A-Za-z0-9_-]{24}$")
FEED = "https://a.example.test/feed"


@dataclass
class Seeded:
    """A database with a feed, an active subscriber with a queued item, a pending one, and a
    publisher paying for the feed: every token in it, to look for in messages."""

    path: Path
    feed_id: int
    active_email: str
    manage_token: str
    reader_token: str
    confirm_token: str
    item_id: int
    tokens: list[str]


def _seed(path: Path) -> Seeded:
    w = _world(f"sqlite:///{path}")
    try:
        fid = w.add_feed(FEED)
        active = w.subscribe("ana@x.example", fid, at=T0)
        pending = repo.subscribe(w.store, "ben@x.example", fid, mode="realtime", hour=8,
                                 weekday=0, tz="UTC", only=(), exclude=(), now=T0).subscription
        w.write(fid, [w.entry("news")], at=T0 + timedelta(minutes=5))
        [item] = [r for r in w.outbox() if r["kind"] == "item"]
        repo.grant(w.store, "pub", 5, T0, feed_ids=[fid])
        with w.store.engine.connect() as conn:
            tokens = [
                *conn.execute(sa.select(notify_readers.c.token)).scalars(),
                *conn.execute(sa.select(notify_subscriptions.c.confirm_token)).scalars(),
                *conn.execute(sa.select(notify_subscriptions.c.manage_token)).scalars(),
            ]
            reader_token = conn.execute(
                sa.select(notify_readers.c.token).where(notify_readers.c.email == "ana@x.example")
            ).scalar_one()
    finally:
        w.store.close()
    return Seeded(path, fid, "ana@x.example", active["manage_token"], reader_token,
                  pending["confirm_token"], int(item["id"]), tokens)


def _params(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _params(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _params(v)


def assert_one_clean_line(err: StoreError, seeded_tokens: list[str], *named: str) -> None:
    """One line, starting ``store:``, naming the operation; no SQL, no parameters, no link, no
    PostgreSQL DETAIL; no token (the database's, or one the refused statement carried); the
    database's exception chained."""
    message = str(err)
    assert "\n" not in message, message
    assert "\r" not in message, message
    assert message.startswith("store: "), message
    for marker in ("[SQL:", "[parameters:", "sqlalche.me", "Background on this", "DETAIL"):
        assert marker not in message, (marker, message)
    cause = err.__cause__
    assert isinstance(cause, sa.exc.DBAPIError), repr(cause)
    carried = [p for p in _params(cause.params) if TOKENISH.match(p)]
    for token in [*seeded_tokens, *carried]:
        assert token not in message, (token, message)
    for name in named:
        assert name in message, (name, message)


Operation = Callable[[SqlStore, Seeded], Any]

#: Every write of the notifier's store: (what it is, the call, what its message must name).
WRITES: list[tuple[str, Operation, list[str]]] = [
    ("subscribe", lambda s, d: repo.subscribe(
        s, "new@x.example", d.feed_id, mode="realtime", hour=8, weekday=0, tz="UTC", only=(),
        exclude=(), now=T0 + timedelta(hours=2)),
     ["subscribing 'new@x.example' to feed"]),
    ("confirm", lambda s, d: repo.confirm(s, d.confirm_token, T0 + timedelta(hours=2)),
     ["confirming a subscription"]),
    ("update_subscription", lambda s, d: repo.update_subscription(
        s, d.manage_token, mode="daily", hour=9, weekday=0, tz="Europe/Paris", only=(),
        exclude=()),
     ["updating a subscription"]),
    ("unsubscribe_by_link", lambda s, d: repo.unsubscribe(
        s, T0 + timedelta(hours=2), manage_token=d.manage_token),
     ["unsubscribing"]),
    ("unsubscribe_digest", lambda s, d: repo.unsubscribe(
        s, T0 + timedelta(hours=2), reader_token=d.reader_token),
     ["unsubscribing"]),
    ("unsubscribe_by_email", lambda s, d: repo.unsubscribe(
        s, T0 + timedelta(hours=2), email=d.active_email, feed_id=d.feed_id),
     ["unsubscribing 'ana@x.example' from feed"]),
    ("import_subscriptions", lambda s, d: repo.import_subscriptions(
        s, [{"email": "imp@x.example", "feed_id": d.feed_id}], T0),
     ["importing 1 subscription"]),
    ("close_issue", lambda s, d: repo.close_issue(s, d.item_id, T0), ["notification"]),
    ("hold_credits", lambda s, d: repo.hold_credits(s, d.item_id, [1], T0),
     ["credit", "notification"]),
    ("mark_sent", lambda s, d: repo.mark_sent(s, d.item_id, T0, subject="news"),
     ["marking notification", "sent"]),
    ("mark_temporary", lambda s, d: repo.mark_temporary(
        s, d.item_id, T0, "451 try later", T0 + timedelta(minutes=5)),
     ["notification"]),
    ("hold_queue", lambda s, d: repo.hold_queue(
        s, d.item_id, T0, "connection refused", T0 + timedelta(minutes=5)),
     ["notification"]),
    ("mark_failed", lambda s, d: repo.mark_failed(s, d.item_id, T0, "550 no", flag_after=3),
     ["marking notification", "failed"]),
    ("cancel", lambda s, d: repo.cancel(s, d.item_id, "unsubscribed"),
     ["cancelling notification"]),
    ("grant", lambda s, d: repo.grant(s, "pub", 3, T0), ["granting", "'pub'"]),
    ("record_sink", lambda s, d: repo.record_sink(
        s, received_at=T0, mail_from="a@x.example", rcpt_to="b@x.example", subject="s",
        message_id="<m@x>", raw="raw"),
     ["sink"]),
]


@pytest.fixture
def seeded(tmp_path: Path) -> Seeded:
    return _seed(tmp_path / "notify.db")


@pytest.mark.parametrize(("_name", "operation", "named"), WRITES, ids=[w[0] for w in WRITES])
def test_notify_read_only_database_every_write_is_one_line_without_tokens(
    seeded: Seeded, _name: str, operation: Operation, named: list[str]
) -> None:
    store = open_store(f"sqlite:///file:{seeded.path}?mode=ro&uri=true")
    try:
        with pytest.raises(StoreError) as caught:
            operation(store, seeded)
        assert_one_clean_line(caught.value, seeded.tokens, *named, "readonly database")
    finally:
        store.close()


def test_notify_read_only_database_unsubscribing_by_link_keeps_the_subscription(
    seeded: Seeded,
) -> None:
    store = open_store(f"sqlite:///file:{seeded.path}?mode=ro&uri=true")
    try:
        with pytest.raises(StoreError):
            repo.unsubscribe(store, T0, manage_token=seeded.manage_token)
        assert repo.subscription_by_token(store, seeded.manage_token)["status"] == "active"
    finally:
        store.close()


@pytest.fixture
def locked(seeded: Seeded) -> Iterator[SqlStore]:
    """The seeded store while another connection holds its write lock (BEGIN IMMEDIATE); ours
    gives up at once (busy_timeout 0) instead of waiting 30 s: the refusal is certain."""
    store = open_store(f"sqlite:///{seeded.path}")

    @event.listens_for(store.engine, "connect")
    def _impatient(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.execute("PRAGMA busy_timeout=0")

    store.engine.dispose()
    other = sqlite3.connect(seeded.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        yield store
    finally:
        other.execute("ROLLBACK")
        other.close()
        store.close()


@pytest.mark.parametrize(("_name", "operation", "named"), WRITES, ids=[w[0] for w in WRITES])
def test_notify_locked_database_every_write_is_one_line_without_tokens(
    seeded: Seeded, locked: SqlStore, _name: str, operation: Operation, named: list[str]
) -> None:
    with pytest.raises(StoreError) as caught:
        operation(locked, seeded)
    assert_one_clean_line(caught.value, seeded.tokens, *named, "database is locked")


def test_notify_subscribing_to_a_removed_feed_keeps_the_new_tokens_out_of_the_message(
    db_url: str,
) -> None:
    """The feed went (the web's delete) between the form's look-up and the subscription: the
    foreign key refuses it. The refused INSERT carried the new confirmation and management
    tokens, and PostgreSQL's DETAIL names the key: none of it in the message."""
    store = open_store(db_url)
    try:
        with pytest.raises(StoreError) as caught:
            repo.subscribe(store, "reader@x.example", 987654, mode="realtime", hour=8,
                           weekday=0, tz="UTC", only=(), exclude=(), now=T0)
        assert_one_clean_line(caught.value, [], "subscribing 'reader@x.example' to feed 987654")
        assert "foreign key" in str(caught.value).lower(), str(caught.value)
        assert [p for p in _params(caught.value.__cause__.params) if TOKENISH.match(p)], (
            "the refused statement carried no token: this test proves nothing"
        )
        assert repo.list_subscriptions(store) == []
    finally:
        store.close()


def test_notify_postgresql_row_lock_on_unsubscribe_is_one_line_without_the_token(
    pg_url: str,
) -> None:
    """PostgreSQL's lock timeout (another transaction holds the subscription's row) comes with
    a CONTEXT line quoting the row: the message keeps the first line only, and no token."""
    store = open_store(pg_url)
    try:
        feed, _ = store.add_feed(FEED, now=T0, politeness_key="k")
        sub = repo.subscribe(store, "ana@x.example", feed.id, mode="realtime", hour=8,
                             weekday=0, tz="UTC", only=(), exclude=(), now=T0).subscription
    finally:
        store.close()
    holder = sa.create_engine(pg_url.replace("postgresql://", "postgresql+psycopg://", 1))
    store = open_store(pg_url)

    @event.listens_for(store.engine, "connect")
    def _impatient(dbapi_conn: Any, _record: Any) -> None:
        with dbapi_conn.cursor() as cur:  # a held lock is refused at once, not waited for
            cur.execute("SET lock_timeout = 1")
        dbapi_conn.commit()

    store.engine.dispose()
    try:
        with holder.begin() as conn:
            conn.execute(
                sa.select(notify_subscriptions.c.id)
                .where(notify_subscriptions.c.id == sub["id"]).with_for_update()
            ).all()
            with pytest.raises(StoreError) as caught:
                repo.unsubscribe(store, T0, manage_token=sub["manage_token"])
        assert_one_clean_line(
            caught.value, [sub["manage_token"], sub["confirm_token"]], "unsubscribing",
            "lock timeout",
        )
    finally:
        store.close()
        holder.dispose()

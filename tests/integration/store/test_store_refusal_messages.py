"""What a user sees when the database refuses: one line naming what we were doing and on what,
the database's own reason, and nothing else (no SQL, no bound parameters: they hold feed URLs,
WebSub secrets, …); the database's exception stays chained for a traceback or a debug log.

Every refusal here is a real one: a second SQLite connection holding the write lock (with no
busy wait on ours), a read-only SQLite file, and constraint violations on SQLite and PostgreSQL.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import event

from fairfetch.errors import StoreError
from fairfetch.net.robots import RobotsCopy
from fairfetch.store import (
    CrawlWrite,
    SqlStore,
    directory_repo,
    open_store,
    robots_repo,
    websub_repo,
)

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
SECRET = "s3cr3t-not-for-logs"


def assert_one_clean_line(err: StoreError, *named: str) -> None:
    """The message is one line, names the operation and resource, and carries no SQL."""
    message = str(err)
    assert "\n" not in message, message
    assert "\r" not in message, message
    for marker in ("[SQL:", "[parameters:", "sqlalche.me", "DETAIL", "Background on this"):
        assert marker not in message, (marker, message)
    assert SECRET not in message, message
    assert message.startswith("store: "), message
    for name in named:
        assert name in message, (name, message)
    assert isinstance(err.__cause__, sa.exc.DBAPIError), repr(err.__cause__)


def _no_busy_wait(store: SqlStore) -> None:
    """Our connections give up at once on a lock (instead of the 30 s busy timeout): the
    refusal is then certain, with no waiting in the test."""

    @event.listens_for(store.engine, "connect")
    def _impatient(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.execute("PRAGMA busy_timeout=0")

    store.engine.dispose()


@pytest.fixture
def locked(tmp_path: Path) -> Iterator[tuple[SqlStore, int]]:
    """A store whose database another connection holds the write lock of (BEGIN IMMEDIATE),
    with one feed already in it."""
    path = tmp_path / "fairfetch.db"
    store = open_store(f"sqlite:///{path}")
    feed, _ = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
    _no_busy_wait(store)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        yield store, feed.id
    finally:
        other.execute("ROLLBACK")
        other.close()
        store.close()


def _crawl(feed_id: int, url: str, **changes: Any) -> CrawlWrite:
    return CrawlWrite(
        feed_id=feed_id, url=url, at=NOW, outcome="ok", politeness_key="a.example",
        http_status=200,
        feed_changes={"status": "ok", "error_count": 0, "last_success_at": NOW,
                      "last_fetched_at": NOW, "next_crawl_at": NOW + timedelta(hours=1),
                      **changes},
    )


def test_store_locked_database_adding_a_feed_is_one_line_naming_the_feed(
    locked: tuple[SqlStore, int],
) -> None:
    store, _ = locked
    url = "https://b.example/feed"
    with pytest.raises(StoreError) as caught:
        store.add_feed(url, now=NOW, politeness_key=f"{SECRET}.example",
                       original_url=f"b.example/feed?{SECRET}")
    assert_one_clean_line(caught.value, "adding feed", repr(url), "database is locked")


@pytest.mark.parametrize(
    ("operation", "named"),
    [
        (
            lambda s, fid: s.delete_feed(fid),
            ["removing feed 'https://a.example/feed'", "database is locked"],
        ),
        (lambda s, fid: s.set_due([fid], NOW), ["marking", "due", "database is locked"]),
        (lambda s, fid: s.record_outage(NOW, 3, SECRET), ["outage", "database is locked"]),
        (
            lambda s, fid: s.write([_crawl(fid, "https://a.example/feed", title=SECRET)]),
            ["crawl result", "'https://a.example/feed'", "database is locked"],
        ),
        (
            lambda s, fid: robots_repo.save_robots(
                s, [RobotsCopy("https://a.example", "ok", 200, SECRET, NOW.timestamp())]
            ),
            ["robots.txt", "database is locked"],
        ),
        (
            lambda s, fid: robots_repo.prune_robots(s, NOW),
            ["robots.txt", "database is locked"],
        ),
        (
            lambda s, fid: websub_repo.record_ping(
                s, subscription_id=None, feed_id=fid, outcome="accepted", http_status=202,
                now=NOW, detail=SECRET,
            ),
            ["WebSub", "database is locked"],
        ),
    ],
    ids=["delete_feed", "set_due", "record_outage", "write", "save_robots", "prune_robots",
         "record_ping"],
)
def test_store_locked_database_every_write_is_one_line_naming_the_operation(
    locked: tuple[SqlStore, int], operation: Any, named: list[str]
) -> None:
    store, feed_id = locked
    with pytest.raises(StoreError) as caught:
        operation(store, feed_id)
    assert_one_clean_line(caught.value, *named)


def test_store_read_only_database_removing_a_feed_names_it_and_keeps_it(tmp_path: Path) -> None:
    path = tmp_path / "fairfetch.db"
    store = open_store(f"sqlite:///{path}")
    url = "https://a.example/feed?user=7"
    store.add_feed(url, now=NOW, politeness_key="a.example")
    store.close()
    read_only = open_store(f"sqlite:///file:{path}?mode=ro&uri=true")
    try:
        with pytest.raises(StoreError) as caught:
            read_only.delete_feed(url)
        # The feed is named as the user gave it (its URL is the resource, not a parameter).
        message = str(caught.value)
        assert f"removing feed {url!r}" in message, message
        assert "readonly database" in message, message
        assert "\n" not in message, message
        assert "[SQL:" not in message, message
        assert "[parameters:" not in message, message
        assert isinstance(caught.value.__cause__, sa.exc.DBAPIError)
        assert read_only.get_feed(url).url == url
    finally:
        read_only.close()


def test_store_constraint_violation_keeps_the_websub_secret_out_of_the_message(
    db_url: str,
) -> None:
    """A subscription for a feed removed meanwhile (the web's delete racing the WebSub
    service): the foreign key refuses it. The driver's text (PostgreSQL's DETAIL names the key)
    and the statement's parameters (the hub secret, the callback token) must not reach the
    message a user or a log sees."""
    store = open_store(db_url)
    try:
        with pytest.raises(StoreError) as caught:
            websub_repo.create_subscription(
                store, feed_id=987654, hub_url="https://hub.example/", topic_url=
                "https://a.example/feed", secret=SECRET, requested_lease=None, now=NOW,
            )
        assert_one_clean_line(caught.value, "WebSub subscription", "'https://a.example/feed'")
        assert "foreign key" in str(caught.value).lower()
    finally:
        store.close()


def test_store_not_null_violation_in_a_crawl_write_is_one_line(db_url: str) -> None:
    """PostgreSQL reports a not-null violation with the whole failing row in its DETAIL (the
    feed's URL, title, …): none of it in the message, only what we were writing and why."""
    store = open_store(db_url)
    try:
        feed, _ = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
        with pytest.raises(StoreError) as caught:
            store.write([_crawl(feed.id, feed.url, title=SECRET, status=None)])
        assert_one_clean_line(caught.value, "crawl result", "'https://a.example/feed'")
        assert "status" in str(caught.value)
        assert store.get_feed(feed.id).status == "new"  # the batch was not half written
    finally:
        store.close()


#: Nothing listens there (port 1 of loopback): the connection is refused at once.
UNREACHABLE_PG = "postgresql+psycopg://fairfetch:pw@127.0.0.1:1/fairfetch"


def test_store_unreachable_postgresql_on_a_read_is_one_line() -> None:
    """The server is gone under a running process (a restart, a failover): a read fails
    naming what it was reading, in one line (libpq's reason spans two)."""
    store = SqlStore(UNREACHABLE_PG, migrate_schema=False)
    try:
        with pytest.raises(StoreError) as caught:
            directory_repo.status_counts(store)
        assert_one_clean_line(caught.value, "counting feeds", "Connection refused")
    finally:
        store.close()


def test_store_unreachable_postgresql_on_open_is_one_line_and_chained() -> None:
    with pytest.raises(StoreError) as caught:
        open_store(UNREACHABLE_PG)
    message = str(caught.value)
    assert "\n" not in message, message
    assert "127.0.0.1" in message, message
    assert "cannot open" in message, message
    assert "Connection refused" in message, message
    assert "pw" not in message.replace("postgresql+psycopg", "")  # the password stays masked
    assert isinstance(caught.value.__cause__, sa.exc.DBAPIError), repr(caught.value.__cause__)

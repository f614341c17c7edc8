"""Upgrading a database that is in use: an older revision with data in it, an upgrade killed
midway, a database from a newer fairfetch, and a file that is not fairfetch's at all.

Operators upgrade by running the new code (migrations apply on open), so every one of these
happens to someone on their first start after an upgrade; on SQLite and PostgreSQL.
"""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command

from fairfetch.errors import StoreError
from fairfetch.feeds.model import Contact, Entry, Person
from fairfetch.net.outcome import Hop
from fairfetch.store import CrawlWrite, SqlStore, open_store, websub_repo
from fairfetch.store import notify_subscriptions as subs
from fairfetch.store.engine import create_engine
from fairfetch.store.migrate import _config, is_current

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _crawl(store: SqlStore, feed_id: int, url: str, entries: list[Entry], **kw: object) -> None:
    store.write([CrawlWrite(
        feed_id=feed_id, url=url, at=NOW, outcome="ok", politeness_key="a.example",
        http_status=200, bytes=1234, duration=0.5,
        feed_changes={"status": "ok", "error_count": 0, "last_success_at": NOW,
                      "last_fetched_at": NOW, "next_crawl_at": NOW + timedelta(hours=1),
                      "title": f"Title of {url}"},
        entries=entries, **kw,  # type: ignore[arg-type]
    )])


def _fill(url: str) -> None:
    """A database in use: feeds with entries, authors, contacts and redirect hops, crawls of
    every outcome, confirmed and pending subscriptions with outbox rows, a WebSub subscription
    and a robots.txt copy."""
    store = open_store(url)
    try:
        a, _ = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example",
                              original_url="a.example/feed")
        b, _ = store.add_feed("https://b.example/rss", now=NOW, politeness_key="b.example")
        _crawl(store, a.id, a.url, [Entry(id="a1", title="First", link="https://a.example/1",
                                          published=NOW - timedelta(days=1))],
               first_crawl=True,
               hops=[Hop(url="http://a.example/feed", status=301,
                         location="https://a.example/feed")],
               authors=[(Person("Ada Lovelace", "ada@a.example", None), "atom:author")],
               contacts=[Contact("mailto:ada@a.example", "email", "atom:author")])
        _crawl(store, b.id, b.url, [Entry(id="b1", title="Bee")], first_crawl=True)
        sub = subs.subscribe(store, "reader@c.example", a.id, mode="realtime", hour=7,
                             weekday=0, tz="Europe/Paris", only=[], exclude=[], now=NOW)
        subs.confirm(store, sub.subscription["confirm_token"], NOW)
        subs.subscribe(store, "daily@c.example", b.id, mode="daily", hour=7, weekday=0,
                       tz=None, only=["news"], exclude=[], now=NOW)
        # A new item after the confirmation: a real-time notification in the outbox.
        _crawl(store, a.id, a.url, [Entry(id="a2", title="Second", link="https://a.example/2",
                                          published=NOW)])
        store.write([CrawlWrite(
            feed_id=b.id, url=b.url, at=NOW + timedelta(minutes=1), outcome="error",
            politeness_key="b.example", http_status=500, error_kind="http",
            error_detail="HTTP 500", feed_changes={"status": "error", "error_count": 1,
                                                   "last_error": "http: HTTP 500"},
        )])
        websub_repo.create_subscription(store, feed_id=a.id, hub_url="https://hub.example/",
                                        topic_url=a.url, secret="s3cret",
                                        requested_lease=86400, now=NOW)
        with store.engine.begin() as conn:
            conn.execute(sa.text(
                "INSERT INTO robots_txt (origin, state, status, body, fetched_at) "
                "VALUES ('https://a.example', 'ok', 200, 'User-agent: *', :t)"), {"t": NOW})
    finally:
        store.close()


def _at_revision(url: str, revision: str) -> None:
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            command.downgrade(_config(conn), revision)
    finally:
        engine.dispose()


def _snapshot(url: str) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table, as the database holds it (sorted: order is not data)."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            names = [n for n in sa.inspect(conn).get_table_names()
                     if n != "alembic_version" and not n.startswith("feeds_fts")]
            return {
                name: sorted((tuple(r) for r in conn.execute(sa.text(f'SELECT * FROM "{name}"'))),
                             key=repr)
                for name in names
            }
    finally:
        engine.dispose()


def _columns(url: str) -> dict[str, list[str]]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            insp = sa.inspect(conn)
            return {n: [c["name"] for c in insp.get_columns(n)] for n in insp.get_table_names()}
    finally:
        engine.dispose()


def _kept(url: str, before: dict[str, list[tuple[object, ...]]],
          columns: dict[str, list[str]]) -> dict[str, list[tuple[object, ...]]]:
    """The rows of the tables (and columns) that existed before the upgrade, read after it."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return {
                name: sorted((tuple(r) for r in conn.execute(sa.text(
                    "SELECT " + ", ".join(f'"{c}"' for c in columns[name]) + f' FROM "{name}"'))),
                    key=repr)
                for name in before
            }
    finally:
        engine.dispose()


@pytest.mark.parametrize("revision", ["0003_notify", "0001_core"])
def test_store_ops_upgrade_from_an_older_revision_keeps_every_stored_row(
    db_url: str, revision: str
) -> None:
    _fill(db_url)
    _at_revision(db_url, revision)
    before, columns = _snapshot(db_url), _columns(db_url)
    assert before["feeds"]
    assert before["entries"]
    assert before["crawls"]
    if revision == "0003_notify":
        assert before["notify_subscriptions"]
        assert before["notify_outbox"]

    store = open_store(db_url)  # the new code, started on the old database
    try:
        assert is_current(store.engine)
        assert _kept(db_url, before, columns) == before
        a = store.get_feed("a.example/feed")
        assert a.title == "Title of https://a.example/feed"
        assert sorted(e["entry_id"] for e in store.entries_of(a.id)) == ["a1", "a2"]
        # Search (0004) indexes what was already stored, authors included.
        from fairfetch.store.directory_repo import search_feeds

        assert [f["id"] for f in search_feeds(store, "Lovelace").rows] == [a.id]
    finally:
        store.close()


_KILLER = textwrap.dedent(
    """
    import os, signal, sys
    from sqlalchemy import event
    from fairfetch.store import migrate
    from fairfetch.store.engine import create_engine

    url, needle = sys.argv[1], sys.argv[2]
    engine = create_engine(url)

    @event.listens_for(engine, "after_cursor_execute")
    def _die(conn, cursor, statement, *args):
        if needle in statement:  # the statement has run: the process dies right after it
            os.kill(os.getpid(), signal.SIGKILL)

    migrate.upgrade(engine)
    print("upgrade finished without meeting", needle)
    """
)


def _upgrade_killed_after(url: str, needle: str) -> None:
    proc = subprocess.run([sys.executable, "-c", _KILLER, url, needle],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == -9, (proc.returncode, proc.stdout, proc.stderr)


def test_store_ops_upgrade_killed_midway_is_finished_by_the_next_start(db_url: str) -> None:
    _fill(db_url)
    _at_revision(db_url, "0003_notify")
    before, columns = _snapshot(db_url), _columns(db_url)
    _upgrade_killed_after(db_url, "ADD COLUMN closed_at")

    store = open_store(db_url)  # the next run
    try:
        assert is_current(store.engine)
        assert _kept(db_url, before, columns) == before
        assert "closed_at" in _columns(db_url)["notify_outbox"]
    finally:
        store.close()


def test_store_ops_first_creation_killed_midway_is_finished_by_the_next_start(
    db_url: str,
) -> None:
    _upgrade_killed_after(db_url, "CREATE TABLE entries")
    store = open_store(db_url)
    try:
        assert is_current(store.engine)
        feed, created = store.add_feed("https://a.example/feed", now=NOW,
                                       politeness_key="a.example")
        assert created
        assert store.get_feed(feed.id).url == "https://a.example/feed"
    finally:
        store.close()



def _fairfetch(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fairfetch", *args],
                          capture_output=True, text=True, check=False)


def test_store_ops_database_of_a_newer_fairfetch_is_refused_naming_it_and_the_revision(
    db_url: str,
) -> None:
    _fill(db_url)
    engine = create_engine(db_url)
    try:
        with engine.begin() as conn:  # a later fairfetch added a migration after one head
            # (the latest-numbered head: naming one, 0006, broke when 0015 followed it)
            conn.execute(sa.text(
                "UPDATE alembic_version SET version_num = '0099_future' "
                "WHERE version_num = (SELECT max(version_num) FROM alembic_version)"
            ))
    finally:
        engine.dispose()
    before = _snapshot(db_url)

    with pytest.raises(StoreError) as caught:
        open_store(db_url)
    message = str(caught.value)
    shown = sa.make_url(db_url).render_as_string(hide_password=True)
    assert shown in message
    assert "0099_future" in message
    assert _snapshot(db_url) == before

    if db_url.startswith("sqlite"):  # what the operator sees: one line, no traceback
        proc = _fairfetch("--db", db_url, "feeds", "list")
        assert proc.returncode == 2, proc
        assert "Traceback" not in proc.stderr
        assert "0099_future" in proc.stderr
        assert shown in proc.stderr


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_store_ops_sqlite_file_of_another_application_is_refused_and_left_untouched(
    tmp_path: Path,
) -> None:
    path = tmp_path / "notes.db"
    other = sqlite3.connect(path)
    other.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    other.execute("INSERT INTO notes (body) VALUES ('keep me')")
    other.commit()
    other.close()
    digest = _sha(path)
    url = f"sqlite:///{path}"

    with pytest.raises(StoreError) as caught:
        open_store(url)
    assert str(path) in str(caught.value)
    assert "not a fairfetch database" in str(caught.value)
    proc = _fairfetch("--db", url, "feeds", "list")
    assert proc.returncode == 2, proc
    assert "Traceback" not in proc.stderr
    assert str(path) in proc.stderr

    assert _sha(path) == digest  # not a table added, not even switched to WAL
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.db"]
    check = sqlite3.connect(path)
    assert check.execute("SELECT name FROM sqlite_master").fetchall() == [("notes",)]
    assert check.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    check.close()


@pytest.mark.parametrize("content", [b"\x00garbage" * 700, b"feeds,url\nhello,world\n"])
def test_store_ops_garbage_file_as_database_is_refused_naming_it_and_left_untouched(
    tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "fairfetch.db"
    path.write_bytes(content)
    url = f"sqlite:///{path}"
    with pytest.raises(StoreError) as caught:
        open_store(url)
    assert str(path) in str(caught.value)
    proc = _fairfetch("--db", url, "stats")
    assert proc.returncode == 2, proc
    assert "Traceback" not in proc.stderr
    assert str(path) in proc.stderr
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fairfetch.db"]


def test_store_ops_empty_file_is_a_new_database(tmp_path: Path) -> None:
    """The other side of the refusal: a file created empty (touch) is a database to create."""
    path = tmp_path / "fairfetch.db"
    path.touch()
    store = open_store(f"sqlite:///{path}")
    try:
        assert is_current(store.engine)
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    finally:
        store.close()

"""Several processes on one database, as a newcomer runs them: `serve` beside `crawl`, CLI
commands meanwhile. Real processes (or, where a step must be paused, a thread with its own
engine); the interleavings are forced with events on the statements, never with sleeps."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

from fairfetch.feeds.model import Entry
from fairfetch.store import CrawlWrite, migrate, open_store
from fairfetch.store.engine import create_engine

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

#: A safety net for a hung test, not a timed assertion: the waits below end on events.
_HANG = 60


def _in_thread(fn: Callable[[], None]) -> tuple[threading.Thread, list[BaseException]]:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            fn()
        except BaseException as exc:  # reported by the test
            errors.append(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, errors


_SECOND = textwrap.dedent(
    """
    import sys
    from sqlalchemy import event
    from fairfetch.store import migrate
    from fairfetch.store.engine import create_engine

    engine = create_engine(sys.argv[1])

    @event.listens_for(engine, "before_cursor_execute")
    def _writing(conn, cursor, statement, *args):
        # SQLite: BEGIN IMMEDIATE or a CREATE; PostgreSQL: the migration lock or a CREATE.
        text = statement.lstrip().upper()
        if text.startswith(("BEGIN", "CREATE")) or "PG_ADVISORY_XACT_LOCK" in text:
            print("writing", flush=True)

    migrate.upgrade(engine)
    print("current" if migrate.is_current(engine) else "not current", flush=True)
    """
)


def test_store_ops_two_processes_starting_on_a_new_database_both_come_up(db_url: str) -> None:
    """`fairfetch serve` and `fairfetch crawl` started together on a database that does not
    exist yet: the second waits for the first one's schema instead of creating it again
    ("table feeds already exists")."""
    first = create_engine(db_url)
    first_mid_creation, first_may_go_on = threading.Event(), threading.Event()

    @event.listens_for(first, "after_cursor_execute")
    def _pause(_c: Any, _cur: Any, statement: str, *_a: Any) -> None:
        if statement.lstrip().startswith("CREATE TABLE feeds"):
            first_mid_creation.set()
            assert first_may_go_on.wait(_HANG)

    second: subprocess.Popen[str] | None = None
    try:
        t1, errors1 = _in_thread(lambda: migrate.upgrade(first))
        assert first_mid_creation.wait(_HANG)
        second = subprocess.Popen([sys.executable, "-c", _SECOND, db_url],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert second.stdout is not None
        # The second is about to write while the first is midway through creating the schema.
        assert second.stdout.readline() == "writing\n"
        first_may_go_on.set()
        t1.join(_HANG)
        assert not t1.is_alive()
        assert errors1 == []
        out, err = second.communicate(timeout=_HANG)
        assert second.returncode == 0, err
        assert out.splitlines()[-1] == "current"
        assert migrate.is_current(first)
        with first.connect() as conn:
            assert conn.execute(sa.text("SELECT count(*) FROM feeds")).scalar() == 0
    finally:
        first_may_go_on.set()
        if second is not None and second.poll() is None:
            second.kill()
            second.wait()
        first.dispose()


def test_store_ops_feed_deleted_by_another_process_while_a_crawl_writes_fails_no_batch(
    tmp_path: Path,
) -> None:
    """`serve` deletes a feed (the web's admin form) while `crawl` writes a batch with that
    feed's result in it. The batch checks which feeds still exist before writing; on SQLite
    that check must already hold the write lock, or a delete committed between the check and
    the inserts breaks the foreign key and fails the whole batch (every feed's result lost)."""
    path = tmp_path / "fairfetch.db"
    store = open_store(f"sqlite:///{path}")
    gone, _ = store.add_feed("https://gone.example/feed", now=NOW, politeness_key="gone.example")
    kept, _ = store.add_feed("https://kept.example/feed", now=NOW, politeness_key="kept.example")
    # The other process: it does not wait for locks, so it either gets in at once or not at all.
    other = sqlite3.connect(path, timeout=0, isolation_level=None)
    other.execute("PRAGMA foreign_keys=ON")
    deleted: list[bool] = []
    refusals: list[str] = []
    armed = threading.Event()

    @event.listens_for(store.engine, "after_cursor_execute")
    def _delete_meanwhile(_c: Any, _cur: Any, _statement: str, *_a: Any) -> None:
        if not armed.is_set() or deleted:
            return  # only after the write's first statement
        try:
            other.execute("DELETE FROM feeds WHERE id = ?", (gone.id,))
            deleted.append(True)
        except sqlite3.OperationalError as exc:  # the writer holds the write lock
            refusals.append(str(exc))
            deleted.append(False)

    def result(feed: Any, title: str) -> CrawlWrite:
        return CrawlWrite(feed_id=feed.id, url=feed.url, at=NOW, outcome="ok",
                          politeness_key="x", feed_changes={"status": "ok"},
                          entries=[Entry(id="1", title=title)])

    try:
        armed.set()
        results = store.write([result(gone, "orphan"), result(kept, "kept")])
        armed.clear()
        assert deleted  # the other process did try, right after the write began
        assert store.get_feed(kept.id).entry_count == 1
        if deleted == [True]:  # it got in: its feed's result is dropped, nothing else
            assert [r.new_entries for r in results] == [0, 1]
        else:  # it had to wait for the write: both written, and its delete works after
            assert refusals == ["database is locked"]
            assert [r.new_entries for r in results] == [1, 1]
            other.execute("DELETE FROM feeds WHERE id = ?", (gone.id,))
        assert store.find_feed(gone.id) is None
        assert store.count_entries() == 1
    finally:
        other.close()
        store.close()

"""Several processes on one database, as a newcomer runs them: `serve` beside `crawl`, CLI
commands meanwhile. Real processes (or, where a step must be paused, a thread with its own
engine); the interleavings are forced with events on the statements, never with sleeps."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

from fairfetch.store import migrate
from fairfetch.store.engine import create_engine

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

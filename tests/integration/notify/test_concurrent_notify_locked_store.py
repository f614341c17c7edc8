"""A sender whose SQLite database another process keeps locked (an operator's ``sqlite3`` shell
left in a transaction, a long job of another program) must not mail the same notification on
every pass until the lock goes.

A real-time mail needed no write before its SMTP dialogue: the pass sent it, then failed to mark
it sent (the busy timeout ran out), and `run`'s notifier, a few seconds later, sent it again, and
again, one copy per pass for as long as the lock was held, each a reader's duplicate. A mail is
now sent only once the sender has written to the row it sends (the write that proves the store
will take the mark afterwards): a locked store fails the pass before anything goes on the wire.
The busy timeout is shortened for the test on the engine the test opened (the wait is SQLite's).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from fairfetch.errors import StoreError
from fairfetch.notify.service import send_due

from .conftest import FAST, T0, SmtpServer, World, _world


@pytest.fixture
def impatient_world(tmp_path: Path, smtp_server: SmtpServer) -> Iterator[World]:
    w = _world(f"sqlite:///{tmp_path}/locked.db", smtp_server.url)

    @event.listens_for(w.store.engine, "connect")
    def _short_wait(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.execute("PRAGMA busy_timeout=200")

    w.store.engine.dispose()  # connections made from now on wait 200 ms, not 30 s
    yield w
    w.store.close()


async def test_concurrent_lock_holder_does_not_make_each_pass_resend_a_mail(
    impatient_world: World, smtp_server: SmtpServer, tmp_path: Path
) -> None:
    w = impatient_world
    fid = w.add_feed("https://a.example.test/feed")
    w.subscribe("ana@example.test", fid)
    w.write(fid, [w.entry("the news")], at=T0 + timedelta(minutes=1))
    now = T0 + timedelta(minutes=2)
    assert [r["kind"] for r in w.outbox() if r["status"] == "pending"] == ["item"]

    other = sqlite3.connect(tmp_path / "locked.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process's write lock, over three passes
    try:
        for _ in range(3):
            with pytest.raises(StoreError, match="database is locked"):
                await send_due(w.store, w.settings, now, options=FAST)
    finally:
        other.execute("ROLLBACK")
        other.close()
    report = await send_due(w.store, w.settings, now, options=FAST)  # the lock is gone

    copies = Counter(str(r.msg["Subject"]) for r in smtp_server.accepted)
    assert len(copies) == 1
    assert set(copies.values()) == {1}, copies  # the reader got the news once
    assert report.sent == 1
    assert [r["status"] for r in w.outbox() if r["kind"] == "item"] == ["sent"]


async def test_concurrent_lock_holder_is_one_line_in_runs_log(
    impatient_world: World, tmp_path: Path, caplog: pytest.LogCaptureFixture,
    stop_on_warning: asyncio.Event, sqlite_write_lock: Any,
) -> None:
    """`run`'s notifier logs a pass the database refused on one line naming the database, not
    a traceback (with SQLAlchemy's statement and parameters) every few seconds."""
    import logging

    from fairfetch.notify.service import run_forever

    w = impatient_world
    fid = w.add_feed("https://a.example.test/feed")
    w.subscribe("ana@example.test", fid)
    w.write(fid, [w.entry("the news")], at=T0 + timedelta(minutes=1))
    caplog.set_level(logging.DEBUG)
    with sqlite_write_lock(tmp_path / "locked.db"):
        await run_forever(w.store, w.settings, stop_on_warning)

    shown = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert shown
    for record in shown:
        assert record.exc_info is None, record.getMessage()
        assert "\n" not in record.getMessage()
    assert "database is locked" in shown[0].getMessage()
    assert str(tmp_path / "locked.db") in shown[0].getMessage()

"""`run`'s WebSub upkeep on a SQLite database another process keeps locked (an operator's
``sqlite3`` shell left in a transaction) logs each refused pass on one line naming the database,
not a traceback with SQLAlchemy's statement and parameters every 30 seconds. The busy timeout is
shortened for the test on the engine the test opened (the wait itself is SQLite's)."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from fairfetch.config import Settings
from fairfetch.store import open_store, websub_repo
from fairfetch.websub.service import WebSubService
from fairfetch.websub.state import Event


async def test_concurrent_lock_holder_is_one_line_in_websub_upkeeps_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, stop_on_warning: asyncio.Event,
    sqlite_write_lock: Any,
) -> None:
    db = f"sqlite:///{tmp_path}/locked.db"
    store = open_store(db)

    @event.listens_for(store.engine, "connect")
    def _short_wait(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.execute("PRAGMA busy_timeout=200")

    store.engine.dispose()
    now = datetime.now(UTC)
    feed, _ = store.add_feed("http://pub.test/f", now=now, politeness_key="pub.test")
    sub = websub_repo.create_subscription(
        store, feed_id=feed.id, hub_url="http://hub.test/", topic_url=feed.url,
        secret="k" * 40, requested_lease=86400, now=now - timedelta(days=2),
    )  # fmt: skip
    # Active, its lease lapsed an hour ago: the upkeep's next pass writes the lapse first.
    websub_repo.apply_event(
        store, sub.id, Event.VERIFIED, now - timedelta(days=2),
        lease_expires_at=now - timedelta(hours=1), next_action_at=now - timedelta(hours=1),
    )  # fmt: skip
    settings = Settings(db=db, public_url="https://news.example.test")
    service = WebSubService(store, settings)
    caplog.set_level(logging.DEBUG)
    try:
        with sqlite_write_lock(tmp_path / "locked.db"):
            await service.run_forever(stop_on_warning)
    finally:
        await service.aclose()
        store.close()

    shown = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert shown
    for record in shown:
        assert record.exc_info is None, record.getMessage()
        assert "\n" not in record.getMessage()
    assert "database is locked" in shown[0].getMessage()
    assert str(tmp_path / "locked.db") in shown[0].getMessage()

"""A SQLite database another process keeps locked past the busy timeout (an operator's
``sqlite3`` shell left in a transaction, a long job of another program) fails a crawl pass with
one line that names the database, not with tracebacks.

The crawler waits for the lock first (SQLite's busy timeout); when that runs out, `crawl --once`
printed the writer's logged traceback of the refused batch, with SQLAlchemy's ``[parameters:
…]`` wall (every stored field of every entry of the batch), the robots.txt cache's, and one
"Future exception was never retrieved" traceback per other feed of the batch, before its one
line, which said "database is locked" without saying which database. The busy timeout is
shortened for the test on the engine the test opened (the wait itself is SQLite's).
"""

from __future__ import annotations

import gc
import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from sqlalchemy import event

from fairfetch.crawl import Crawler, utcnow
from fairfetch.errors import StoreError
from fairfetch.net.politeness import politeness_key
from fairfetch.store import SqlStore, open_store
from fairfetch.testing import loopback_server

from .conftest import loopback_settings

_FEED = (
    '<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>'
    "<item><guid>a</guid><title>SECRET-ENTRY-TITLE</title></item></channel></rss>"
)


async def _answer(request: web.Request) -> web.Response:
    if request.path == "/robots.txt":
        return web.Response(text="User-agent: *\nAllow: /\n")
    return web.Response(body=_FEED.encode(), content_type="application/rss+xml")


@pytest.fixture
def impatient_store(tmp_path: Path) -> Iterator[SqlStore]:
    store = open_store(f"sqlite:///{tmp_path}/locked.db")

    @event.listens_for(store.engine, "connect")
    def _short_wait(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.execute("PRAGMA busy_timeout=200")

    store.engine.dispose()  # connections made from now on wait 200 ms, not 30 s
    yield store
    store.close()


async def test_a_database_locked_past_the_busy_timeout_is_one_line_naming_it(
    impatient_store: SqlStore, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = impatient_store
    caplog.set_level(logging.DEBUG)
    async with loopback_server(_answer) as port:
        for host in ("a", "b", "c"):
            url = f"http://{host}.test:{port}/feed"
            store.add_feed(url, now=utcnow(), politeness_key=politeness_key(url))
        other = sqlite3.connect(tmp_path / "locked.db", isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process's write lock, held throughout
        try:
            with pytest.raises(StoreError) as raised:
                async with Crawler(store, loopback_settings(store.url)) as crawler:
                    await crawler.crawl_due()
        finally:
            other.execute("ROLLBACK")
            other.close()
    gc.collect()  # futures whose exception nobody read are reported when collected

    message = str(raised.value)
    assert "database is locked" in message
    assert str(tmp_path / "locked.db") in message  # which database
    assert "\n" not in message
    shown = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert shown  # the refusal is reported...
    for record in shown:  # ...each time on one line, with no traceback and no stored data
        assert record.exc_info is None, record.getMessage()
        assert "\n" not in record.getMessage()
        assert "SECRET-ENTRY-TITLE" not in record.getMessage()
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]

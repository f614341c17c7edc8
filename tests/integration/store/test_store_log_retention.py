"""Logs of attempts are kept ``log_retention_days`` (90 by default), then deleted.

Every fetch wrote a ``crawls`` row and every WebSub delivery a ``websub_pings`` row, kept for
ever: the database only grew. ``prune_logs`` deletes the rows dated before a time, in chunks
(one transaction each), and nothing else: the feeds, their entries and the newer rows stay.
``fairfetch prune`` runs it on demand, ``run`` once a day. SQLite and PostgreSQL.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from fairfetch.cli import app
from fairfetch.config import Settings, load_settings
from fairfetch.errors import ConfigError
from fairfetch.feeds.model import Entry
from fairfetch.store import CrawlWrite, SqlStore, open_store, websub_repo
from fairfetch.store.retention import prune_logs
from fairfetch.store.tables import crawls, entries
from fairfetch.store.tables_websub import websub_pings
from fairfetch.web.serve import prune_forever

NOW = datetime.now(UTC).replace(microsecond=0)


def _fill(store: SqlStore) -> int:
    """A feed crawled at 200, 100, 50 and 1 day(s) ago (an entry each time), and pinged too."""
    feed, _ = store.add_feed("http://a.test/feed", now=NOW - timedelta(days=300),
                             politeness_key="a.test")
    for days in (200, 100, 50, 1):
        at = NOW - timedelta(days=days)
        store.write([CrawlWrite(
            feed_id=feed.id, url=feed.url, at=at, outcome="ok", politeness_key="a.test",
            feed_changes={"last_success_at": at},
            entries=[Entry(id=f"e{days}", title=f"day {days}", published=at)],
        )])  # fmt: skip
        websub_repo.record_ping(store, subscription_id=None, feed_id=feed.id,
                                outcome="accepted", http_status=200, now=at)
    return int(feed.id)


def _count(store: SqlStore, table: sa.Table) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(table)).scalar_one())


def test_store_prune_logs_deletes_only_rows_older_than_the_cut(db_url: str) -> None:
    store = open_store(db_url)
    try:
        _fill(store)
        gone = prune_logs(store, NOW - timedelta(days=90), chunk=1)  # one row a transaction
        assert gone == {"crawls": 2, "websub_pings": 2}
        assert _count(store, crawls) == 2
        assert _count(store, websub_pings) == 2
        # the other direction: what is not a log stays, all of it
        assert _count(store, entries) == 4
        assert len(list(store.iter_feeds())) == 1
        assert prune_logs(store, NOW - timedelta(days=90)) == {"crawls": 0, "websub_pings": 0}
    finally:
        store.close()


def test_store_prune_cli_keeps_the_days_asked_for(db_url: str) -> None:
    store = open_store(db_url)
    try:
        _fill(store)
    finally:
        store.close()
    runner = CliRunner()
    r = runner.invoke(app, ["--db", db_url, "prune", "--days", "75", "--json"])
    assert r.exit_code == 0, (r.output, r.exception)
    assert '"crawls": 2' in r.stdout
    r = runner.invoke(app, ["--db", db_url, "prune"])  # the default: 90 days
    assert r.exit_code == 0, (r.output, r.exception)
    assert "0 from crawls" in r.stdout
    store = open_store(db_url)
    try:
        assert _count(store, crawls) == 2
    finally:
        store.close()


def test_store_prune_refuses_without_a_retention(tmp_path: object) -> None:
    r = CliRunner().invoke(
        app, ["--db", f"sqlite:///{tmp_path}/p.db", "prune"],
        env={"FAIRFETCH_LOG_RETENTION_DAYS": ""},
    )
    assert r.exit_code == 2
    assert "--days" in r.stderr


@pytest.mark.parametrize("value", ["0", "-5", "40000"])
def test_store_log_retention_days_out_of_range_is_refused(value: str) -> None:
    with pytest.raises(ConfigError, match="FAIRFETCH_LOG_RETENTION_DAYS"):
        load_settings(environ={"FAIRFETCH_LOG_RETENTION_DAYS": value})


async def test_store_run_prunes_at_start(db_url: str) -> None:
    """``run``'s part prunes once at start, then once a day (``every``) until stopped: with the
    stop already set, it makes its first pass and returns."""
    store = open_store(db_url)
    try:
        _fill(store)
        stop = asyncio.Event()
        stop.set()
        await prune_forever(store, Settings(db=db_url, log_retention_days=10), stop)
        assert _count(store, crawls) == 1
        assert _count(store, websub_pings) == 1
    finally:
        store.close()


def test_store_prune_keeps_each_feeds_last_good_read(db_url: str) -> None:
    """A feed unread for a season keeps its newest ok row, however old (the notifier dates an
    outage's items from it); its older rows and its failures go."""
    store = open_store(db_url)
    try:
        feed, _ = store.add_feed("http://b.test/feed", now=NOW - timedelta(days=400),
                                 politeness_key="b.test")
        for days, outcome in ((300, "ok"), (200, "ok"), (150, "error")):
            at = NOW - timedelta(days=days)
            store.write([CrawlWrite(
                feed_id=feed.id, url=feed.url, at=at, outcome=outcome, politeness_key="b.test",
                feed_changes={},
            )])  # fmt: skip
        assert prune_logs(store, NOW - timedelta(days=90), chunk=1)["crawls"] == 2
        with store.engine.connect() as conn:
            left = conn.execute(sa.select(crawls.c.at, crawls.c.outcome)).all()
        assert [(o, (NOW - a).days) for a, o in left] == [("ok", 200)]
    finally:
        store.close()

"""A PostgreSQL server whose TimeZone is not UTC (initdb takes the machine's zone: a server
in New York or Tokyo) hands every timestamptz back in that zone. Python's datetime stops at
years 1 and 9999, so an instant near either end, stored fine, could not be read back there:
Go's zero time ``0001-01-01T00:00:00Z`` (Hugo and other Go generators ship it as an entry
date) is 31 December of year 0 in New York. It lands in ``feeds.newest_entry_at``, and every
read of that feed's row — ``feeds show``, the web, the crawler's stream of due feeds —
failed with psycopg's "timestamp too small". The store must read back what it stored,
whatever the server's zone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from fairfetch.feeds.model import Entry
from fairfetch.store import CrawlWrite, open_store

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("zone", "edge"),
    [
        ("America/New_York", datetime(1, 1, 1, tzinfo=UTC)),  # Go's zero time
        ("Asia/Tokyo", datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)),
    ],
)
def test_store_pg_server_zone_does_not_make_edge_dates_unreadable(
    pg_url: str, zone: str, edge: datetime
) -> None:
    admin = sa.create_engine(pg_url, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    try:
        with admin.connect() as conn:
            name = conn.exec_driver_sql("SELECT current_database()").scalar()
            conn.exec_driver_sql(f"ALTER DATABASE \"{name}\" SET timezone = '{zone}'")
        with admin.connect() as conn:  # a new session is in the server's zone
            assert conn.exec_driver_sql("SHOW TimeZone").scalar() == zone
    finally:
        admin.dispose()
    store = open_store(pg_url)
    try:
        feed, _ = store.add_feed("https://go.example/index.xml", now=NOW,
                                 politeness_key="go.example")
        store.write([CrawlWrite(
            feed_id=feed.id, url=feed.url, at=NOW, outcome="ok", politeness_key="go.example",
            feed_changes={"status": "ok", "next_crawl_at": NOW - timedelta(minutes=1)},
            entries=[Entry(id="post-1", title="Hello", published=edge, updated=edge)],
        )])
        again = store.get_feed(feed.id)
        assert again.newest_entry_at == edge
        assert again.added_at == NOW
        [row] = store.entries_of(feed.id)
        assert (row["published"], row["updated"]) == (edge, edge)
        # The crawler's stream of due feeds reads the row too.
        due = list(store.iter_due(NOW, dead_probe_interval=30 * 86400))
        assert [f.id for f in due] == [feed.id]
    finally:
        store.close()

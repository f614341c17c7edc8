"""recheck_due, a pass's second look at the feeds it read as due, once it holds their keys: an
untouched row comes back as read (no second read of every row), a row another process crawled
meanwhile comes back as it is now — still due or not — and a removed row not at all. On both
databases."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from fairfetch.store import CrawlWrite, SqlStore, open_store

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
MONTH = 30 * 86400.0


@pytest.fixture
def store(db_url: str) -> Iterator[SqlStore]:
    s = open_store(db_url)
    yield s
    s.close()


def _crawled(store: SqlStore, feed_id: int, url: str, *, next_at: datetime, errors: int) -> None:
    store.write([CrawlWrite(
        feed_id=feed_id, url=url, at=NOW, outcome="error", politeness_key="k",
        feed_changes={"next_crawl_at": next_at, "error_count": errors},
    )])  # fmt: skip


def test_recheck_due_rereads_only_what_changed(store: SqlStore) -> None:
    urls = [f"http://f{i}.test/feed" for i in range(4)]
    for u in urls:
        store.add_feed(u, now=NOW - timedelta(hours=1), politeness_key="k")
    read = [store.get_feed(u) for u in urls]
    untouched, later, still_due, removed = read
    # Meanwhile another process: crawls one (due again in an hour), crawls one that stays due
    # (a failure it retries at once), and removes one.
    _crawled(store, later.id, later.url, next_at=NOW + timedelta(hours=1), errors=1)
    _crawled(store, still_due.id, still_due.url, next_at=NOW - timedelta(minutes=1), errors=3)
    store.delete_feed(removed.url)
    due, alive = store.recheck_due(read, NOW, dead_probe_interval=MONTH)
    assert alive == {untouched.id, later.id, still_due.id}
    assert set(due) == {untouched.id, still_due.id}
    assert due[untouched.id] is untouched  # as read: not read again
    assert due[still_due.id].error_count == 3  # as it is now

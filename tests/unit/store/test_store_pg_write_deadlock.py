"""Two crawl batches on PostgreSQL that share feeds, written at once: `feeds refresh --all`
(it takes no claim, see docs/operations.md) beside a pass of `run`. Each batch used to lock its
feeds' rows as it updated them, in its own order; two batches holding one feed each and
wanting the other's deadlocked, and PostgreSQL broke the cycle by failing one of them: every
result in that batch lost, and the pass that wrote it failed. A batch now locks its feeds'
rows before its first read, in id order (store/batch_write._lock_feeds), so the second waits
for the first; a batch failed on a deadlock all the same is still written again.

The contention is made certain: the first batch, holding A's row, goes on only once the
second is waiting on a row lock (seen in pg_stat_activity, polled)."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

from fairfetch.feeds.model import Entry
from fairfetch.store import CrawlWrite, open_store

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
_HANG = 60  # a guard against a hung test, not a timed assertion


def _result(feed: Any, at: datetime, changes: dict[str, Any], entry: str) -> CrawlWrite:
    return CrawlWrite(feed_id=feed.id, url=feed.url, at=at, outcome="ok",
                      politeness_key=feed.politeness_key,
                      feed_changes={"status": "ok", **changes},
                      entries=[Entry(id=entry, title=entry)])


def test_store_pg_batches_sharing_feeds_written_at_once_both_land(pg_url: str) -> None:
    setup = open_store(pg_url)
    a, _ = setup.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
    b, _ = setup.add_feed("https://b.example/feed", now=NOW, politeness_key="b.example")
    setup.close()
    first, second = open_store(pg_url), open_store(pg_url)  # two processes' engines
    first_holds_a, second_about_to_want_a = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def updates(fid: int, params: Any) -> bool:
        rows = params if isinstance(params, list | tuple) else [params]
        return any(isinstance(r, dict) and r.get("_fid") == fid for r in rows)

    @event.listens_for(first.engine, "after_cursor_execute")
    def _first(_c: Any, _cur: Any, statement: str, params: Any, *_a: Any) -> None:
        if statement.startswith("UPDATE feeds") and updates(a.id, params) \
                and not first_holds_a.is_set():
            first_holds_a.set()  # A's row is locked: wait until the other waits on a row
            assert second_about_to_want_a.wait(_HANG)

    def second_waits_on_a_lock() -> None:
        deadline = time.monotonic() + _HANG
        with watcher.engine.connect() as conn:
            while time.monotonic() < deadline:
                waiting = conn.execute(sa.text(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                    "AND datname = current_database()")).scalar_one()
                if waiting:
                    second_about_to_want_a.set()
                    return
                time.sleep(0.005)  # polling a condition, not waiting for one to happen

    # Feed updates are grouped by the columns they set: A's group first in the first batch,
    # B's first in the second.
    t1 = NOW + timedelta(minutes=1)
    batch1 = [_result(a, t1, {"title": "A by refresh"}, "a-1"),
              _result(b, t1, {"etag": '"b1"'}, "b-1")]
    t2 = NOW + timedelta(minutes=2)
    batch2 = [_result(b, t2, {"title": "B by pass"}, "b-2"),
              _result(a, t2, {"etag": '"a2"'}, "a-2")]

    def run_first() -> None:
        try:
            first.write(batch1)
        except BaseException as exc:
            errors.append(exc)
            second_about_to_want_a.set()

    def run_second() -> None:
        try:
            assert first_holds_a.wait(_HANG)
            second.write(batch2)
        except BaseException as exc:
            errors.append(exc)
            second_about_to_want_a.set()

    watcher = open_store(pg_url)
    threads = [threading.Thread(target=run_first), threading.Thread(target=run_second),
               threading.Thread(target=second_waits_on_a_lock)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(_HANG)
        assert not any(t.is_alive() for t in threads)
        assert errors == []
        check = open_store(pg_url)
        try:
            # Every result of both batches is stored: both crawls of each feed, every entry.
            for feed in (a, b):
                assert check.count_entries(feed.id) == 2
                assert len(check.feed_details(feed.id)["crawls"]) == 2
        finally:
            check.close()
    finally:
        first_holds_a.set()
        second_about_to_want_a.set()
        first.close()
        second.close()
        watcher.close()

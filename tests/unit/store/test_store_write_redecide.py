"""A crawl result decided on an older row of its feed (another process wrote the feed while the
request was out) is decided again on the row the store holds when it writes, in the write's
transaction; one decided on the row as it is, or one that touches no health column (a
throttle), is written as decided. store/batch_write._rebased, crawl/redecide.py."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from fairfetch.crawl.fetch_reading import feed_state
from fairfetch.crawl.health import HealthPolicy, Outcome, decide
from fairfetch.crawl.redecide import Redecision
from fairfetch.store import CrawlWrite, FeedRecord, open_store

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
POLICY = HealthPolicy()
DOWN = Outcome("error", error_kind="http", http_status=500)
UP = Outcome("ok", http_status=200)


class Counting:
    """A Redecision that counts the rows it was asked about."""

    def __init__(self, inner: Redecision) -> None:
        self.inner = inner
        self.asked: list[FeedRecord] = []

    def changes(self, feed: FeedRecord) -> Mapping[str, Any]:
        self.asked.append(feed)
        return self.inner.changes(feed)


def _result(feed: FeedRecord, outcome: Outcome, at: datetime) -> tuple[CrawlWrite, Counting]:
    """What a crawler decides on ``feed`` as it read it."""
    decision = decide(feed_state(feed), outcome, at, POLICY)
    again = Counting(Redecision(outcome, at, POLICY))
    return CrawlWrite(
        feed_id=feed.id, url=feed.url, at=at, outcome=decision.outcome,
        politeness_key=feed.politeness_key, feed_changes=decision.changes,
        http_status=outcome.http_status, error_kind=outcome.error_kind,
        read_crawl_count=feed.crawl_count, redecide=again,
    ), again


def test_two_failures_decided_on_one_row_count_two(db_url: str) -> None:
    store = open_store(db_url)
    try:
        feed, _ = store.add_feed("https://down.test/feed", now=NOW, politeness_key="down.test")
        refresh, asked_refresh = _result(feed, DOWN, NOW + timedelta(minutes=1))
        passing, asked_pass = _result(feed, DOWN, NOW + timedelta(minutes=2))
        store.write([refresh])  # another process's, first
        store.write([passing])  # decided on the row before it
        after = store.get_feed(feed.id)
        assert (after.error_count, after.crawl_count) == (2, 2)
        assert asked_refresh.asked == []  # decided on the row as it was: written as decided
        assert [f.error_count for f in asked_pass.asked] == [1]
    finally:
        store.close()


def test_a_failure_decided_before_another_process_success_does_not_kill_the_feed(
    db_url: str,
) -> None:
    """Nine failures, then a success written by another process, then a failure decided on
    the ninth failure's row: the tenth failure of that row is death, of the row as it is the
    first after a success."""
    store = open_store(db_url)
    try:
        feed, _ = store.add_feed("https://flaky.test/feed", now=NOW, politeness_key="flaky.test")
        at = NOW
        for _ in range(POLICY.dead_after - 1):
            at += timedelta(hours=1)
            store.write([_result(store.get_feed(feed.id), DOWN, at)[0]])
        ninth = store.get_feed(feed.id)
        assert (ninth.status, ninth.error_count) == ("error", POLICY.dead_after - 1)
        success, _ = _result(ninth, UP, at + timedelta(minutes=1))
        stale_failure, asked = _result(ninth, DOWN, at + timedelta(minutes=2))
        assert stale_failure.feed_changes["status"] == "dead"  # as decided on the old row
        store.write([success])
        store.write([stale_failure])
        after = store.get_feed(feed.id)
        assert (after.status, after.error_count) == ("error", 1)
        assert after.next_crawl_at is not None
        assert len(asked.asked) == 1
    finally:
        store.close()


def test_a_throttle_on_an_older_row_is_written_as_decided(db_url: str) -> None:
    store = open_store(db_url)
    try:
        feed, _ = store.add_feed("https://busy.test/feed", now=NOW, politeness_key="busy.test")
        throttle, asked = _result(
            feed, Outcome("throttled", http_status=429, retry_after=600),
            NOW + timedelta(minutes=2),
        )
        store.write([_result(feed, DOWN, NOW + timedelta(minutes=1))[0]])
        before = store.get_feed(feed.id)
        store.write([throttle])
        after = store.get_feed(feed.id)
        assert asked.asked == []
        assert after.next_crawl_at == NOW + timedelta(minutes=2, seconds=600)
        # Nothing else of the row moved: not the count another process wrote, nor its own.
        assert (after.error_count, after.crawl_count, after.status, after.last_fetched_at) \
            == (before.error_count, before.crawl_count, before.status, before.last_fetched_at)
    finally:
        store.close()


def test_one_batch_holding_two_results_of_a_feed_decided_on_one_row_counts_both(
    db_url: str,
) -> None:
    """A batch splits a feed's second result into a sub-batch written after the first: the
    count the store compares with moves with it."""
    store = open_store(db_url)
    try:
        feed, _ = store.add_feed("https://twice.test/feed", now=NOW, politeness_key="twice.test")
        first, _ = _result(feed, DOWN, NOW + timedelta(minutes=1))
        second, asked = _result(feed, DOWN, NOW + timedelta(minutes=2))
        store.write([first, second])
        after = store.get_feed(feed.id)
        assert (after.error_count, after.crawl_count) == (2, 2)
        assert len(asked.asked) == 1
    finally:
        store.close()

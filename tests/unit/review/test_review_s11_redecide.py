"""Review of a907a67 (a result decided on an older row of its feed is decided again at write
time): what else of the write was decided on that older row.

``first_crawl`` (the backlog of a feed's first successful read notifies nobody) is decided by
the crawler on the row it read. When another process's success was written in between (a
WebSub re-fetch beside a pass, `feeds refresh` beside cron), that backlog is already stored:
an entry only the later read found is news, and it must reach the hooks (the notification
outbox) as such, as it would on any later crawl of the feed."""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from fairfetch.config import Settings
from fairfetch.crawl.fetch_reading import feed_state
from fairfetch.crawl.health import HealthPolicy, Outcome, decide
from fairfetch.crawl.redecide import Redecision, feed_changes
from fairfetch.feeds.model import Entry
from fairfetch.store import CrawlWrite, FeedRecord, open_store
from fairfetch.store.hooks import register_new_entries_hook, unregister_new_entries_hook

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
POLICY = HealthPolicy()
UP = Outcome("ok", http_status=200)


def _success(feed: FeedRecord, at: datetime, entries: list[Entry]) -> CrawlWrite:
    """A success as the crawl loop decides it on ``feed`` as read (crawl/loop.py _complete)."""
    decision = decide(feed_state(feed), UP, at, POLICY)
    return CrawlWrite(
        feed_id=feed.id, url=feed.url, at=at, outcome=decision.outcome,
        politeness_key=feed.politeness_key,
        feed_changes=feed_changes(feed, decision, {}, None), http_status=200,
        entries=entries,
        first_crawl=feed.last_success_at is None and feed.entry_count == 0,
        read_crawl_count=feed.crawl_count, redecide=Redecision(UP, at, POLICY),
    )


@pytest.fixture
def told() -> Iterator[list[tuple[int, int, bool]]]:
    """What the new-entries hooks were told: (feed id, new entries, first crawl)."""
    seen: list[tuple[int, int, bool]] = []

    def spy(_conn: sa.Connection, feed_id: int, ids: Sequence[int], _now: datetime,
            first_crawl: bool, _settings: Settings | None) -> None:
        seen.append((feed_id, len(ids), first_crawl))

    register_new_entries_hook(spy)
    try:
        yield seen
    finally:
        unregister_new_entries_hook(spy)


def test_review_s11_an_entry_first_found_by_a_stale_first_read_is_news(
    db_url: str, told: list[tuple[int, int, bool]]
) -> None:
    store = open_store(db_url)
    try:
        feed, _ = store.add_feed("https://new.test/feed", now=NOW, politeness_key="new.test")
        one, two = Entry(id="1", title="one"), Entry(id="2", title="two")
        # Both read the feed's row before either wrote: both are its first read.
        other = _success(feed, NOW + timedelta(minutes=1), [one])
        ours = _success(feed, NOW + timedelta(minutes=2), [one, two])
        assert other.first_crawl
        assert ours.first_crawl
        store.write([other])  # the backlog: nobody is told
        store.write([ours])  # "two" was published in between: news
        assert told == [(feed.id, 1, True), (feed.id, 1, False)]
        assert store.get_feed(feed.id).crawl_count == 2
    finally:
        store.close()


def test_review_s11_a_first_read_after_another_process_failure_is_still_the_backlog(
    db_url: str, told: list[tuple[int, int, bool]]
) -> None:
    """The negative: another process's failure moves the count but stores no backlog, so the
    first successful read's entries still notify nobody."""
    store = open_store(db_url)
    try:
        feed, _ = store.add_feed("https://late.test/feed", now=NOW, politeness_key="late.test")
        down = Outcome("error", error_kind="http", http_status=500)
        decision = decide(feed_state(feed), down, NOW, POLICY)
        store.write([CrawlWrite(
            feed_id=feed.id, url=feed.url, at=NOW, outcome="error",
            politeness_key=feed.politeness_key, feed_changes=decision.changes,
            http_status=500, error_kind="http", read_crawl_count=feed.crawl_count,
            redecide=Redecision(down, NOW, POLICY),
        )])
        store.write([_success(feed, NOW + timedelta(minutes=1), [Entry(id="1")])])
        assert told == [(feed.id, 1, True)]
    finally:
        store.close()


def test_review_s11_a_write_with_its_redecision_survives_the_trip_to_the_writer_process(
) -> None:
    """crawl/workers.py write_in_child receives the batch pickled: the Redecision must decide
    the same columns on the other side."""
    feed = FeedRecord(id=7, url="https://trip.test/feed", original_url="https://trip.test/feed",
                      politeness_key="trip.test", status="error", error_count=3, added_at=NOW)
    ok = Outcome("ok", http_status=200, entry_times=(NOW - timedelta(days=1), NOW))
    write = _success(feed, NOW, [Entry(id="1")])
    write = dataclasses.replace(write, redecide=Redecision(ok, NOW, POLICY, {"title": "t"}, None))
    back = pickle.loads(pickle.dumps(write))
    assert back.redecide is not None
    assert write.redecide is not None
    assert back.redecide.changes(feed) == write.redecide.changes(feed)
    assert back.redecide.changes(feed)["title"] == "t"

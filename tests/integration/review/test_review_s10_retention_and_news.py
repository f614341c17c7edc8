"""Review of 16da4e4 (store/retention.py: ``run`` prunes ``crawls`` rows older than
log_retention_days, 90 by default, at start and daily).

The notifier's republish guard (store/notify_outbox.py ``_news_entries``) takes the feed's
previous successful read from ``crawls`` (``max(crawls.at)`` of its ok/not_modified rows): an
item published while we could not read the feed, our outage, is news however long ago that was,
its age counted from that read (DESIGN.md: notifications are delayed, never dropped). After
more than 90 days without a read (a server switched off for a season, then ``run`` again: its
first act is the prune), that row is gone, ``last_read`` is None, the age limit (14 days)
counts from now, and every item published during the outage but the last fortnight's is
silently not mailed. With the rows kept (no prune) the same read mails them all. The
retention of a log thereby decides what readers get; ``feeds.last_success_at`` (the row as it
was before this read) would not be pruned. Fixed: the prune keeps each feed's last good read.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fairfetch.config import Settings
from fairfetch.feeds.model import Entry
from fairfetch.store import CrawlWrite, SqlStore, open_store
from fairfetch.store import notify_repo as repo
from fairfetch.store.retention import prune_logs

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
URL = "https://a.example.test/feed"


def _write(store: SqlStore, feed_id: int, entries: list[Entry], at: datetime,
           *, first: bool = False) -> None:
    store.write([CrawlWrite(
        feed_id=feed_id, url=URL, at=at, outcome="ok", politeness_key="k",
        feed_changes={"status": "ok", "last_success_at": at}, entries=entries, first_crawl=first,
    )], Settings(db=store.url))  # fmt: skip


def _entry(n: int, published: datetime) -> Entry:
    return Entry(id=f"urn:test:{n}", title=f"item {n}", link=f"https://a.example.test/{n}",
                 published=published)


def test_review_s10_items_of_a_long_outage_are_news_after_the_prune(db_url: str) -> None:
    store = open_store(db_url)
    try:
        feed, _ = store.add_feed(URL, now=T0 - timedelta(days=2), politeness_key="k")
        _write(store, feed.id, [_entry(0, T0 - timedelta(days=3))], T0 - timedelta(days=1),
               first=True)  # the backlog: nobody notified
        res = repo.subscribe(store, "ana@example.test", feed.id, mode="realtime", hour=8,
                             weekday=0, tz="UTC", only=(), exclude=(), now=T0)
        repo.confirm(store, res.subscription["confirm_token"], T0)
        before = T0 + timedelta(hours=1)
        _write(store, feed.id, [_entry(1, before - timedelta(hours=1))], before)
        back = before + timedelta(days=100)  # our server was off; `run` starts again
        prune_logs(store, back - timedelta(days=90))  # what run does first, by default
        _write(store, feed.id, [_entry(10 + d, before + timedelta(days=d))
                                for d in range(1, 100, 7)], back)
        items = [r for r in repo.list_outbox(store, limit=10_000) if r["kind"] == "item"]
    finally:
        store.close()
    assert len(items) == 1 + len(range(1, 100, 7))  # 'item 1' and every item of the outage

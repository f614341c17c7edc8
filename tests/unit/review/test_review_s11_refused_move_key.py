"""Review of a907a67's crawl/redecide.py ``feed_changes`` with the store's move guard
(store/batch_write.py ``_moves``).

A confirmed move writes the new URL and, with it, the new URL's politeness key. The store
refuses a move onto a URL another feed has (a race the loop's duplicate check did not see,
or a move decided again on a newer row, which that check never saw) or one too long for the
unique index (the publisher's server names it: refused on every pass). The feed then stays
where it is, and it must keep its key: it was written the target's, so the feed was fetched at
its old host on another domain's budget (and left its own domain's)."""

from __future__ import annotations

from datetime import UTC, datetime

from fairfetch.crawl.fetch_reading import feed_state
from fairfetch.crawl.health import HealthPolicy, Outcome, decide
from fairfetch.crawl.redecide import feed_changes
from fairfetch.store import CrawlWrite, FeedRecord, open_store

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
POLICY = HealthPolicy()
LONG = "https://elsewhere.example/" + "x" * 5000


def _moving(feed: FeedRecord, target: str) -> CrawlWrite:
    outcome = Outcome("ok", http_status=200, new_feed_url=target)
    decision = decide(feed_state(feed), outcome, NOW, POLICY)
    changes = feed_changes(feed, decision, {}, None)
    assert changes["url"] == target
    return CrawlWrite(feed_id=feed.id, url=feed.url, at=NOW, outcome="ok",
                      politeness_key=feed.politeness_key, feed_changes=changes,
                      http_status=200)


def test_review_s11_a_refused_move_leaves_the_feeds_key_as_it_was(db_url: str) -> None:
    store = open_store(db_url)
    try:
        feed, _ = store.add_feed("https://blog.example/feed", now=NOW,
                                 politeness_key="blog.example")
        taken, _ = store.add_feed("https://other.example/feed", now=NOW,
                                  politeness_key="other.example")
        for target in (taken.url, LONG):
            [result] = store.write([_moving(store.get_feed(feed.id), target)])
            assert result.moved_to is None
            after = store.get_feed(feed.id)
            assert after.url == "https://blog.example/feed"
            assert after.politeness_key == "blog.example"
        # The move that is made still takes its URL's key.
        [moved] = store.write([_moving(store.get_feed(feed.id), "https://new.example/feed")])
        assert moved.moved_to == "https://new.example/feed"
        assert store.get_feed(feed.id).politeness_key == "new.example"
    finally:
        store.close()

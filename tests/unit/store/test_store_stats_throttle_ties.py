"""``fairfetch stats`` and /crawlstats name the same twenty keys that pushed back most. The
web breaks a tie by the key's name; the store's query broke none, so past twenty keys with
as many throttles each the command listed whichever the database's grouping gave first (on
PostgreSQL, a hash's order) and could disagree with the web page about the same crawls."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fairfetch.store import CrawlWrite, open_store

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_store_stats_throttles_by_key_break_ties_by_name(db_url: str) -> None:
    store = open_store(db_url)
    try:
        feed, _ = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
        # 30 keys throttled once each, written in an order that is neither by name nor reverse;
        # one key twice: it comes first.
        keys = [f"k{(i * 7) % 30:02d}.example" for i in range(30)] + ["z-most.example"] * 2
        store.write([CrawlWrite(feed_id=feed.id, url=feed.url,
                                at=NOW - timedelta(minutes=1), outcome="throttled",
                                politeness_key=k, http_status=429, feed_changes={})
                     for k in keys])
        stats = store.stats(NOW, dead_probe_interval=30 * 86400)
        listed = [(r["key"], r["throttles"]) for r in stats["throttles_by_key"]]
        assert listed == [("z-most.example", 2)] + [(f"k{i:02d}.example", 1) for i in range(19)]
    finally:
        store.close()

"""Ids of the rows written on every crawl outlive 32 bits on PostgreSQL.

SQLite's row ids are 64-bit; PostgreSQL's ``serial`` is a 32-bit INTEGER with a sequence that
stops at 2,147,483,647. A crawl row is written per attempt, and a feed's hops, contacts and
authors are replaced (deleted and inserted again) on each crawl that carries them, and nothing
is ever purged: a directory of 100,000 feeds read every half hour spends 4.8 million crawl ids
a day, so in about fifteen months every crawl write failed ("nextval: reached maximum value of
sequence") and the crawler stopped recording anything. The per-crawl tables get 64-bit ids."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from fairfetch.feeds.model import Contact, Entry, Person
from fairfetch.net.outcome import Hop
from fairfetch.store import CrawlWrite, open_store

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

#: The tables whose ids are spent by every crawl (or WebSub push), not by every new item.
PER_CRAWL = ["crawls", "redirects", "feed_links", "authors", "author_links", "websub_pings",
             "websub_deliveries"]


@pytest.mark.parametrize("table", PER_CRAWL)
def test_store_pg_per_crawl_ids_go_past_32_bits(pg_url: str, table: str) -> None:
    store = open_store(pg_url)
    try:
        feed, _ = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
        with store.engine.begin() as conn:  # as after 2**31 crawls
            conn.execute(sa.text("SELECT setval(pg_get_serial_sequence(:t, 'id'), :v)"),
                         {"t": table, "v": 2**31 - 1})
        if table.startswith("websub_"):
            from fairfetch.store import websub_repo

            sub = websub_repo.create_subscription(
                store, feed_id=feed.id, hub_url="https://hub.example/", topic_url=feed.url,
                secret="s", requested_lease=86400, now=NOW)
            websub_repo.enqueue_delivery(store, sub, b"<rss/>", "application/rss+xml", NOW,
                                         ping_detail="queued")
        else:
            for i in range(2):  # the second crawl replaces what the first wrote
                store.write([CrawlWrite(
                    feed_id=feed.id, url=feed.url, at=NOW + timedelta(minutes=i), outcome="ok",
                    politeness_key="a.example", http_status=200,
                    feed_changes={"status": "ok"},
                    entries=[Entry(id="e1", title="one")],
                    hops=[Hop(url="http://a.example/feed", status=301,
                              location="https://a.example/feed")],
                    authors=[(Person("Ada", "ada@a.example", "https://ada.example/"),
                              "atom:author")],
                    contacts=[Contact("https://mastodon.example/@ada", "mastodon",
                                      "atom:author")],
                )])
            details = store.feed_details(feed.id)
            assert len(details["crawls"]) == 2
            assert len(details["redirects"]) == 1
            assert len(details["contacts"]) == 1
            assert len(details["authors"]) == 1
        with store.engine.connect() as conn:
            assert conn.execute(sa.text(f"SELECT max(id) FROM {table}")).scalar() > 2**31 - 1
    finally:
        store.close()

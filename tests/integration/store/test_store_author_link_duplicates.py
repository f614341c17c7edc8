"""An author whose profile link is their own mailbox (Atom ``<email>a@b</email>`` with
``<uri>mailto:a@b</uri>``, as some generators write it) gets one mailbox link, and the feeds
written in the same batch are written: the second copy of the link broke the unique
(author, url) index and failed the whole batch's transaction (every feed in it unwritten, and
again on every later batch that feed was in)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from fairfetch.feeds import parse_feed
from fairfetch.store import CrawlWrite, SqlStore, open_store
from fairfetch.store.tables import author_links, authors

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

MAILBOX_AS_PROFILE = b"""<?xml version="1.0"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>Ada's notes</title><id>urn:x</id>
<author><name>Ada Lovelace</name><email>ada@a.example</email>
<uri>mailto:ada@a.example</uri></author>
<entry><id>urn:x:1</id><title>Engines</title></entry></feed>"""

PLAIN = b"""<?xml version="1.0"?>
<rss version="2.0"><channel><title>Bee</title><item><guid>b1</guid><title>Hi</title></item>
</channel></rss>"""


def _crawl(store: SqlStore, url: str, body: bytes) -> CrawlWrite:
    feed, _ = store.add_feed(url, now=NOW, politeness_key=url.split("/")[2])
    parsed = parse_feed(body, url=url)
    return CrawlWrite(
        feed_id=feed.id, url=url, at=NOW, outcome="ok", politeness_key=feed.politeness_key,
        http_status=200,
        feed_changes={"status": "ok", "error_count": 0, "last_success_at": NOW,
                      "last_fetched_at": NOW, "next_crawl_at": NOW + timedelta(hours=1)},
        entries=parsed.entries,
        authors=[(p, "author") for p in parsed.authors],
        contacts=parsed.contacts,
        first_crawl=True,
    )


def test_store_author_whose_profile_is_their_mailbox_keeps_the_batch_written(
    db_url: str,
) -> None:
    store = open_store(db_url)
    try:
        ada = _crawl(store, "https://a.example/feed", MAILBOX_AS_PROFILE)
        bee = _crawl(store, "https://b.example/rss", PLAIN)
        assert [p.url for p, _ in ada.authors or ()] == ["mailto:ada@a.example"]  # the input

        results = store.write([ada, bee])

        assert [r.new_entries for r in results] == [1, 1]
        assert store.count_entries(ada.feed_id) == 1
        assert store.count_entries(bee.feed_id) == 1
        with store.engine.connect() as conn:
            links = conn.execute(
                sa.select(author_links.c.url, author_links.c.network)
                .join(authors, authors.c.id == author_links.c.author_id)
                .where(authors.c.feed_id == ada.feed_id)
            ).all()
        assert [tuple(r) for r in links] == [("mailto:ada@a.example", "email")]
        people = store.feed_details(ada.feed_id)["authors"]
        assert [(p["name"], p["email"]) for p in people] == [("Ada Lovelace", "ada@a.example")]
    finally:
        store.close()

"""A digest lists each feed's items in one order on both backends. It was ordered by the
entries' publication date, and an undated entry (news, see docs/notify.md) sorts first on
SQLite and last on PostgreSQL: which items of a digest past its size budget keep their body
(the first ones) depended on the database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from fairfetch.feeds.model import Entry
from fairfetch.store import CrawlWrite, open_store
from fairfetch.store import notify_subscriptions as subs
from fairfetch.store.notify_delivery import digest_context
from fairfetch.store.tables_notify import notify_outbox

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_store_digest_items_of_a_feed_keep_one_order_on_both_backends(db_url: str) -> None:
    store = open_store(db_url)
    try:
        feed, _ = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
        sub = subs.subscribe(store, "reader@r.example", feed.id, mode="daily", hour=7,
                             weekday=0, tz="UTC", only=[], exclude=[], now=NOW)
        subs.confirm(store, sub.subscription["confirm_token"], NOW)
        store.write([CrawlWrite(
            feed_id=feed.id, url=feed.url, at=NOW, outcome="ok", politeness_key="a.example",
            feed_changes={"status": "ok"},
            entries=[Entry(id="dated-old", title="Older", published=NOW - timedelta(hours=2)),
                     Entry(id="undated", title="Undated"),
                     Entry(id="dated-new", title="Newer", published=NOW - timedelta(hours=1))],
        )])
        with store.engine.connect() as conn:
            [box] = conn.execute(sa.select(notify_outbox.c.id)
                                 .where(notify_outbox.c.kind == "digest")).scalars().all()
        context = digest_context(store, box)
        assert context is not None
        # Undated first, as SQLite always listed them, then oldest to newest.
        assert [i["title"] for i in context["items"]] == ["Undated", "Older", "Newer"]
    finally:
        store.close()

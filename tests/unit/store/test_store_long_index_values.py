"""A value too long for an index must not fail the batch it is written in.

PostgreSQL refuses a btree index row over 2,704 bytes (a third of a page). A feed's title,
an entry's guid, an author's name or a contact's URL is whatever the publisher wrote, and
each sits in an index (the listing's ``lower(title)``, the entry's identity, the author's and
the link's unique keys): one feed shipping a 5,000-character guid failed the whole batch's
transaction, every other feed's result with it, on every pass, since the feed stayed due.
SQLite took the same values, so the suite on SQLite alone never saw it.
"""

from __future__ import annotations

import random
import string
from datetime import UTC, datetime, timedelta

from fairfetch.feeds.model import Contact, Entry, Person
from fairfetch.store import CrawlWrite, SqlStore, open_store, websub_repo

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _noise(n: int, seed: int) -> str:
    """Text that does not compress (PostgreSQL compresses an index row before refusing it)."""
    rnd = random.Random(seed)
    return "".join(rnd.choice(string.ascii_letters + string.digits + "é日") for _ in range(n))


LONG_TITLE = _noise(6000, 1)
LONG_GUID = "urn:x:" + _noise(5000, 2)
#: Two guids that differ only past any cut: still two entries.
TWIN_GUID = LONG_GUID[:-1] + ("A" if LONG_GUID[-1] != "A" else "B")
LONG_NAME = _noise(3000, 3)
LONG_URL = "https://hostile.example/" + _noise(4000, 4)


def _results(store: SqlStore, hostile: int, plain: int, at: datetime) -> list[CrawlWrite]:
    return [
        CrawlWrite(
            feed_id=hostile, url="https://hostile.example/feed", at=at, outcome="ok",
            politeness_key="hostile.example",
            feed_changes={"status": "ok", "title": LONG_TITLE,
                          "next_crawl_at": at + timedelta(hours=1)},
            entries=[Entry(id=LONG_GUID, title="one", link=LONG_URL),
                     Entry(id=TWIN_GUID, title="two")],
            authors=[(Person(LONG_NAME, LONG_NAME + "@hostile.example", LONG_URL),
                      "atom:author")],
            contacts=[Contact(LONG_URL, "web", "atom:author")],
        ),
        CrawlWrite(
            feed_id=plain, url="https://plain.example/feed", at=at, outcome="ok",
            politeness_key="plain.example",
            feed_changes={"status": "ok", "title": "Plain",
                          "next_crawl_at": at + timedelta(hours=1)},
            entries=[Entry(id="p1", title="plain one")],
        ),
    ]


def test_store_long_values_in_indexed_columns_fail_no_batch(db_url: str) -> None:
    store = open_store(db_url)
    try:
        hostile, _ = store.add_feed("https://hostile.example/feed", now=NOW,
                                    politeness_key="hostile.example")
        plain, _ = store.add_feed("https://plain.example/feed", now=NOW,
                                  politeness_key="plain.example")
        first = store.write(_results(store, hostile.id, plain.id, NOW))
        assert [r.new_entries for r in first] == [2, 1]
        assert store.get_feed(plain.id).title == "Plain"
        stored = store.get_feed(hostile.id)
        assert stored.title is not None
        assert stored.title[:100] == LONG_TITLE[:100]  # what a reader sees first is kept
        assert len(stored.title.encode()) < 2704
        details = store.feed_details(hostile.id)
        assert len(details["authors"]) == 1
        assert details["authors"][0]["name"][:100] == LONG_NAME[:100]
        assert len(details["contacts"]) == 1

        # The next crawl finds the same two entries: updated, not stored (or mailed) again.
        again = store.write(_results(store, hostile.id, plain.id, NOW + timedelta(hours=1)))
        assert [r.new_entries for r in again] == [0, 0]
        assert store.count_entries(hostile.id) == 2
        # A WebSub ping asks which of its entries are stored, by the ids the feed gives.
        assert websub_repo.stored_entry_ids(store, hostile.id, [LONG_GUID, TWIN_GUID, "new"]) \
            == {LONG_GUID, TWIN_GUID}
    finally:
        store.close()


def test_store_long_entry_id_stored_whole_before_is_found_after_the_upgrade(
    db_url: str,
) -> None:
    """An id stored whole by an earlier fairfetch (SQLite took any length, PostgreSQL up to
    about 2,700 bytes) is found again under the new rule: not a second entry, not a second
    mail."""
    import sqlalchemy as sa
    from alembic import command

    from fairfetch.store.engine import create_engine
    from fairfetch.store.migrate import _config
    from fairfetch.store.tables import entries

    long_id = "urn:x:" + _noise(2400, 5).replace("é", "e").replace("日", "j")  # 2,406 bytes
    store = open_store(db_url)
    feed, _ = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
    store.close()
    engine = create_engine(db_url)
    try:
        with engine.begin() as conn:
            command.downgrade(_config(conn), "0010_listing_nulls_first")
            conn.execute(sa.text(
                "INSERT INTO entries (feed_id, entry_id, title, authors, categories, "
                "enclosures, content_hash, first_seen_at, last_seen_at) VALUES "
                "(:f, :e, 'Stored whole', '[]', '[]', '[]', '', :t, :t)"),
                {"f": feed.id, "e": long_id, "t": NOW.replace(tzinfo=None)
                 if db_url.startswith("sqlite") else NOW})
    finally:
        engine.dispose()

    store = open_store(db_url)  # this fairfetch: upgrades
    try:
        [result] = store.write([CrawlWrite(
            feed_id=feed.id, url=feed.url, at=NOW + timedelta(hours=1), outcome="ok",
            politeness_key="a.example", feed_changes={"status": "ok"},
            entries=[Entry(id=long_id, title="Stored whole")],
        )])
        assert result.new_entries == 0
        assert store.count_entries(feed.id) == 1
        with store.engine.connect() as conn:
            stored = conn.execute(sa.select(entries.c.entry_id)).scalar_one()
        assert stored != long_id  # rewritten, as the column now stores it
        assert stored[:100] == long_id[:100]
    finally:
        store.close()


def test_store_two_spellings_stored_alike_are_one_contact_and_one_author(db_url: str) -> None:
    """NUL and a lone surrogate are both stored as U+FFFD (see bindable_text), and a long
    value as its shortened form: two contacts or authors that differ only there are one row
    to the unique index, and were two rows to the batch, which then failed whole."""
    store = open_store(db_url)
    try:
        feed, _ = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
        other, _ = store.add_feed("https://b.example/feed", now=NOW, politeness_key="b.example")
        results = store.write([
            CrawlWrite(
                feed_id=feed.id, url=feed.url, at=NOW, outcome="ok", politeness_key="a.example",
                feed_changes={"status": "ok"},
                contacts=[Contact("https://a.example/\x00me", "web", "atom:author"),
                          Contact("https://a.example/\ud800me", "web", "itunes:owner")],
                authors=[(Person("Ada\x00", None, None), "atom:author"),
                         (Person("Ada\udfff", None, None), "dc:creator")],
            ),
            CrawlWrite(feed_id=other.id, url=other.url, at=NOW, outcome="ok",
                       politeness_key="b.example", feed_changes={"status": "ok"},
                       entries=[Entry(id="b1", title="kept")]),
        ])
        assert [r.new_entries for r in results] == [0, 1]
        details = store.feed_details(feed.id)
        assert [c["url"] for c in details["contacts"]] == ["https://a.example/\ufffdme"]
        assert [a["name"] for a in details["authors"]] == ["Ada\ufffd"]
    finally:
        store.close()


def test_store_move_to_a_url_too_long_for_the_index_is_not_made(db_url: str) -> None:
    """A confirmed permanent redirect (the publisher's server decides where) to a URL past
    what the unique index on feeds.url holds: the feed stays where it is, as it does when the
    URL is taken, and the batch (the other feed's result with it) is written. On PostgreSQL
    the move failed the batch, and again on every pass."""
    store = open_store(db_url)
    try:
        feed, _ = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
        other, _ = store.add_feed("https://b.example/feed", now=NOW, politeness_key="b.example")
        results = store.write([
            CrawlWrite(feed_id=feed.id, url=feed.url, at=NOW, outcome="ok",
                       politeness_key="a.example",
                       feed_changes={"status": "ok", "url": LONG_URL}),
            CrawlWrite(feed_id=other.id, url=other.url, at=NOW, outcome="ok",
                       politeness_key="b.example", feed_changes={"status": "ok"},
                       entries=[Entry(id="b1", title="kept")]),
        ])
        assert [(r.moved_to, r.new_entries) for r in results] == [(None, 0), (None, 1)]
        assert store.get_feed(feed.id).url == "https://a.example/feed"
        # A move that fits is still made (the guard drops only what cannot be stored).
        [moved] = store.write([CrawlWrite(
            feed_id=feed.id, url=feed.url, at=NOW, outcome="ok", politeness_key="a.example",
            feed_changes={"status": "ok", "url": "https://a.example/new-feed"})])
        assert moved.moved_to == "https://a.example/new-feed"
    finally:
        store.close()


def test_store_shortened_head_reads_back_only_what_index_safe_shortened() -> None:
    from fairfetch.store.types import index_safe, shortened_head

    long = "https://x.test/" + "é" * 3000
    stored = index_safe(long)
    head = shortened_head(stored)
    assert head is not None
    assert long.startswith(head)
    assert shortened_head("https://x.test/short") is None
    assert shortened_head("a title …#not a digest") is None  # the mark alone is text

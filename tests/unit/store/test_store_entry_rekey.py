"""An entry whose id changes spelling, found by its link, keeps its row (SQLite and PostgreSQL).

An entry without a guid is identified by its link. When that identity is derived differently
(fairfetch now leaves tracking parameters out of it, 8e734a5) or the publisher starts giving
guids, the next crawl brings the same post under a new id. Inserted as a new row, it was listed
twice in the directory, counted twice, and an undated one mailed again. A new id whose link is
the id *and* the link of a stored entry of the feed is that entry: its row takes the new id.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from fairfetch.feeds.model import Entry
from fairfetch.store import CrawlWrite, SqlStore, open_store

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
TRACKED = "https://a.example/post/1?utm_source=rss&utm_medium=feed"
PLAIN = "https://a.example/post/1"


@pytest.fixture
def store(db_url: str) -> Iterator[SqlStore]:
    s = open_store(db_url)
    yield s
    s.close()


def _write(store: SqlStore, feed_id: int, at: datetime, entries: list[Entry]) -> int:
    w = CrawlWrite(
        feed_id=feed_id, url="https://a.example/feed", at=at, outcome="ok",
        politeness_key="a.example",
        feed_changes={"status": "ok", "error_count": 0, "last_success_at": at,
                      "last_fetched_at": at, "next_crawl_at": at + timedelta(hours=1)},
        entries=entries,
    )  # fmt: skip
    return store.write([w])[0].new_entries


def _rows(store: SqlStore, feed_id: int) -> list[dict]:
    return sorted(store.entries_of(feed_id), key=lambda r: r["entry_id"])


def test_store_entry_id_without_tracking_keeps_the_row(store: SqlStore) -> None:
    feed, _ = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
    # As an earlier fairfetch stored it: the id was the link, tracking parameters and all.
    assert _write(store, feed.id, NOW, [Entry(id=TRACKED, title="one", link=TRACKED)]) == 1
    later = NOW + timedelta(hours=2)
    edited = Entry(id=PLAIN, title="one (edited)", link=TRACKED)
    assert _write(store, feed.id, later, [edited]) == 0
    rows = _rows(store, feed.id)
    assert [(r["entry_id"], r["title"], r["link"]) for r in rows] == [
        (PLAIN, "one (edited)", TRACKED)
    ]
    assert store.get_feed(feed.id).entry_count == 1
    # Stable from here on: the next crawl finds it under its new id.
    assert _write(store, feed.id, later + timedelta(hours=1), [edited]) == 0
    assert len(_rows(store, feed.id)) == 1


def test_store_entry_that_gains_a_guid_keeps_the_row(store: SqlStore) -> None:
    feed, _ = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
    assert _write(store, feed.id, NOW, [Entry(id=PLAIN, title="one", link=PLAIN)]) == 1
    assert _write(store, feed.id, NOW, [Entry(id="tag:a.example,2026:1", link=PLAIN)]) == 0
    assert [r["entry_id"] for r in _rows(store, feed.id)] == ["tag:a.example,2026:1"]


def test_store_entry_rekey_needs_the_link_to_be_the_stored_id_and_link(
    store: SqlStore,
) -> None:
    feed, _ = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
    # A stored entry whose id is the URL but whose link is another page: not this post.
    _write(store, feed.id, NOW, [Entry(id=PLAIN, title="a", link="https://a.example/other")])
    assert _write(store, feed.id, NOW, [Entry(id="g2", title="b", link=PLAIN)]) == 1
    assert [r["entry_id"] for r in _rows(store, feed.id)] == ["g2", PLAIN]


def test_store_entry_rekey_leaves_an_id_already_stored_alone(store: SqlStore) -> None:
    feed, _ = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
    _write(store, feed.id, NOW, [Entry(id=PLAIN, title="by link", link=PLAIN),
                                 Entry(id="g1", title="by guid", link="https://a.example/x")])
    # g1 now links where the other entry lives: g1 is known, nothing is merged.
    assert _write(store, feed.id, NOW, [Entry(id="g1", title="by guid", link=PLAIN)]) == 0
    assert [r["entry_id"] for r in _rows(store, feed.id)] == ["g1", PLAIN]


def test_store_entry_rekey_takes_one_newcomer_per_stored_row(store: SqlStore) -> None:
    feed, _ = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
    _write(store, feed.id, NOW, [Entry(id=PLAIN, title="one", link=PLAIN)])
    # Two new ids in one crawl both link there (a feed linking every item to one page): the
    # first takes the stored row, the second is a new entry.
    new = _write(store, feed.id, NOW, [Entry(id="g1", title="x", link=PLAIN),
                                       Entry(id="g2", title="y", link=PLAIN)])
    assert new == 1
    assert [(r["entry_id"], r["title"]) for r in _rows(store, feed.id)] == [
        ("g1", "x"), ("g2", "y")
    ]


def test_store_entry_rekey_leaves_a_row_still_listed_under_its_id(store: SqlStore) -> None:
    feed, _ = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
    _write(store, feed.id, NOW, [Entry(id=PLAIN, title="one", link=PLAIN)])
    # The feed still lists the stored entry under its id: a newcomer linking there is new.
    new = _write(store, feed.id, NOW, [Entry(id=PLAIN, title="one", link=PLAIN),
                                       Entry(id="g1", title="x", link=PLAIN)])
    assert new == 1
    assert [r["entry_id"] for r in _rows(store, feed.id)] == ["g1", PLAIN]

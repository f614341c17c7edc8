"""The row an entry becomes: its stored hash must never change for unchanged entries (every
stored entry would look changed after an upgrade), and its JSON columns keep their shape."""

from __future__ import annotations

import hashlib
from dataclasses import asdict
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from hypothesis import given
from hypothesis import strategies as st

from fairfetch.feeds.model import Enclosure, Entry, Person
from fairfetch.store import CrawlWrite, SqlStore, open_store
from fairfetch.store.batch_write import entry_hash, entry_row
from fairfetch.store.tables import entries as entries_table


def reference_hash(e: Entry) -> str:
    """The digest as first written: field by field."""
    h = hashlib.blake2b(digest_size=16)
    for part in (e.title, e.link, e.summary, e.content, e.published, e.updated):
        h.update(repr(part).encode("utf-8", "replace"))
        h.update(b"\x00")
    for enc in e.enclosures:
        h.update(repr((enc.url, enc.type, enc.length)).encode("utf-8", "replace"))
    return h.hexdigest()


texts = st.none() | st.text(max_size=40)
dates = st.none() | st.datetimes(timezones=st.just(UTC))
enclosures = st.builds(Enclosure, st.text(max_size=20), texts, st.none() | st.integers())
people = st.builds(Person, texts, texts, texts)
entries = st.builds(
    Entry,
    st.text(min_size=1, max_size=10),
    title=texts,
    link=texts,
    published=dates,
    updated=dates,
    summary=texts,
    content=texts,
    authors=st.lists(people, max_size=3),
    enclosures=st.lists(enclosures, max_size=3),
)


@given(entries)
def test_hash_is_the_stored_one(e: Entry) -> None:
    assert entry_hash(e) == reference_hash(e)


@given(entries)
def test_json_columns_keep_the_dataclass_shape(e: Entry) -> None:
    row = entry_row(e)
    assert row["authors"] == [asdict(p) for p in e.authors]
    assert row["enclosures"] == [asdict(x) for x in e.enclosures]


def test_a_changed_field_changes_the_hash() -> None:
    e = Entry("1", title="a", published=datetime(2026, 1, 1, tzinfo=UTC))
    assert entry_hash(e) != entry_hash(Entry("1", title="b", published=e.published))
    assert entry_hash(e) != entry_hash(Entry("1", title="a", published=e.published,
                                             enclosures=[Enclosure("x")]))  # fmt: skip


def _writes(store: SqlStore, feed_ids: list[int], first: int, n: int) -> list[CrawlWrite]:
    now = datetime(2026, 11, 30, tzinfo=UTC)
    return [
        CrawlWrite(
            feed_id=f,
            url=f"https://f{f}.test/feed",
            at=now,
            outcome="ok",
            politeness_key=f"f{f}.test",
            feed_changes={"status": "ok"},
            entries=[Entry(f"e{i}", title=f"t{i}") for i in range(first, first + n)],
        )
        for f in feed_ids
    ]


@pytest.mark.parametrize("returning", [True, False], ids=["insert-returning", "select-after"])
def test_new_entries_counted_exactly_across_chunks(
    db_url: str, returning: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """60 feeds x 10 entries: more pairs than one lookup clause holds (400), on both ways of
    learning the new ids (drivers without INSERT ... RETURNING take the second)."""
    store = open_store(db_url)
    try:
        if not returning:
            monkeypatch.setattr(
                store.engine.dialect, "insert_executemany_returning", False
            )
        now = datetime(2026, 11, 30, tzinfo=UTC)
        ids = [
            store.add_feed(f"https://f{i}.test/feed", now=now, politeness_key=f"f{i}.test")[0].id
            for i in range(60)
        ]
        first = store.write(_writes(store, ids, 0, 10))
        assert [r.new_entries for r in first] == [10] * 60
        # Re-crawl: 5 seen before, 5 new; one feed's entry changed its title.
        again = _writes(store, ids, 5, 10)
        again[0].entries[0] = Entry("e5", title="changed")  # type: ignore[index]
        second = store.write(again)
        assert [r.new_entries for r in second] == [5] * 60
        assert store.count_entries() == 60 * 15
        with store.engine.connect() as conn:
            title = conn.execute(
                sa.select(entries_table.c.title).where(
                    entries_table.c.feed_id == ids[0], entries_table.c.entry_id == "e5"
                )
            ).scalar_one()
        assert title == "changed"
    finally:
        store.close()


def test_stored_pairs_found_exactly_in_bounded_statements(db_url: str) -> None:
    """A feed of 2,500 entries and a few others: the lookup finds exactly the stored pairs among
    the wanted ones (not a neighbour's entry of the same id, not a wanted pair never stored),
    and no statement carries more than one chunk of pairs."""
    from fairfetch.store.batch_write import _CHUNK, _find_pairs

    store = open_store(db_url)
    try:
        now = datetime(2026, 11, 30, tzinfo=UTC)
        big, small, other = (
            store.add_feed(f"https://{n}.test/feed", now=now, politeness_key=f"{n}.test")[0].id
            for n in ("big", "small", "other")
        )
        store.write(
            [
                CrawlWrite(feed_id=big, url="https://big.test/feed", at=now, outcome="ok",
                           politeness_key="big.test", feed_changes={},
                           entries=[Entry(f"e{i}", title=f"t{i}") for i in range(2_500)]),
                CrawlWrite(feed_id=small, url="https://small.test/feed", at=now, outcome="ok",
                           politeness_key="small.test", feed_changes={},
                           entries=[Entry("x", title="x")]),
                CrawlWrite(feed_id=other, url="https://other.test/feed", at=now, outcome="ok",
                           politeness_key="other.test", feed_changes={},
                           entries=[Entry("e7", title="y")]),
            ]
        )
        wanted = [(big, f"e{i}") for i in range(0, 3_000, 2)] + [(small, "x"), (small, "e7")]
        sizes: list[int] = []

        def count(_conn, _cursor, _statement, parameters, _context, _many):  # type: ignore[no-untyped-def]
            sizes.append(len(parameters))

        with store.engine.connect() as conn:
            sa.event.listen(conn, "before_cursor_execute", count)
            found = list(_find_pairs(conn, wanted))
        assert sorted((f, e) for f, e, _id, _hash in found) == sorted(
            [(big, f"e{i}") for i in range(0, 2_500, 2)] + [(small, "x")]
        )
        assert all(h for _f, _e, _id, h in found)  # the stored content hash comes back
        assert len(sizes) == -(-len(wanted) // _CHUNK)
        assert max(sizes) <= 2 * _CHUNK
    finally:
        store.close()


def test_a_concurrent_writer_of_the_same_entry_fails_no_batch(db_url: str) -> None:
    """Two writers (the `serve` process crawling on a WebSub ping, `run` polling; two workers)
    store the same new entry at once. Each used to look it up before the other committed, and
    the second insert broke the unique (feed, entry id) and failed its whole batch, every other
    feed's result with it. A batch now locks its feeds' rows (SQLite: the write lock) before
    its first read, so B reads after A's commit: it stores nothing twice, counts the entry new
    once, and writes the rest. The interleaving is forced: B starts while A's transaction is
    open, and A commits just as B's first statement goes out."""
    first = open_store(db_url)
    second = open_store(db_url)
    try:
        now = datetime(2026, 11, 30, tzinfo=UTC)
        feed = first.add_feed("https://same.test/feed", now=now, politeness_key="same.test")[0]
        other = first.add_feed("https://other.test/feed", now=now, politeness_key="other.test")[0]

        def write(feed_id: int, url: str, ids: list[str]) -> CrawlWrite:
            return CrawlWrite(
                feed_id=feed_id,
                url=url,
                at=now,
                outcome="ok",
                politeness_key="k",
                feed_changes={"status": "ok"},
                entries=[Entry(i, title=i) for i in ids],
            )

        from fairfetch.store.batch_write import write_batch

        conn_a = first.engine.connect()
        tx_a = conn_a.begin()
        written_a = write_batch(conn_a, [write(feed.id, feed.url, ["shared", "a-only"])])
        committed: list[bool] = []

        def commit_a_first(_conn, _cursor, _statement, _params, _context, _many):  # type: ignore[no-untyped-def]
            if not committed:
                tx_a.commit()
                committed.append(True)

        sa.event.listen(second.engine, "before_cursor_execute", commit_a_first)
        try:
            written_b = second.write(
                [
                    write(feed.id, feed.url, ["shared", "b-only"]),
                    write(other.id, other.url, ["o1"]),
                ]
            )
        finally:
            sa.event.remove(second.engine, "before_cursor_execute", commit_a_first)
            conn_a.close()
        assert committed == [True]  # the race happened
        assert [r.new_entries for r in written_a] == [2]
        assert [r.new_entries for r in written_b] == [1, 1]  # "shared" was A's, not B's
        assert first.count_entries(feed.id) == 3
        assert first.count_entries(other.id) == 1
        assert first.get_feed(feed.id).entry_count == 3
    finally:
        first.close()
        second.close()

"""The store's contract, run on SQLite and on PostgreSQL (the `db_url` fixture).

PostgreSQL is here on purpose: the local SQLite driver forgives values the remote database will
not bind (seeds/000: contacts without a `source` failed every write on the remote one).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from fairfetch.errors import NotFoundError
from fairfetch.feeds.model import Contact, Enclosure, Entry, Person
from fairfetch.net.outcome import Hop
from fairfetch.store import CrawlWrite, SqlStore, link_row, open_store
from fairfetch.store.schema import metadata
from fairfetch.store.tables import feed_links, feeds

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.fixture
def store(db_url: str) -> Iterator[SqlStore]:
    s = open_store(db_url)
    yield s
    s.close()


def _write(store: SqlStore, feed_id: int, **kw: object) -> list:
    base: dict[str, object] = {
        "feed_id": feed_id,
        "url": "https://a.example/feed",
        "at": NOW,
        "outcome": "ok",
        "politeness_key": "a.example",
        "feed_changes": {
            "status": "ok",
            "error_count": 0,
            "last_success_at": NOW,
            "last_fetched_at": NOW,
            "next_crawl_at": NOW + timedelta(hours=1),
        },
    }
    base.update(kw)
    return store.write([CrawlWrite(**base)])  # type: ignore[arg-type]


def test_migrations_create_every_table_and_are_idempotent(db_url: str) -> None:
    s = open_store(db_url)
    s.close()
    s = open_store(db_url)  # second open: nothing to do, nothing breaks
    names = set(sa.inspect(s.engine).get_table_names())
    assert set(metadata.tables) <= names
    s.close()


def test_add_and_lookup_by_either_url(store: SqlStore) -> None:
    feed, created = store.add_feed(
        "https://a.example/feed", now=NOW, politeness_key="a.example", original_url="a.example/feed"
    )
    assert created
    assert feed.status == "new"
    assert feed.next_crawl_at == NOW
    again, created = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
    assert not created
    assert again.id == feed.id
    assert store.get_feed("a.example/feed").id == feed.id
    assert store.get_feed(feed.id).url == "https://a.example/feed"
    with pytest.raises(NotFoundError):
        store.get_feed("https://nowhere.example/")


def test_times_come_back_aware_utc(store: SqlStore) -> None:
    feed, _ = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
    assert feed.added_at.tzinfo is not None
    assert feed.added_at == NOW


def test_entries_are_unique_per_feed_and_updated_not_duplicated(store: SqlStore) -> None:
    feed, _ = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
    e1 = Entry(
        id="1",
        title="one",
        published=NOW - timedelta(days=1),
        enclosures=[Enclosure("https://a.example/a.mp3", "audio/mpeg", 10)],
    )
    e2 = Entry(id="2", title="two", published=NOW)
    r = _write(store, feed.id, entries=[e1, e2, e1], first_crawl=True)
    assert r[0].new_entries == 2
    # Reordered, one edited: no new rows, the edit lands.
    r = _write(store, feed.id, entries=[Entry(id="2", title="two (edited)", published=NOW), e1])
    assert r[0].new_entries == 0
    rows = store.entries_of(feed.id)
    assert len(rows) == 2
    assert {row["title"] for row in rows} == {"one", "two (edited)"}
    f = store.get_feed(feed.id)
    assert f.entry_count == 2
    assert f.newest_entry_at == NOW


def test_throttle_write_touches_only_what_it_names(store: SqlStore) -> None:
    feed, _ = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
    _write(store, feed.id, entries=[Entry(id="1")])
    before = store.get_feed(feed.id)
    later = NOW + timedelta(minutes=5)
    _write(
        store,
        feed.id,
        at=later,
        outcome="throttled",
        http_status=429,
        feed_changes={"next_crawl_at": later + timedelta(minutes=2)},
    )
    after = store.get_feed(feed.id)
    assert after.next_crawl_at == later + timedelta(minutes=2)
    unchanged = {k: v for k, v in before.__dict__.items() if k != "next_crawl_at"}
    assert {k: after.__dict__[k] for k in unchanged} == unchanged


def test_contacts_without_source_still_bind(store: SqlStore) -> None:
    """The bind site defaults `source`, so no caller can hand the database an unbindable value."""
    feed, _ = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
    contacts = [
        Contact("mailto:ed@a.example", "email", "managingEditor"),
        Contact("mailto:web@a.example", "email", None),
    ]  # type: ignore[arg-type]
    authors = [(Person("Ada", "ada@a.example", None), None)]
    _write(store, feed.id, contacts=contacts, authors=authors)  # type: ignore[arg-type]
    details = store.feed_details(feed.id)
    assert {c["source"] for c in details["contacts"]} == {"managingEditor", "unknown"}
    assert details["authors"][0]["source"] == "unknown"
    assert details["authors"][0]["links"][0]["source"] == "unknown"
    with store.engine.connect() as conn:
        assert (
            conn.execute(
                sa.select(sa.func.count())
                .select_from(feed_links)
                .where(feed_links.c.source.is_(None))
            ).scalar_one()
            == 0
        )
    assert link_row("x", None, None) == {"url": "x", "network": "web", "source": "unknown"}


def test_redirect_hops_replace_previous_chain(store: SqlStore) -> None:
    feed, _ = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
    _write(
        store,
        feed.id,
        hops=[
            Hop("https://a.example/feed", 301, "https://b.example/f"),
            Hop("https://b.example/f", 302, "https://c.example/f"),
        ],
    )
    assert [h["status"] for h in store.feed_details(feed.id)["redirects"]] == [301, 302]
    _write(store, feed.id, hops=[])
    assert store.feed_details(feed.id)["redirects"] == []


def test_url_move_keeps_original_and_refuses_a_taken_url(store: SqlStore) -> None:
    a, _ = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
    _b, _ = store.add_feed("https://b.example/feed", now=NOW, politeness_key="b.example")
    r = _write(store, a.id, feed_changes={"url": "https://b.example/feed"})
    assert r[0].moved_to is None  # taken by b: a stays where it is
    r = _write(store, a.id, feed_changes={"url": "https://new.example/feed"})
    assert r[0].moved_to == "https://new.example/feed"
    moved = store.get_feed("https://a.example/feed")  # lookup by the URL the user gave
    assert moved.url == "https://new.example/feed"
    assert moved.id == a.id


def test_due_stream_includes_monthly_dead_probe(store: SqlStore) -> None:
    ids = []
    for i in range(5):
        f, _ = store.add_feed(f"https://h{i}.example/feed", now=NOW, politeness_key=f"h{i}.example")
        ids.append(f.id)
    month = 30 * 86400.0
    _write(store, ids[0], feed_changes={"next_crawl_at": NOW + timedelta(hours=1)})
    _write(
        store,
        ids[1],
        feed_changes={
            "status": "dead",
            "next_crawl_at": None,
            "last_fetched_at": NOW - timedelta(days=31),
        },
    )
    _write(
        store,
        ids[2],
        feed_changes={
            "status": "dead",
            "next_crawl_at": None,
            "last_fetched_at": NOW - timedelta(days=2),
        },
    )
    due = [f.id for f in store.iter_due(NOW, dead_probe_interval=month, batch=2)]
    assert due == [ids[1], ids[3], ids[4]]
    assert store.count_due(NOW, dead_probe_interval=month) == 3
    assert [f.id for f in store.iter_due(NOW, dead_probe_interval=month, limit=2)] == due[:2]


def test_stats_count_outcomes_and_throttles_by_key(store: SqlStore) -> None:
    f, _ = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
    _write(store, f.id)
    _write(
        store,
        f.id,
        outcome="throttled",
        http_status=429,
        politeness_key="backend:letterbox",
        feed_changes={"next_crawl_at": NOW},
    )
    _write(store, f.id, outcome="error", error_kind="dns", feed_changes={})
    s = store.stats(NOW + timedelta(minutes=1), dead_probe_interval=30 * 86400.0)
    assert s["crawls"]["last_hour"] == {"ok": 1, "throttled": 1, "error:dns": 1}
    assert s["throttles_by_key"] == [{"key": "backend:letterbox", "throttles": 1}]
    assert s["feeds"]["total"] == 1


def test_delete_cascades(store: SqlStore) -> None:
    f, _ = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
    _write(store, f.id, entries=[Entry(id="1")], contacts=[Contact("mailto:x@a.example")])
    store.delete_feed(f.id)
    with store.engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(feeds)).scalar_one() == 0
    assert store.count_entries() == 0


def test_text_no_driver_binds_is_stored_replaced_not_failing_the_batch(store: SqlStore) -> None:
    """NUL (PostgreSQL refuses it in text) and lone surrogates (a header byte that is not UTF-8,
    as aiohttp hands it over) bind on both databases: one publisher's odd bytes must not fail
    the transaction that carries every other feed's result."""
    from fairfetch.net.robots import RobotsCopy
    from fairfetch.store.robots_repo import load_robots, save_robots

    feed, _ = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
    other, _ = store.add_feed("https://b.example/feed", now=NOW, politeness_key="b.example")
    odd = Entry(id="id\x00\udce9", title="t\x00", content="c\udcff")
    r = store.write(
        [
            CrawlWrite(
                feed_id=feed.id,
                url=feed.url,
                at=NOW,
                outcome="error",
                politeness_key="a.example",
                feed_changes={"last_error": "http: 404 Nicht gef\udcfcnden", "etag": '"a\x00"'},
                error_kind="http",
                error_detail="404 Not\x00Found",
                entries=[odd],
                contacts=[Contact("mailto:x\x00@a.example", "email", "webMaster")],
                authors=[(Person("N\udce9", None, None), "author")],
            ),
            CrawlWrite(
                feed_id=other.id,
                url=other.url,
                at=NOW,
                outcome="ok",
                politeness_key="b.example",
                feed_changes={"status": "ok"},
                entries=[Entry(id="1", title="fine")],
            ),
        ]
    )
    assert [w.new_entries for w in r] == [1, 1]
    got = store.get_feed(feed.id)
    assert got.last_error == "http: 404 Nicht gef\ufffdnden"
    assert got.etag == '"a\ufffd"'
    assert store.get_feed(other.id).status == "ok"
    # The same odd id crawled again is the stored entry, not a second one.
    again = _write(store, feed.id, entries=[odd])
    assert again[0].new_entries == 0
    assert store.count_entries(feed.id) == 1
    # Looking a feed up by a URL with such a character is a miss, not a database error.
    assert store.find_feed("https://a.example/\x00") is None
    save_robots(store, [RobotsCopy("https://r.example", "parsed", 200, "A\x00\udce9", 1.7e9)])
    copy = load_robots(store, "https://r.example")
    assert copy is not None
    assert copy.body == "A\ufffd\ufffd"


def test_two_feeds_moving_onto_one_url_in_one_batch(store: SqlStore) -> None:
    """http:// and https:// copies of a feed both redirected (301) to one new URL are confirmed
    on the same crawl and land in the same batch: one moves, the other stays where it is. Both
    moving broke the unique URL, failed the batch, and did so again on every crawl."""
    a, _ = store.add_feed("http://a.example/feed", now=NOW, politeness_key="a.example")
    b, _ = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
    other, _ = store.add_feed("https://c.example/feed", now=NOW, politeness_key="c.example")
    target = "https://new.example/feed"

    def move(feed_id: int, url: str) -> CrawlWrite:
        return CrawlWrite(
            feed_id=feed_id,
            url=url,
            at=NOW,
            outcome="ok",
            politeness_key="a.example",
            feed_changes={"status": "ok", "url": target},
        )

    plain = CrawlWrite(
        feed_id=other.id,
        url=other.url,
        at=NOW,
        outcome="ok",
        politeness_key="c.example",
        feed_changes={"status": "ok"},
        entries=[Entry(id="1")],
    )
    r = store.write([move(a.id, a.url), plain, move(b.id, b.url)])
    assert [w.moved_to for w in r] == [target, None, None]
    assert store.get_feed(a.id).url == target
    assert store.get_feed(b.id).url == "https://a.example/feed"
    assert store.get_feed(other.id).entry_count == 1


def test_a_dead_probe_waits_for_a_throttle_or_deferral(store: SqlStore) -> None:
    from fairfetch.store import directory_repo

    month = 30 * 86400.0
    ids = []
    for i, next_at in enumerate((None, NOW + timedelta(hours=1), NOW - timedelta(minutes=1))):
        f, _ = store.add_feed(f"https://d{i}.example/feed", now=NOW, politeness_key=f"d{i}")
        _write(
            store,
            f.id,
            feed_changes={
                "status": "dead",
                "last_fetched_at": NOW - timedelta(days=40),
                "next_crawl_at": next_at,
            },
        )
        ids.append(f.id)
    due = [f.id for f in store.iter_due(NOW, dead_probe_interval=month)]
    assert due == [ids[0], ids[2]]  # the throttled probe (next_crawl_at ahead) waits
    assert store.count_due(NOW, dead_probe_interval=month) == 2
    assert directory_repo.count_due(store, NOW, dead_probe_interval=month) == 2


def test_a_result_for_a_feed_deleted_meanwhile_fails_no_batch(store: SqlStore) -> None:
    """`run` crawls while the web deletes: a feed removed between being streamed as due and
    its result being written. Its crawl row and entries referenced a feed that no longer
    exists, broke the foreign key, and failed the whole batch (and `run` with it)."""
    gone, _ = store.add_feed("https://gone.example/feed", now=NOW, politeness_key="gone.example")
    kept, _ = store.add_feed("https://kept.example/feed", now=NOW, politeness_key="kept.example")
    store.delete_feed(gone.id)
    results = store.write(
        [
            CrawlWrite(
                feed_id=gone.id,
                url=gone.url,
                at=NOW,
                outcome="ok",
                politeness_key="gone.example",
                feed_changes={"status": "ok", "url": "https://moved.example/feed"},
                entries=[Entry(id="1", title="orphan")],
                hops=[Hop(gone.url, 301, "https://moved.example/feed")],
                contacts=[Contact("mailto:a@gone.example", "email", "webMaster")],
                authors=[(Person("Ada", None, None), "author")],
            ),
            CrawlWrite(
                feed_id=kept.id,
                url=kept.url,
                at=NOW,
                outcome="ok",
                politeness_key="kept.example",
                feed_changes={"status": "ok"},
                entries=[Entry(id="1", title="kept")],
            ),
        ]
    )
    assert [r.new_entries for r in results] == [0, 1]
    assert results[0].moved_to is None
    assert store.find_feed(gone.id) is None
    assert store.get_feed(kept.id).entry_count == 1
    assert store.count_entries() == 1


def test_feed_ids_past_the_column_range_are_not_found(store: SqlStore) -> None:
    """An id no row can have (past PostgreSQL's 32-bit INTEGER) is "not found", as on SQLite,
    not the database's "integer out of range" (`websub renew 2147483648`)."""
    for key in (2**31, -(2**31) - 1, 10**30):
        with pytest.raises(NotFoundError):
            store.get_feed(key)
        assert store.find_feed(key) is None


def test_stats_oldest_due_counts_the_feeds_due_counts(store: SqlStore) -> None:
    """"Oldest overdue" is over the feeds "due now" counts: a dead feed due for its monthly
    probe was counted as due but left out of the oldest, which then named a younger one."""
    month = 30 * 86400.0
    alive, _ = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
    dead, _ = store.add_feed("https://b.example/feed", now=NOW, politeness_key="b.example")
    _write(store, alive.id, feed_changes={"next_crawl_at": NOW - timedelta(hours=1)})
    _write(store, dead.id, feed_changes={
        "status": "dead", "next_crawl_at": None, "last_fetched_at": NOW - timedelta(days=40),
    })  # fmt: skip
    s = store.stats(NOW, dead_probe_interval=month)
    assert s["queue"]["due"] == 2
    assert s["queue"]["oldest_due_at"] == NOW - timedelta(days=10)  # its probe fell due then
    # A probe deferred (its key paused) is due since the pause ended.
    deferred, _ = store.add_feed("https://c.example/feed", now=NOW, politeness_key="c.example")
    _write(store, deferred.id, feed_changes={
        "status": "dead", "next_crawl_at": NOW - timedelta(days=20),
        "last_fetched_at": NOW - timedelta(days=60),
    })  # fmt: skip
    s = store.stats(NOW, dead_probe_interval=month)
    assert s["queue"]["due"] == 3
    assert s["queue"]["oldest_due_at"] == NOW - timedelta(days=20)

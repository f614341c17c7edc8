"""The directory's listings put a feed without the sorted value (no title yet, no dated entry)
at the same place on both backends. SQLite sorts NULL as the smallest value, PostgreSQL as
the largest: "newest first" (the natural direction of ``newest``) listed every feed that had
never published on top of the page on PostgreSQL, and at the bottom on SQLite."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from fairfetch.store import SqlStore, open_store
from fairfetch.store.directory_repo import list_feeds
from fairfetch.store.tables import feeds

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.fixture
def store(db_url: str) -> Iterator[SqlStore]:
    s = open_store(db_url)
    #: (title, newest entry date), added in this order (ids 1..5)
    for i, (title, newest) in enumerate([
        ("beta", NOW),
        (None, None),
        ("Alpha", NOW - timedelta(days=1)),
        ("gamma", None),
        ("Zed", NOW + timedelta(days=1)),
    ]):
        f, _ = s.add_feed(f"https://f{i}.example/feed", now=NOW, politeness_key=f"f{i}.example")
        with s.engine.begin() as conn:
            conn.execute(feeds.update().where(feeds.c.id == f.id)
                         .values(title=title, newest_entry_at=newest, kind="blog"))
    yield s
    s.close()


@pytest.mark.parametrize("kind", [None, "blog"])  # /feeds, and /blogs (the kind's own index)
@pytest.mark.parametrize(
    ("sort", "descending", "expected"),
    [
        # newest first: the feeds that published, newest on top; those that never did, after
        ("newest", True, ["Zed", "beta", "Alpha", "gamma", None]),
        ("newest", False, [None, "gamma", "Alpha", "beta", "Zed"]),
        ("title", False, [None, "Alpha", "beta", "gamma", "Zed"]),
        ("title", True, ["Zed", "gamma", "beta", "Alpha", None]),
    ],
)
def test_store_listing_places_missing_values_alike_on_both_backends(
    store: SqlStore, kind: str | None, sort: str, descending: bool, expected: list[str | None]
) -> None:
    page = list_feeds(store, kind=kind, sort=sort, descending=descending)
    assert [r["title"] for r in page.rows] == expected
    # Paged, the same order: no row twice, none left out between pages.
    paged = [r["title"] for off in range(0, 5, 2)
             for r in list_feeds(store, kind=kind, sort=sort, descending=descending,
                                 limit=2, offset=off).rows]
    assert paged == expected


@pytest.mark.parametrize("kind", [None, "blog"])
@pytest.mark.parametrize("sort", ["newest", "title"])
@pytest.mark.parametrize("descending", [True, False])
def test_store_listing_pages_stay_index_ranges_on_postgresql(
    pg_url: str, kind: str | None, sort: str, descending: bool
) -> None:
    """The order asked of PostgreSQL is the one its listing index holds (read either way),
    so a page is still read off the index, with no sort of the whole table or kind."""
    import sqlalchemy as sa

    from fairfetch.store import directory_repo as repo

    s = open_store(pg_url)
    try:
        q = (sa.select(*repo._SUMMARY).where(*repo._filters(kind, None))
             .order_by(*repo._order(sort, descending, s.dialect)).limit(50))
        sql = str(q.compile(dialect=s.engine.dialect, compile_kwargs={"literal_binds": True}))
        with s.engine.connect() as conn:
            conn.exec_driver_sql("SET enable_seqscan = off")  # an empty table: would be read whole
            conn.exec_driver_sql("SET enable_sort = off")  # and sorted, it is so small
            plan = [r[0].strip() for r in conn.exec_driver_sql("EXPLAIN " + sql)]
    finally:
        s.close()
    index = "ix_feeds_" + ("kind_" if kind else "") + (
        "newest_entry_at" if sort == "newest" else "title_lower")
    assert any(index in line for line in plan), plan
    # At most an incremental sort of the rows that tie on the key (by id), never a full one.
    assert not [line for line in plan if line.lstrip("-> ").startswith("Sort  (")], plan

"""Read queries for the directory (web pages, JSON API, /crawlstats, /metrics).

Every function here reads; none writes. Each is shaped so that it stays an index range on a
directory of 100,000 feeds and millions of crawls: listings are sorted on indexed expressions,
counts go through indexes, and crawl statistics are read per minute over a bounded window so the
web side can cache the minutes that can no longer change (see fairfetch.web.stats).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import sqlalchemy as sa

from fairfetch.errors import InputError
from fairfetch.store.refusals import refused
from fairfetch.store.sql import SqlStore, dead_probe_allowed
from fairfetch.store.tables import authors, crawls, entries, feeds
from fairfetch.store.tables_directory import feeds_fts

SortKey = Literal["title", "newest", "added", "entries", "errors"]
SORT_KEYS: tuple[str, ...] = ("title", "newest", "added", "entries", "errors")
#: The natural direction of each sort (what a click on the column heading shows first).
DEFAULT_DESCENDING: dict[str, bool] = {
    "title": False,
    "newest": True,
    "added": True,
    "entries": True,
    "errors": True,
}

#: The columns a listing row shows; the long ones are cut in SQL, not after loading them.
_SUMMARY = (
    feeds.c.id,
    feeds.c.url,
    feeds.c.title,
    sa.func.substr(feeds.c.description, 1, 300).label("description"),
    feeds.c.link,
    feeds.c.kind,
    feeds.c.status,
    feeds.c.error_count,
    feeds.c.last_error,
    feeds.c.last_success_at,
    feeds.c.last_fetched_at,
    feeds.c.next_crawl_at,
    feeds.c.entry_count,
    feeds.c.newest_entry_at,
    feeds.c.added_at,
)

def _words(q: str) -> list[str]:
    r"""The words we search for: letters and digits, with the combining marks that belong to
    them (a Thai tone mark, a Devanagari vowel sign or virama: ``\w`` counts none of them, and
    split "ข่าว" into "ข" and "าว"), so the query languages of FTS5 and tsquery never see an
    operator that came from a user. A mark with no letter before it starts no word."""
    out: list[str] = []
    start = -1
    for i, ch in enumerate(q):
        if (ch.isalnum() and ch != "_") or (start >= 0 and unicodedata.category(ch)[0] == "M"):
            if start < 0:
                start = i
        elif start >= 0:
            out.append(q[start:i])
            start = -1
    if start >= 0:
        out.append(q[start:])
    return out


#: Each word is one more index probe (and, on PostgreSQL, one more author subquery).
MAX_QUERY_WORDS = 8


def _distinct_words(q: str) -> list[str]:
    return list(dict.fromkeys(w.lower() for w in _words(q)))


def query_words(q: str) -> list[str]:
    """The distinct words of a search box input, lower-cased, at most MAX_QUERY_WORDS of them.

    A repeated word asks nothing more (every word must match), so it is counted once.
    """
    return _distinct_words(q)[:MAX_QUERY_WORDS]


def query_problem(q: str) -> str | None:
    """Why ``q`` cannot be searched as typed, or None.

    Every word must match, so searching fewer words than were typed would answer a broader
    question than the one asked: more words than MAX_QUERY_WORDS are refused, never cut off.
    """
    words = _distinct_words(q)
    if not words:
        return "has no words to search for (letters or digits)"
    if len(words) > MAX_QUERY_WORDS:
        return (
            f"search takes at most {MAX_QUERY_WORDS} words, this query has {len(words)}: "
            "remove some words"
        )
    return None


def fts5_query(words: Sequence[str]) -> str:
    """All words must match, each as a prefix ("pod" finds "podcast")."""
    return " ".join(f'"{w}"*' for w in words)


def tsquery(words: Sequence[str]) -> str:
    return " & ".join(f"{w}:*" for w in words)


# Must stay equal to the expressions indexed in migration 0004, or PostgreSQL will not use them.
_PG_FEED_DOCUMENT: sa.ColumnElement[Any] = sa.literal_column(
    "to_tsvector('simple'::regconfig, coalesce(feeds.title, '') || ' ' || "
    "regexp_replace(feeds.url || ' ' || feeds.original_url, '[^[:alnum:]]+', ' ', 'g'))"
)
_PG_AUTHOR_DOCUMENT: sa.ColumnElement[Any] = sa.literal_column(
    "to_tsvector('simple'::regconfig, authors.name)"
)


#: The sorts on a column that may be NULL (a feed with no title yet, or no dated entry).
_NULLABLE_SORTS = frozenset({"title", "newest"})


def _order(sort: str, descending: bool, dialect: str) -> list[sa.ColumnElement[Any]]:
    """A missing value sorts as the smallest on both backends, as SQLite sorts NULL: "newest
    first" ends with the feeds that never published. PostgreSQL sorts NULL as the largest, so
    it is told (its listing indexes are built NULLS FIRST to match, migration 0010); SQLite's
    SQL is left as it was, which its indexes serve."""
    cols: dict[str, sa.ColumnElement[Any]] = {
        "title": sa.func.lower(feeds.c.title),
        "newest": feeds.c.newest_entry_at,
        "added": feeds.c.id,
        "entries": feeds.c.entry_count,
        "errors": feeds.c.error_count,
    }
    col = cols[sort]
    if sort == "added":
        return [col.desc() if descending else col.asc()]
    tie = feeds.c.id.desc() if descending else feeds.c.id.asc()
    by = col.desc() if descending else col.asc()
    if dialect == "postgresql" and sort in _NULLABLE_SORTS:
        by = by.nulls_last() if descending else by.nulls_first()
    return [by, tie]


def _filters(kind: str | None, status: str | None) -> list[sa.ColumnElement[bool]]:
    out: list[sa.ColumnElement[bool]] = []
    if kind:
        out.append(feeds.c.kind == kind)
    if status:
        out.append(feeds.c.status == status)
    return out


@dataclass(frozen=True)
class Page:
    rows: list[dict[str, Any]]
    total: int
    #: False when a search matched too much to rank and lists newest first instead.
    ranked: bool = True


@refused('listing feeds')
def list_feeds(
    store: SqlStore,
    *,
    kind: str | None = None,
    status: str | None = None,
    sort: str = "title",
    descending: bool | None = None,
    limit: int = 50,
    offset: int = 0,
) -> Page:
    """One page of the directory, sorted on an indexed expression, with the total count."""
    if sort not in SORT_KEYS:
        raise ValueError(f"unknown sort {sort!r}")
    desc = DEFAULT_DESCENDING[sort] if descending is None else descending
    where = _filters(kind, status)
    order = _order(sort, desc, store.dialect)
    q = sa.select(*_SUMMARY).where(*where).order_by(*order).limit(limit).offset(offset)
    count = sa.select(sa.func.count()).select_from(feeds).where(*where)
    with store.engine.connect() as conn:
        rows = [dict(r) for r in conn.execute(q).mappings()]
        total = int(conn.execute(count).scalar_one())
    return Page(rows, total)


@refused('searching feeds for {q!r}')
def search_feeds(
    store: SqlStore,
    q: str,
    *,
    kind: str | None = None,
    status: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> Page:
    """Feeds whose title, URL or author names contain every word of ``q`` (prefixes), best first.

    No words, no feeds; more than MAX_QUERY_WORDS distinct words is an InputError (see
    query_problem), never a search of the first few.
    """
    words = _distinct_words(q)
    if not words:
        return Page([], 0)
    if len(words) > MAX_QUERY_WORDS:
        raise InputError(q, query_problem(q) or "too many words")
    where = _filters(kind, status)
    if store.dialect == "sqlite":
        return _search_sqlite(store, fts5_query(words), where, limit, offset)
    else:  # PostgreSQL
        # Each word in the title and URL or in an author's name, as FTS5 reads the whole row
        # on SQLite ("alice morning": Alice Smith's "Morning Podcast"); both documents keep
        # their expression indexes (migration 0004).
        cond = sa.and_(*(_pg_word_matches(w) for w in words))
        tsq = sa.func.to_tsquery(sa.literal_column("'simple'::regconfig"), tsquery(words))
        rank = sa.func.ts_rank(_PG_FEED_DOCUMENT, tsq)
        rows_q = (
            sa.select(*_SUMMARY)
            .where(cond, *where)
            .order_by(rank.desc(), feeds.c.id)
            .limit(limit)
            .offset(offset)
        )
        count_q = sa.select(sa.func.count()).select_from(feeds).where(cond, *where)
    with store.engine.connect() as conn:
        rows = [dict(r) for r in conn.execute(rows_q).mappings()]
        total = int(conn.execute(count_q).scalar_one())
    return Page(rows, total)


def _pg_word_matches(word: str) -> sa.ColumnElement[bool]:
    tsq = sa.func.to_tsquery(sa.literal_column("'simple'::regconfig"), tsquery([word]))
    by_author = sa.select(authors.c.feed_id).where(_PG_AUTHOR_DOCUMENT.op("@@")(tsq))
    return sa.or_(_PG_FEED_DOCUMENT.op("@@")(tsq), feeds.c.id.in_(by_author))


#: Up to this many matches are ranked by relevance (bm25, computed per match); a broader
#: query lists its matches newest first instead, which FTS5 reads straight off its index.
RANK_LIMIT = 2000


def _search_sqlite(
    store: SqlStore, query: str, where: list[sa.ColumnElement[bool]], limit: int, offset: int
) -> Page:
    match = sa.literal_column("feeds_fts").op("MATCH")(query)
    rank: sa.ColumnElement[Any] = sa.literal_column("feeds_fts.rank")
    with store.engine.connect() as conn:
        if not where:
            total = int(
                conn.execute(
                    sa.select(sa.func.count()).select_from(feeds_fts).where(match)
                ).scalar_one()
            )
            by: sa.ColumnElement[Any] = rank if total <= RANK_LIMIT else feeds_fts.c.rowid.desc()
            ids = [
                int(r[0])
                for r in conn.execute(
                    sa.select(feeds_fts.c.rowid)
                    .select_from(feeds_fts)
                    .where(match)
                    .order_by(by)
                    .limit(limit)
                    .offset(offset)
                )
            ]
            found = {
                r["id"]: dict(r)
                for r in conn.execute(sa.select(*_SUMMARY).where(feeds.c.id.in_(ids))).mappings()
            }
            return Page([found[i] for i in ids if i in found], total, total <= RANK_LIMIT)
        hits = (
            sa.select(feeds_fts.c.rowid.label("fid"), rank.label("rank"))
            .select_from(feeds_fts)
            .where(match)
            .subquery()
        )
        joined = hits.join(feeds, feeds.c.id == hits.c.fid)
        total = int(
            conn.execute(sa.select(sa.func.count()).select_from(joined).where(*where)).scalar_one()
        )
        order = [hits.c.rank, feeds.c.id] if total <= RANK_LIMIT else [feeds.c.id.desc()]
        rows_q = (
            sa.select(*_SUMMARY)
            .select_from(joined)
            .where(*where)
            .order_by(*order)
            .limit(limit)
            .offset(offset)
        )
        rows = [dict(r) for r in conn.execute(rows_q).mappings()]
    return Page(rows, total, total <= RANK_LIMIT)


@refused('counting feeds by kind')
def kind_counts(store: SqlStore) -> dict[str, int]:
    """Feeds per kind (``unknown`` for feeds not classified yet); an index scan, no sort."""
    out: dict[str, int] = {}
    with store.engine.connect() as conn:
        for k, n in conn.execute(sa.select(feeds.c.kind, sa.func.count()).group_by(feeds.c.kind)):
            label = str(k) if k is not None else "unknown"
            out[label] = out.get(label, 0) + int(n)
    return out


@refused('counting feeds by status')
def status_counts(store: SqlStore) -> dict[str, int]:
    with store.engine.connect() as conn:
        return {
            str(k): int(n)
            for k, n in conn.execute(
                sa.select(feeds.c.status, sa.func.count()).group_by(feeds.c.status)
            )
        }


@refused('listing failing feeds')
def troubled_feeds(store: SqlStore, *, limit: int = 20) -> list[dict[str, Any]]:
    """Dead and erroring feeds, most consecutive failures first.

    One index range per status (read backwards, ``limit`` rows each) merged here, rather than
    an IN over both that would sort every failing feed to keep twenty.
    """
    rows: list[dict[str, Any]] = []
    with store.engine.connect() as conn:
        for status in ("dead", "error"):
            q = (
                sa.select(*_SUMMARY)
                .where(feeds.c.status == status)
                .order_by(feeds.c.status.desc(), feeds.c.error_count.desc(), feeds.c.id.desc())
                .limit(limit)
            )
            rows.extend(dict(r) for r in conn.execute(q).mappings())
    rows.sort(key=lambda r: (-int(r["error_count"] or 0), r["status"] != "dead", r["id"]))
    return rows[:limit]


@refused('counting due feeds')
def count_due(store: SqlStore, now: datetime, *, dead_probe_interval: float) -> int:
    """Feeds due now: the same rule as SqlStore.count_due, in two index-only counts.

    A single OR over both halves makes SQLite read the whole table; the live half is answered
    from the (next_crawl_at, status) index and the dead half from (status, error_count) plus
    the few dead rows.
    """
    probe_before = now - timedelta(seconds=dead_probe_interval)
    live = sa.select(sa.func.count()).where(feeds.c.next_crawl_at <= now, feeds.c.status != "dead")
    dead = sa.select(sa.func.count()).where(
        feeds.c.status == "dead",
        feeds.c.last_fetched_at <= probe_before,
        dead_probe_allowed(now),
    )
    with store.engine.connect() as conn:
        return int(conn.execute(live).scalar_one()) + int(conn.execute(dead).scalar_one())


@refused('reading the crawl queue')
def queue_stats(store: SqlStore, now: datetime, *, dead_probe_interval: float) -> dict[str, Any]:
    """The crawl queue: feeds due now, the most overdue one, and what the next hour holds."""
    alive = feeds.c.status != "dead"
    with store.engine.connect() as conn:
        oldest = conn.execute(
            sa.select(sa.func.min(feeds.c.next_crawl_at)).where(alive, feeds.c.next_crawl_at <= now)
        ).scalar_one()
        next_hour = conn.execute(
            sa.select(sa.func.count()).where(
                feeds.c.next_crawl_at > now,
                feeds.c.next_crawl_at <= now + timedelta(hours=1),
                alive,
            )
        ).scalar_one()
    due = count_due(store, now, dead_probe_interval=dead_probe_interval)
    return {
        "due": int(due),
        "oldest_due_at": oldest,
        "oldest_overdue_seconds": (now - oldest).total_seconds() if oldest else None,
        "next_hour": int(next_hour),
    }


@refused('counting entries')
def count_entries_total(store: SqlStore) -> int:
    """Entries in the directory, from the feeds' counters (cheap; the crawler keeps them)."""
    with store.engine.connect() as conn:
        return int(
            conn.execute(
                sa.select(sa.func.coalesce(sa.func.sum(feeds.c.entry_count), 0))
            ).scalar_one()
        )


# --- crawls per minute ---------------------------------------------------------------------


def _minute(store: SqlStore) -> sa.ColumnElement[Any]:
    if store.dialect == "sqlite":
        # Stored as 'YYYY-MM-DD HH:MM:SS.ffffff' (UTC): the first 16 characters are the minute.
        return sa.func.substr(crawls.c.at, 1, 16)
    return sa.func.date_trunc("minute", sa.func.timezone("UTC", crawls.c.at))


def _as_minute(value: Any) -> datetime:
    if isinstance(value, str):
        return datetime.fromisoformat(value + ":00").replace(tzinfo=UTC)
    assert isinstance(value, datetime)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


@dataclass(frozen=True)
class MinuteCount:
    minute: datetime
    outcome: str
    error_kind: str | None
    count: int
    bytes: int


@refused('counting crawls per minute')
def crawl_minutes(store: SqlStore, since: datetime, until: datetime) -> list[MinuteCount]:
    """Crawls with ``since <= at < until`` counted per minute and outcome (and error kind)."""
    m = _minute(store).label("m")
    q = (
        sa.select(
            m,
            crawls.c.outcome,
            crawls.c.error_kind,
            sa.func.count(),
            sa.func.coalesce(sa.func.sum(crawls.c.bytes), 0),
        )
        .where(crawls.c.at >= since, crawls.c.at < until)
        .group_by(m, crawls.c.outcome, crawls.c.error_kind)
    )
    with store.engine.connect() as conn:
        return [
            MinuteCount(_as_minute(r[0]), str(r[1]), r[2], int(r[3]), int(r[4]))
            for r in conn.execute(q)
        ]


@refused('counting throttles per minute')
def throttle_minutes(
    store: SqlStore, since: datetime, until: datetime
) -> list[tuple[datetime, str, int]]:
    """Throttled crawls per minute and politeness key: which platforms are pushing back."""
    m = _minute(store).label("m")
    q = (
        sa.select(m, crawls.c.politeness_key, sa.func.count())
        .where(crawls.c.at >= since, crawls.c.at < until, crawls.c.outcome == "throttled")
        .group_by(m, crawls.c.politeness_key)
    )
    with store.engine.connect() as conn:
        return [(_as_minute(r[0]), str(r[1]), int(r[2])) for r in conn.execute(q)]


# --- metrics -------------------------------------------------------------------------------


@refused('reading the newest crawl')
def max_crawl_id(store: SqlStore) -> int:
    with store.engine.connect() as conn:
        return int(
            conn.execute(sa.select(sa.func.coalesce(sa.func.max(crawls.c.id), 0))).scalar_one()
        )


@refused('reading recent crawls')
def crawls_after(
    store: SqlStore, last_id: int, *, limit: int = 50_000
) -> list[tuple[int, str, str | None, float]]:
    """Crawl rows recorded after ``last_id`` (id, outcome, error kind, duration), oldest first."""
    q = (
        sa.select(crawls.c.id, crawls.c.outcome, crawls.c.error_kind, crawls.c.duration)
        .where(crawls.c.id > last_id)
        .order_by(crawls.c.id)
        .limit(limit)
    )
    with store.engine.connect() as conn:
        return [(int(r[0]), str(r[1]), r[2], float(r[3] or 0.0)) for r in conn.execute(q)]


# --- entries -------------------------------------------------------------------------------


@refused('listing entries')
def list_entries(
    store: SqlStore, *, feed_id: int | None = None, limit: int = 50, offset: int = 0
) -> Page:
    """Entries newest first (as we first saw them), of one feed or of the whole directory."""
    cols = (
        entries.c.id,
        entries.c.feed_id,
        entries.c.entry_id,
        entries.c.title,
        entries.c.link,
        entries.c.published,
        entries.c.updated,
        entries.c.summary,
        entries.c.content,
        entries.c.authors,
        entries.c.categories,
        entries.c.enclosures,
        entries.c.first_seen_at,
    )
    q = sa.select(*cols)
    count = sa.select(sa.func.count()).select_from(entries)
    if feed_id is not None:
        q = q.where(entries.c.feed_id == feed_id).order_by(
            entries.c.first_seen_at.desc(), entries.c.id.desc()
        )
        count = count.where(entries.c.feed_id == feed_id)
    else:
        q = q.order_by(entries.c.id.desc())
    q = q.limit(limit).offset(offset)
    with store.engine.connect() as conn:
        rows = [dict(r) for r in conn.execute(q).mappings()]
        if feed_id is not None:
            total = int(conn.execute(count).scalar_one())
        else:
            total = count_entries_total(store)
    return Page(rows, total)


__all__ = [
    "DEFAULT_DESCENDING",
    "MAX_QUERY_WORDS",
    "SORT_KEYS",
    "MinuteCount",
    "Page",
    "count_due",
    "count_entries_total",
    "crawl_minutes",
    "crawls_after",
    "fts5_query",
    "kind_counts",
    "list_entries",
    "list_feeds",
    "max_crawl_id",
    "query_problem",
    "query_words",
    "queue_stats",
    "search_feeds",
    "status_counts",
    "throttle_minutes",
    "troubled_feeds",
    "tsquery",
]

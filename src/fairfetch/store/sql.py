"""The SQLAlchemy Core store: one implementation for SQLite and PostgreSQL.

Only this package writes SQL. Reads are narrow (the columns a caller needs, keyset pagination for
streams) so the crawler never loads the whole directory.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa

from fairfetch.config import Settings
from fairfetch.errors import NotFoundError, StoreError
from fairfetch.store import migrate
from fairfetch.store.batch_write import write_batch
from fairfetch.store.engine import create_engine
from fairfetch.store.records import CrawlWrite, FeedRecord, WriteResult
from fairfetch.store.refusals import db_reason, refused, refusing
from fairfetch.store.tables import (
    author_links,
    authors,
    crawls,
    entries,
    feed_links,
    feeds,
    outages,
    redirects,
)

_CHUNK = 400  # bound IN (...) lists; PostgreSQL plans very long ones badly
_WRITE_ATTEMPTS = 3  # a crawl batch raced by another writer (see SqlStore.write)
#: PostgreSQL's deadlock_detected and serialization_failure: the transaction was chosen to
#: fail so that another could go on, and succeeds when run again.
_RETRIED = frozenset({"40P01", "40001"})


def _sqlstate(exc: sa.exc.DBAPIError) -> str | None:
    return getattr(exc.orig, "sqlstate", None)


log = logging.getLogger("fairfetch.store")

#: PostgreSQL databases already warned about in this process (one warning each, not one per
#: command of a long-running process that opens the store again).
_CTYPE_WARNED: set[str] = set()


def _check_pg_ctype(engine: sa.Engine, url: str) -> None:
    """PostgreSQL's text search reads letters and case by the database's LC_CTYPE: under C or
    POSIX nothing outside ASCII is a letter, so "Подкаст" or "Émile" is found by no spelling.
    Said once, naming the database and the fix; the store works either way."""
    masked = sa.make_url(url).render_as_string(hide_password=True)
    if masked in _CTYPE_WARNED:
        return
    try:
        with engine.connect() as conn:
            ctype = str(conn.exec_driver_sql("SHOW lc_ctype").scalar() or "")
    except sa.exc.DBAPIError:
        return  # gone again: the next operation says so, naming what it was doing
    if ctype.upper() in ("C", "POSIX"):
        _CTYPE_WARNED.add(masked)
        log.warning(
            "PostgreSQL database %s has LC_CTYPE=%s: its search finds no word with letters "
            "outside ASCII (Cyrillic, accented, Greek…). Create it with a UTF-8 ctype, e.g. "
            "`createdb --locale=C.UTF-8 --template=template0 NAME`, and copy the data over "
            "(pg_dump | psql)", masked, ctype,
        )


#: The ids a row can have (``feeds.id`` is a 32-bit INTEGER on PostgreSQL).
_ID_MIN, _ID_MAX = -(2**31), 2**31 - 1


def _latest_rows(
    conn: sa.Connection,
    table: sa.Table,
    feed_id: int,
    newest: sa.Column[Any],
    limit: int,
    *columns: sa.Column[Any],
) -> list[dict[str, Any]]:
    """A feed's latest ``limit`` rows of ``table`` (newest first, ties by id), as dicts."""
    return [
        dict(r)
        for r in conn.execute(
            sa.select(*columns)
            .where(table.c.feed_id == feed_id)
            .order_by(newest.desc(), table.c.id.desc())
            .limit(limit)
        ).mappings()
    ]


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _legacy_spellings(url: str) -> tuple[str, ...]:
    """How a feed URL given without a port may be stored: with its scheme's own port, as
    feeds added before the port was dropped (crawl/urls.normalize_feed_url) were."""
    scheme, sep, rest = url.partition("://")
    port = _DEFAULT_PORTS.get(scheme)
    if not sep or port is None:
        return ()
    host, slash, path = rest.partition("/")
    if not host or ":" in host.rpartition("]")[2]:
        return ()  # no host, or a port given
    return (f"{scheme}://{host}:{port}{slash}{path}",)


class SqlStore:
    """The store on SQLite (WAL) or PostgreSQL; schema migrated on open."""

    def __init__(self, url: str, *, migrate_schema: bool = True) -> None:
        self.url = url
        self.engine = create_engine(url)
        if migrate_schema:
            try:
                migrate.upgrade(self.engine)
            except sa.exc.DatabaseError as exc:  # OperationalError, and "file is not a database"
                masked = sa.make_url(url).render_as_string(hide_password=True)
                raise StoreError(f"database {masked!r}: cannot open ({db_reason(exc)})") from exc
            if self.engine.dialect.name == "postgresql":
                _check_pg_ctype(self.engine, url)  # after a migration: the server answers

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def close(self) -> None:
        self.engine.dispose()

    # --- feeds -----------------------------------------------------------------------------

    @refused("adding feed {url!r}")
    def add_feed(
        self, url: str, *, now: datetime, politeness_key: str, original_url: str | None = None
    ) -> tuple[FeedRecord, bool]:
        """Add a feed, due now. Returns (feed, created); an existing URL is not an error."""
        try:
            return self._add_feed(
                url, now=now, politeness_key=politeness_key, original_url=original_url
            )
        except sa.exc.IntegrityError:
            # Added concurrently by someone else between our look-up and our insert.
            return self.get_feed(url), False

    def _add_feed(
        self, url: str, *, now: datetime, politeness_key: str, original_url: str | None
    ) -> tuple[FeedRecord, bool]:
        with self.engine.begin() as conn:
            existing = self._find(conn, url)
            if existing is not None:
                return existing, False
            conn.execute(
                feeds.insert().values(
                    url=url,
                    original_url=original_url or url,
                    politeness_key=politeness_key,
                    status="new",
                    error_count=0,
                    added_at=now,
                    next_crawl_at=now,
                    kind_evidence=[],
                    categories=[],
                    hub_urls=[],
                )
            )
            found = self._find(conn, url)
            assert found is not None
            return found, True

    def _find(self, conn: sa.Connection, key: str | int) -> FeedRecord | None:
        if isinstance(key, int):
            if not _ID_MIN <= key <= _ID_MAX:
                return None  # no row has it: not the database's "integer out of range"
            row = conn.execute(sa.select(feeds).where(feeds.c.id == key)).mappings().first()
        else:
            row = None
            for spelling in (key, *_legacy_spellings(key)):
                row = conn.execute(
                    sa.select(feeds).where(feeds.c.url == spelling)
                ).mappings().first() or (
                    conn.execute(
                        sa.select(feeds)
                        .where(feeds.c.original_url == spelling)
                        .order_by(feeds.c.id)
                    )
                    .mappings()
                    .first()
                )
                if row is not None:
                    break
        return FeedRecord.from_row(row) if row is not None else None

    @refused("reading feed {key!r}")
    def get_feed(self, key: str | int) -> FeedRecord:
        """By id, current URL or the URL the user gave."""
        with self.engine.connect() as conn:
            found = self._find(conn, key)
        if found is None:
            raise NotFoundError(f"feed {key!r}")
        return found

    @refused("reading feed {key!r}")
    def find_feed(self, key: str | int) -> FeedRecord | None:
        with self.engine.connect() as conn:
            return self._find(conn, key)

    @refused("listing feeds")
    def list_feeds(
        self,
        *,
        kind: str | None = None,
        status: str | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[FeedRecord]:
        q = sa.select(feeds).order_by(feeds.c.id)
        if kind:
            q = q.where(feeds.c.kind == kind)
        if status:
            q = q.where(feeds.c.status == status)
        if limit is not None:
            q = q.limit(limit)
        if offset:
            q = q.offset(offset)
        with self.engine.connect() as conn:
            return [FeedRecord.from_row(r) for r in conn.execute(q).mappings()]

    @refused("listing feeds")
    def iter_feeds(self, *, batch: int = 1000) -> Iterator[FeedRecord]:
        last = 0
        while True:
            q = sa.select(feeds).where(feeds.c.id > last).order_by(feeds.c.id).limit(batch)
            with self.engine.connect() as conn:
                rows = [FeedRecord.from_row(r) for r in conn.execute(q).mappings()]
            if not rows:
                return
            yield from rows
            last = rows[-1].id

    def _due_clause(self, now: datetime, dead_probe_interval: float) -> sa.ColumnElement[bool]:
        probe_before = now - timedelta(seconds=dead_probe_interval)
        return sa.or_(
            sa.and_(feeds.c.status != "dead", feeds.c.next_crawl_at <= now),
            sa.and_(
                feeds.c.status == "dead",
                feeds.c.last_fetched_at <= probe_before,
                dead_probe_allowed(now),
            ),
        )

    def _oldest_due(
        self, conn: sa.Connection, now: datetime, dead_probe_interval: float
    ) -> datetime | None:
        """When the longest-waiting of the feeds ``count_due`` counts fell due: a dead feed's
        probe falls due ``dead_probe_interval`` after its last fetch, or, deferred (its key was
        paused), when the pause ended (its ``next_crawl_at``)."""
        probe = timedelta(seconds=dead_probe_interval)
        due_dead = sa.and_(feeds.c.status == "dead", self._due_clause(now, dead_probe_interval))
        alive, deferred, undeferred = conn.execute(
            sa.select(
                sa.select(sa.func.min(feeds.c.next_crawl_at))
                .where(feeds.c.status != "dead", feeds.c.next_crawl_at <= now)
                .scalar_subquery(),
                sa.select(sa.func.min(feeds.c.next_crawl_at))
                .where(due_dead, feeds.c.next_crawl_at.is_not(None))
                .scalar_subquery(),
                sa.select(sa.func.min(feeds.c.last_fetched_at))
                .where(due_dead, feeds.c.next_crawl_at.is_(None))
                .scalar_subquery(),
            )
        ).one()
        found = [t for t in (alive, deferred, undeferred and undeferred + probe) if t]
        return min(found) if found else None

    @refused("counting due feeds")
    def count_due(self, now: datetime, *, dead_probe_interval: float) -> int:
        q = sa.select(sa.func.count()).where(self._due_clause(now, dead_probe_interval))
        with self.engine.connect() as conn:
            return int(conn.execute(q).scalar_one())

    @refused("listing due feeds")
    def iter_due(
        self,
        now: datetime,
        *,
        dead_probe_interval: float,
        batch: int = 500,
        limit: int | None = None,
    ) -> Iterator[FeedRecord]:
        """Stream the feeds due at ``now`` in id order, a page at a time.

        Dead feeds have no ``next_crawl_at`` (DESIGN.md's table); they are due for their monthly
        probe when their last fetch is older than ``dead_probe_interval``.
        """
        last = 0
        seen = 0
        while limit is None or seen < limit:
            size = batch if limit is None else min(batch, limit - seen)
            q = (
                sa.select(feeds)
                .where(self._due_clause(now, dead_probe_interval), feeds.c.id > last)
                .order_by(feeds.c.id)
                .limit(size)
            )
            with self.engine.connect() as conn:
                rows = [FeedRecord.from_row(r) for r in conn.execute(q).mappings()]
            if not rows:
                return
            yield from rows
            seen += len(rows)
            last = rows[-1].id

    @refused("reading due feeds again")
    def recheck_due(
        self, read: Iterable[FeedRecord], now: datetime, *, dead_probe_interval: float
    ) -> tuple[dict[int, FeedRecord], set[int]]:
        """Of these feeds (read as due a moment ago): the rows still due at ``now``, as they
        are now, and the ids that still exist at all (due or not).

        A pass reads a page of due feeds before it claims their politeness keys; another pass
        may have crawled them in between, and a decision made on the row read before that
        would undo its result. Every crawl's write moves ``next_crawl_at``, so a row whose
        ``next_crawl_at`` is as it was read is unchanged and still due: only the others are
        read again (re-reading every row was a sixth of a pass's CPU on the 304 path)."""
        by_id = {f.id: f for f in read}
        ids = sorted(by_id)
        due: dict[int, FeedRecord] = {}
        alive: set[int] = set()
        changed: list[int] = []
        with self.engine.connect() as conn:
            for i in range(0, len(ids), _CHUNK):
                part = ids[i : i + _CHUNK]
                for fid, next_at in conn.execute(
                    sa.select(feeds.c.id, feeds.c.next_crawl_at).where(feeds.c.id.in_(part))
                ):
                    alive.add(fid)
                    if next_at == by_id[fid].next_crawl_at:
                        due[fid] = by_id[fid]
                    else:
                        changed.append(fid)
            for i in range(0, len(changed), _CHUNK):
                q = sa.select(feeds).where(
                    feeds.c.id.in_(changed[i : i + _CHUNK]),
                    self._due_clause(now, dead_probe_interval),
                )
                for row in conn.execute(q).mappings():
                    due[int(row["id"])] = FeedRecord.from_row(row)
        return due, alive

    @refused("marking feeds due")
    def set_due(self, feed_ids: Iterable[int], when: datetime) -> int:
        ids = list(feed_ids)
        n = 0
        with self.engine.begin() as conn:
            for i in range(0, len(ids), _CHUNK):
                n += conn.execute(
                    feeds.update()
                    .where(feeds.c.id.in_(ids[i : i + _CHUNK]))
                    .values(next_crawl_at=when)
                ).rowcount
        return n

    def delete_feed(self, key: str | int) -> FeedRecord:
        feed = self.get_feed(key)
        with refusing(f"removing feed {feed.url!r}"), self.engine.begin() as conn:
            conn.execute(feeds.delete().where(feeds.c.id == feed.id))
        return feed

    # --- crawl results ---------------------------------------------------------------------

    @refused(lambda call: _crawl_results(call["batch"]))
    def write(
        self, batch: Sequence[CrawlWrite], settings: Settings | None = None
    ) -> list[WriteResult]:
        """Apply crawl results in one transaction (entries, health, crawl rows, outbox).

        ``settings``: the writer's configuration, for the hooks that run in this transaction
        (the outbox's newness limits); without them the hooks read the environment.

        The batch reads which feeds still exist, their ``crawl_count`` (a result decided on an
        older row is decided again: batch_write._rebased) and which URLs are free, then writes
        on what it read: another process must not commit in between. On PostgreSQL the reads
        lock what they found. On SQLite the transaction begins IMMEDIATE, taking the write lock
        before the first read: the driver's own BEGIN, at the first INSERT, came after the
        reads, and a delete of another process (the web's, `feeds add`) committed in between
        failed the whole batch on a foreign key, or a `feeds refresh` of another process was
        undone by a result decided before it. An integrity error is still retried on SQLite
        (the transaction rolled back, the batch is simply written again); one that is not a
        race raises after the last attempt.

        On PostgreSQL two batches that share feeds (`feeds refresh --all` takes no claim, and
        writes beside a pass) lock those rows in id order, so the second waits for the first;
        a batch the server fails on a deadlock all the same (another transaction locking feeds
        in another order) is written again, once the other has committed."""
        for attempt in range(1, _WRITE_ATTEMPTS + 1):
            try:
                with self.engine.begin() as conn:
                    if self.dialect == "sqlite":
                        conn.exec_driver_sql("BEGIN IMMEDIATE")
                    return write_batch(conn, batch, settings)
            except sa.exc.IntegrityError:
                if self.dialect != "sqlite" or attempt == _WRITE_ATTEMPTS:
                    raise
            except sa.exc.DBAPIError as exc:
                if _sqlstate(exc) not in _RETRIED or attempt == _WRITE_ATTEMPTS:
                    raise
        raise AssertionError("unreachable")

    @refused("recording an outage")
    def record_outage(self, started_at: datetime, keys: int, detail: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(outages.insert().values(started_at=started_at, keys=keys, detail=detail))

    # --- reads for show / web --------------------------------------------------------------

    @refused("reading the details of feed {feed_id}")
    def feed_details(
        self, feed_id: int, *, crawl_limit: int = 20, entry_limit: int = 10
    ) -> dict[str, Any]:
        with self.engine.connect() as conn:
            hops = [
                dict(r)
                for r in conn.execute(
                    sa.select(redirects.c.url, redirects.c.status, redirects.c.location)
                    .where(redirects.c.feed_id == feed_id)
                    .order_by(redirects.c.hop)
                ).mappings()
            ]
            contacts = [
                dict(r)
                for r in conn.execute(
                    sa.select(feed_links.c.url, feed_links.c.network, feed_links.c.source)
                    .where(feed_links.c.feed_id == feed_id)
                    .order_by(feed_links.c.id)
                ).mappings()
            ]
            people = []
            for a in conn.execute(
                sa.select(authors).where(authors.c.feed_id == feed_id).order_by(authors.c.id)
            ).mappings():
                links = [
                    dict(r)
                    for r in conn.execute(
                        sa.select(author_links.c.url, author_links.c.network, author_links.c.source)
                        .where(author_links.c.author_id == a["id"])
                        .order_by(author_links.c.id)
                    ).mappings()
                ]
                people.append(
                    {
                        "name": a["name"] or None,
                        "email": a["email"] or None,
                        "url": a["url"] or None,
                        "source": a["source"],
                        "links": links,
                    }
                )
            recent = _latest_rows(
                conn, crawls, feed_id, crawls.c.at, crawl_limit,
                crawls.c.at, crawls.c.outcome, crawls.c.http_status, crawls.c.error_kind,
                crawls.c.error_detail, crawls.c.bytes, crawls.c.duration, crawls.c.new_entries,
                crawls.c.trigger,
            )  # fmt: skip
            latest = _latest_rows(
                conn, entries, feed_id, entries.c.first_seen_at, entry_limit,
                entries.c.entry_id, entries.c.title, entries.c.link, entries.c.published,
                entries.c.updated, entries.c.authors, entries.c.categories, entries.c.enclosures,
                entries.c.first_seen_at,
            )  # fmt: skip
        return {
            "redirects": hops, "contacts": contacts, "authors": people, "crawls": recent,
            "recent_entries": latest,
        }  # fmt: skip

    @refused("reading the entries of feed {feed_id}")
    def entries_of(self, feed_id: int, *, limit: int = 50) -> list[dict[str, Any]]:
        q = (
            sa.select(entries)
            .where(entries.c.feed_id == feed_id)
            .order_by(entries.c.first_seen_at.desc(), entries.c.id.desc())
            .limit(limit)
        )
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(q).mappings()]

    @refused("counting entries")
    def count_entries(self, feed_id: int | None = None) -> int:
        q = sa.select(sa.func.count()).select_from(entries)
        if feed_id is not None:
            q = q.where(entries.c.feed_id == feed_id)
        with self.engine.connect() as conn:
            return int(conn.execute(q).scalar_one())

    @refused("counting crawl outcomes")
    def crawl_outcomes_since(self, since: datetime) -> dict[str, int]:
        q = (
            sa.select(crawls.c.outcome, crawls.c.error_kind, sa.func.count())
            .where(crawls.c.at >= since)
            .group_by(crawls.c.outcome, crawls.c.error_kind)
        )
        out: dict[str, int] = {}
        with self.engine.connect() as conn:
            for outcome, kind, n in conn.execute(q):
                label = f"error:{kind}" if outcome == "error" and kind else outcome
                out[label] = out.get(label, 0) + int(n)
        return out

    @refused("reading the crawl statistics")
    def stats(self, now: datetime, *, dead_probe_interval: float) -> dict[str, Any]:
        """The crawlstats: outcomes in the last hour and day, throttles by key, the queue."""
        hour, day = now - timedelta(hours=1), now - timedelta(days=1)
        with self.engine.connect() as conn:
            by_status: dict[str, int] = {
                status: int(n)
                for status, n in conn.execute(
                    sa.select(feeds.c.status, sa.func.count()).group_by(feeds.c.status)
                )
            }
            by_kind: dict[str, int] = {}
            for kind, n in conn.execute(
                sa.select(feeds.c.kind, sa.func.count()).group_by(feeds.c.kind)
            ):
                by_kind[kind or "unknown"] = by_kind.get(kind or "unknown", 0) + int(n)
            throttles = [
                {"key": k, "throttles": int(n)}
                for k, n in conn.execute(
                    sa.select(crawls.c.politeness_key, sa.func.count())
                    .where(crawls.c.at >= day, crawls.c.outcome == "throttled")
                    .group_by(crawls.c.politeness_key)
                    # ties by name, as /crawlstats breaks them (web/stats.py): the same 20 keys
                    .order_by(sa.func.count().desc(), crawls.c.politeness_key)
                    .limit(20)
                )
            ]
            bytes_hour, bytes_day = conn.execute(
                sa.select(
                    sa.func.coalesce(
                        sa.func.sum(sa.case((crawls.c.at >= hour, crawls.c.bytes), else_=0)), 0
                    ),
                    sa.func.coalesce(sa.func.sum(crawls.c.bytes), 0),
                ).where(crawls.c.at >= day)
            ).one()
            oldest_due = self._oldest_due(conn, now, dead_probe_interval)
            next_hour = conn.execute(
                sa.select(sa.func.count()).where(
                    feeds.c.status != "dead",
                    feeds.c.next_crawl_at > now,
                    feeds.c.next_crawl_at <= now + timedelta(hours=1),
                )
            ).scalar_one()
            entries_total = conn.execute(
                sa.select(sa.func.count()).select_from(entries)
            ).scalar_one()
        return {
            "generated_at": now,
            "feeds": {
                "total": int(sum(by_status.values())),
                "by_status": {k: int(v) for k, v in by_status.items()},
                "by_kind": {k: int(v) for k, v in by_kind.items()},
            },
            "entries": int(entries_total),
            "crawls": {
                "last_hour": self.crawl_outcomes_since(hour),
                "last_day": self.crawl_outcomes_since(day),
            },
            "bytes": {"last_hour": int(bytes_hour), "last_day": int(bytes_day)},
            "throttles_by_key": throttles,
            "queue": {
                "due": self.count_due(now, dead_probe_interval=dead_probe_interval),
                "oldest_due_at": oldest_due,
                "next_hour": int(next_hour),
            },
        }


def _crawl_results(batch: Sequence[CrawlWrite]) -> str:
    """What a refused write was writing: the feeds named, a few of them for a large batch."""
    urls = [repr(w.url) for w in batch]
    shown = ", ".join(urls[:3]) + (f" and {len(urls) - 3} more" if len(urls) > 3 else "")
    return f"writing {len(urls)} crawl result{'' if len(urls) == 1 else 's'} ({shown})"


def dead_probe_allowed(now: datetime) -> sa.ColumnElement[bool]:
    """Whether a dead feed's monthly probe may start now. A dead feed has no ``next_crawl_at``
    of its own; one is set only when its probe was throttled or deferred (Retry-After, a paused
    key), and a throttle leaves ``last_fetched_at`` as it was, so without this the probe was
    due again at once, every pass, whatever the server asked."""
    return sa.or_(feeds.c.next_crawl_at.is_(None), feeds.c.next_crawl_at <= now)


def dumps(value: Any) -> str:
    """JSON with datetimes as ISO 8601 UTC (``Z``), for --json outputs."""

    def default(o: Any) -> Any:
        if isinstance(o, datetime):
            aware = o if o.tzinfo is not None else o.replace(tzinfo=UTC)
            return aware.astimezone(UTC).isoformat().replace("+00:00", "Z")
        raise TypeError(type(o).__name__)

    return json.dumps(value, default=default, indent=2, ensure_ascii=False)

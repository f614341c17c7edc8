"""The SQLAlchemy Core store: one implementation for SQLite and PostgreSQL.

Only this package writes SQL. Reads are narrow (the columns a caller needs, keyset pagination for
streams) so the crawler never loads the whole directory.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from fairfetch.errors import FeedError, NotFoundError
from fairfetch.feeds.model import Entry
from fairfetch.store import migrate
from fairfetch.store.engine import create_engine
from fairfetch.store.hooks import run_new_entries_hooks
from fairfetch.store.records import CrawlWrite, FeedRecord, WriteResult
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

_CHUNK = 400  # bound the IN (...) lists: SQLite's default limit on bound parameters is generous
# but PostgreSQL plans large IN lists badly.


def entry_hash(e: Entry) -> str:
    """What makes an entry "changed" for us: the fields a reader sees."""
    h = hashlib.blake2b(digest_size=16)
    for part in (e.title, e.link, e.summary, e.content, e.published, e.updated):
        h.update(repr(part).encode("utf-8", "replace"))
        h.update(b"\x00")
    for enc in e.enclosures:
        h.update(repr((enc.url, enc.type, enc.length)).encode("utf-8", "replace"))
    return h.hexdigest()


def _entry_row(e: Entry) -> dict[str, Any]:
    return {
        "title": e.title,
        "link": e.link,
        "published": e.published,
        "updated": e.updated,
        "summary": e.summary,
        "content": e.content,
        "authors": [asdict(p) for p in e.authors],
        "categories": list(e.categories),
        "enclosures": [asdict(x) for x in e.enclosures],
        "image_url": e.image_url,
        "content_hash": entry_hash(e),
    }


def link_row(url: str, network: str | None, source: str | None) -> dict[str, str]:
    """The one bind site for contact and author links.

    ``source`` and ``network`` are not-null columns: a remote database driver will refuse a
    missing value outright (the incident in seeds/000), so they get their default here, where no
    caller can bypass it.
    """
    return {"url": url, "network": network or "web", "source": source or "unknown"}


class SqlStore:
    """The store on SQLite (WAL) or PostgreSQL; schema migrated on open."""

    def __init__(self, url: str, *, migrate_schema: bool = True) -> None:
        self.url = url
        self.engine = create_engine(url)
        if migrate_schema:
            migrate.upgrade(self.engine)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def close(self) -> None:
        self.engine.dispose()

    # --- feeds -----------------------------------------------------------------------------

    def add_feed(
        self, url: str, *, now: datetime, politeness_key: str, original_url: str | None = None
    ) -> tuple[FeedRecord, bool]:
        """Add a feed, due now. Returns (feed, created); an existing URL is not an error."""
        try:
            return self._add_feed(url, now=now, politeness_key=politeness_key,
                                  original_url=original_url)
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
            row = conn.execute(sa.select(feeds).where(feeds.c.id == key)).mappings().first()
        else:
            row = conn.execute(sa.select(feeds).where(feeds.c.url == key)).mappings().first()
            if row is None:
                row = (
                    conn.execute(
                        sa.select(feeds).where(feeds.c.original_url == key).order_by(feeds.c.id)
                    )
                    .mappings()
                    .first()
                )
        return FeedRecord.from_row(row) if row is not None else None

    def get_feed(self, key: str | int) -> FeedRecord:
        """By id, current URL or the URL the user gave."""
        with self.engine.connect() as conn:
            found = self._find(conn, key)
        if found is None:
            raise NotFoundError(f"feed {key!r}")
        return found

    def find_feed(self, key: str | int) -> FeedRecord | None:
        with self.engine.connect() as conn:
            return self._find(conn, key)

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
            sa.and_(feeds.c.status == "dead", feeds.c.last_fetched_at <= probe_before),
        )

    def count_due(self, now: datetime, *, dead_probe_interval: float) -> int:
        q = sa.select(sa.func.count()).where(self._due_clause(now, dead_probe_interval))
        with self.engine.connect() as conn:
            return int(conn.execute(q).scalar_one())

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
        with self.engine.begin() as conn:
            conn.execute(feeds.delete().where(feeds.c.id == feed.id))
        return feed

    # --- crawl results ---------------------------------------------------------------------

    def write(self, batch: Sequence[CrawlWrite]) -> list[WriteResult]:
        """Apply crawl results in one transaction (entries, health, crawl row, outbox)."""
        results: list[WriteResult] = []
        with self.engine.begin() as conn:
            for w in batch:
                results.append(self._write_one(conn, w))
        return results

    def _write_one(self, conn: sa.Connection, w: CrawlWrite) -> WriteResult:
        changes = dict(w.feed_changes)
        moved_to: str | None = None
        new_url = changes.pop("url", None)
        if new_url is not None:
            taken = conn.execute(
                sa.select(feeds.c.id).where(feeds.c.url == new_url, feeds.c.id != w.feed_id)
            ).first()
            if taken is None:
                changes["url"] = new_url
                moved_to = new_url
        new_ids: list[int] = []
        newest: datetime | None = None
        if w.entries:
            new_ids, newest = self._upsert_entries(conn, w.feed_id, w.entries, w.at)
        if new_ids:
            changes["entry_count"] = feeds.c.entry_count + len(new_ids)
        if newest is not None:
            changes["newest_entry_at"] = sa.case(
                (feeds.c.newest_entry_at.is_(None), newest),
                (feeds.c.newest_entry_at < newest, newest),
                else_=feeds.c.newest_entry_at,
            )
        if w.outcome in ("ok", "not_modified", "error"):
            changes["crawl_count"] = feeds.c.crawl_count + 1
        if changes:
            conn.execute(feeds.update().where(feeds.c.id == w.feed_id).values(**changes))
        if w.hops is not None:
            conn.execute(redirects.delete().where(redirects.c.feed_id == w.feed_id))
            if w.hops:
                conn.execute(
                    redirects.insert(),
                    [
                        {
                            "feed_id": w.feed_id,
                            "hop": i,
                            "url": h.url,
                            "status": h.status,
                            "location": h.location,
                            "seen_at": w.at,
                        }
                        for i, h in enumerate(w.hops)
                    ],
                )
        if w.contacts is not None:
            self._replace_contacts(conn, w.feed_id, w)
        if w.authors is not None:
            self._replace_authors(conn, w.feed_id, w)
        conn.execute(
            crawls.insert().values(
                feed_id=w.feed_id,
                url=w.url,
                at=w.at,
                outcome=w.outcome,
                http_status=w.http_status,
                error_kind=w.error_kind,
                error_detail=(w.error_detail or None),
                bytes=w.bytes,
                duration=w.duration,
                politeness_key=w.politeness_key or "",
                new_entries=len(new_ids),
                trigger=w.trigger or "poll",
            )
        )
        if new_ids:
            run_new_entries_hooks(conn, w.feed_id, new_ids, w.at, w.first_crawl)
        return WriteResult(feed_id=w.feed_id, new_entries=len(new_ids), moved_to=moved_to)

    def _upsert_entries(
        self, conn: sa.Connection, feed_id: int, batch: Sequence[Entry], now: datetime
    ) -> tuple[list[int], datetime | None]:
        """Insert new entries, update changed ones; returns the new rows' ids and newest date.

        Identity is (feed, entry id): a feed that reorders or republishes creates no duplicates,
        and an entry listed twice in one document is stored once.
        """
        unique: dict[str, Entry] = {}
        for e in batch:
            if e.id and e.id not in unique:
                unique[e.id] = e
        ids = list(unique)
        existing: dict[str, tuple[int, str]] = {}
        for i in range(0, len(ids), _CHUNK):
            part = ids[i : i + _CHUNK]
            for row in conn.execute(
                sa.select(entries.c.entry_id, entries.c.id, entries.c.content_hash).where(
                    entries.c.feed_id == feed_id, entries.c.entry_id.in_(part)
                )
            ):
                existing[row.entry_id] = (row.id, row.content_hash)
        inserts: list[dict[str, Any]] = []
        newest: datetime | None = None
        for eid, e in unique.items():
            when = e.published or e.updated
            if when is not None and (newest is None or when > newest):
                newest = when
            row = _entry_row(e)
            if eid not in existing:
                row.update(feed_id=feed_id, entry_id=eid, first_seen_at=now, last_seen_at=now)
                inserts.append(row)
            elif existing[eid][1] != row["content_hash"]:
                row["last_seen_at"] = now
                conn.execute(entries.update().where(entries.c.id == existing[eid][0]).values(row))
        new_ids: list[int] = []
        if inserts:
            conn.execute(entries.insert(), inserts)
            new_keys = [r["entry_id"] for r in inserts]
            for i in range(0, len(new_keys), _CHUNK):
                part = new_keys[i : i + _CHUNK]
                new_ids.extend(
                    r.id
                    for r in conn.execute(
                        sa.select(entries.c.id).where(
                            entries.c.feed_id == feed_id, entries.c.entry_id.in_(part)
                        )
                    )
                )
        return sorted(new_ids), newest

    def _replace_contacts(self, conn: sa.Connection, feed_id: int, w: CrawlWrite) -> None:
        conn.execute(feed_links.delete().where(feed_links.c.feed_id == feed_id))
        rows: dict[str, dict[str, Any]] = {}
        for c in w.contacts or ():
            if c.url and c.url not in rows:
                rows[c.url] = {"feed_id": feed_id, **link_row(c.url, c.network, c.source)}
        if rows:
            conn.execute(feed_links.insert(), list(rows.values()))

    def _replace_authors(self, conn: sa.Connection, feed_id: int, w: CrawlWrite) -> None:
        conn.execute(authors.delete().where(authors.c.feed_id == feed_id))
        seen: set[tuple[str, str, str]] = set()
        for person, source in w.authors or ():
            key = (person.name or "", person.email or "", person.url or "")
            if key in seen or key == ("", "", ""):
                continue
            seen.add(key)
            author_id = conn.execute(
                authors.insert()
                .values(
                    feed_id=feed_id,
                    name=key[0],
                    email=key[1],
                    url=key[2],
                    source=source or "unknown",
                )
                .returning(authors.c.id)
            ).scalar_one()
            links = []
            if person.email:
                links.append(link_row("mailto:" + person.email, "email", source))
            if person.url:
                links.append(link_row(person.url, "web", source))
            if links:
                conn.execute(author_links.insert(), [{"author_id": author_id, **x} for x in links])

    def record_outage(self, started_at: datetime, keys: int, detail: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(outages.insert().values(started_at=started_at, keys=keys, detail=detail))

    # --- reads for show / web --------------------------------------------------------------

    def feed_details(self, feed_id: int, *, crawl_limit: int = 20) -> dict[str, Any]:
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
            recent = [
                dict(r)
                for r in conn.execute(
                    sa.select(
                        crawls.c.at,
                        crawls.c.outcome,
                        crawls.c.http_status,
                        crawls.c.error_kind,
                        crawls.c.error_detail,
                        crawls.c.bytes,
                        crawls.c.duration,
                        crawls.c.new_entries,
                        crawls.c.trigger,
                    )
                    .where(crawls.c.feed_id == feed_id)
                    .order_by(crawls.c.at.desc(), crawls.c.id.desc())
                    .limit(crawl_limit)
                ).mappings()
            ]
        return {"redirects": hops, "contacts": contacts, "authors": people, "crawls": recent}

    def entries_of(self, feed_id: int, *, limit: int = 50) -> list[dict[str, Any]]:
        q = (
            sa.select(entries)
            .where(entries.c.feed_id == feed_id)
            .order_by(entries.c.first_seen_at.desc(), entries.c.id.desc())
            .limit(limit)
        )
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(q).mappings()]

    def count_entries(self, feed_id: int | None = None) -> int:
        q = sa.select(sa.func.count()).select_from(entries)
        if feed_id is not None:
            q = q.where(entries.c.feed_id == feed_id)
        with self.engine.connect() as conn:
            return int(conn.execute(q).scalar_one())

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

    def stats(self, now: datetime, *, dead_probe_interval: float) -> dict[str, Any]:
        """The crawlstats: outcomes in the last hour and day, throttles by key, the queue."""
        hour, day = now - timedelta(hours=1), now - timedelta(days=1)
        with self.engine.connect() as conn:
            by_status = dict(
                conn.execute(
                    sa.select(feeds.c.status, sa.func.count()).group_by(feeds.c.status)
                ).all()
            )
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
                    .order_by(sa.func.count().desc())
                    .limit(20)
                )
            ]
            bytes_hour, bytes_day = (
                conn.execute(
                    sa.select(
                        sa.func.coalesce(
                            sa.func.sum(sa.case((crawls.c.at >= hour, crawls.c.bytes), else_=0)), 0
                        ),
                        sa.func.coalesce(sa.func.sum(crawls.c.bytes), 0),
                    ).where(crawls.c.at >= day)
                ).one()
            )
            oldest_due = conn.execute(
                sa.select(sa.func.min(feeds.c.next_crawl_at)).where(
                    feeds.c.status != "dead", feeds.c.next_crawl_at <= now
                )
            ).scalar_one()
            next_hour = conn.execute(
                sa.select(sa.func.count()).where(
                    feeds.c.status != "dead",
                    feeds.c.next_crawl_at > now,
                    feeds.c.next_crawl_at <= now + timedelta(hours=1),
                )
            ).scalar_one()
            entries_total = conn.execute(sa.select(sa.func.count()).select_from(entries)).scalar_one()
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


def dumps(value: Any) -> str:
    """JSON with datetimes as ISO 8601 UTC (``Z``), for --json outputs."""

    def default(o: Any) -> Any:
        if isinstance(o, datetime):
            return o.isoformat().replace("+00:00", "Z")
        raise TypeError(type(o).__name__)

    return json.dumps(value, default=default, indent=2, ensure_ascii=False)
